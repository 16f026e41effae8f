"""Default paged decode schedule (untimed: spill-free, not ranked by a model or a GPU yet):

  waves, frags_q, q_in, prefetch: default_table.TABLE, the first spill-free candidate per
      (family, head dim, fp8 cache, 1 / 2 / 4 blocks of 16 packed rows) in sweep_defaults.py's
      order: fewest waves x blocks covering the rows, Q in registers before LDS, prefetch before
      none. Waves beyond the rows' need share the tile copy (fewer staging registers per lane)
      and run their WMMAs on padding rows, which a memory-bound decode can afford;
  block_n 16 (vLLM's default block_size; every block size is a multiple), load_bits 128;
  split_kv (split_for): enough workgroups to fill the GPU. A call launches batch x kv heads x
      row tiles x split workgroups of `waves` waves (kernel.py: one per (sequence, kv head, row
      tile, split)); the split is the smallest split_kv value whose waves reach
      FILL_WAVES_PER_SIMD on every SIMD of the target (Target.cus [SPEC] x Target.simds_per_cu
      [ISA3], targets.py), at most 64 (the knob's largest) and at most one per MIN_SPLIT_KEYS
      cache positions (max_blocks * block_size). The cap was 16 until issue 38: at batch 1 with 8
      kv heads that is 128 one-wave workgroups on gfx1100's 192 SIMDs, and an fp8 cache (half the
      bytes, widened in registers) became 'latency' limited at 1.18x the f16 cache's model time
      (32 / 64 splits: 1.86x / 1.95x, results/paged_attention_table.md, source = model). Decode has few (sequence, kv head) pairs at
      small batch, so the key range is what spreads over the GPU; the combine is deterministic.
      Prefill chunks (more than 64 packed rows) have row tiles enough: no split. Without the
      batch / kv heads, or on a target whose CU count is not public, one split per SPLIT_KEYS
      positions, at most 16 (the capacity-only rule, as before the cap grew).
      FILL_WAVES_PER_SIMD and MIN_SPLIT_KEYS are choices, not hardware facts: 4 resident waves
      per SIMD keep loads in flight while others compute (at 2, the model -- source = model --
      ranked the fp8-cache decode at batch 8-32 up to 2.4x slower than the capacity-only rule;
      at 4 no decode step of bench/paged_attention_table.py is slower, results/
      paged_attention_table.md), and 4 key tiles of 16 per split still run the loop several
      times. Under the loop model with per-CU residency (model/loop_kernel.py) the model ranks only
      gfx1100 hd64 chunk steps (Sq 16, context 8208, batch 16) below the capacity-only split
      (0.89x, results/paged_sweeps.md); the shipped files cover those buckets. The combine
      kernel, which grows with the split, is not modelled.
fp8_wmma (gfx12): the fp8-cache entry with Q^T in registers (its E4M3 fragments are D/8 VGPRs
      and the K/V LDS tiles bytes, so the entry's VGPR and LDS needs only shrink;
      tests/compile/test_paged_fp8_wmma_compile.py checks them spill-free).
"""
from __future__ import annotations

from ...errors import ScheduleError
from ...targets import Target, get_target
from .default_table import TABLE
from .schedule import SPACE, PagedSchedule

SPLITS = dict((k.name, k.domain) for k in SPACE)["split_kv"]
FILL_WAVES_PER_SIMD = 4
MIN_SPLIT_KEYS = 64      # 4 key tiles of 16 (block_n) per split at least
SPLIT_KEYS = 512         # the capacity-only rule: one split per 512 positions,
CAPACITY_MAX_SPLIT = 16  # at most 16 of them (its cap before issue 38)
MAX_SPLIT_ROWS = 64      # more packed rows per (sequence, kv head): a prefill chunk, no split


def _at_most(n: int) -> int:
    return max(x for x in SPLITS if x <= max(1, n))


def split_for(t: Target, waves: int, frags_q: int, group_rows: int, capacity: int, pairs: int | None) -> int:
    """split_kv for `pairs` (sequence, kv head) pairs of `group_rows` packed rows each and
    sequences of up to `capacity` keys, on target t with `waves` x `frags_q` 16-row blocks per
    workgroup (module doc). pairs None (unknown) or an unknown CU count: the capacity-only rule."""
    if group_rows > MAX_SPLIT_ROWS:
        return 1
    if pairs is None or t.cus is None:
        return _at_most(min(capacity // SPLIT_KEYS, CAPACITY_MAX_SPLIT))
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise ScheduleError("batch x kv_heads", pairs, "a positive integer ((sequence, kv head) pairs)")
    row_tiles = -(-max(group_rows, 1) // (16 * waves * frags_q))
    want = FILL_WAVES_PER_SIMD * t.simds_per_cu * t.cus           # waves that fill every SIMD
    need = -(-want // (pairs * row_tiles * waves))                 # splits that launch that many
    split = min((x for x in SPLITS if x >= need), default=max(SPLITS))
    return min(split, _at_most(capacity // MIN_SPLIT_KEYS))


def default_schedule(d, arch: str, group_rows: int = 16, capacity: int = 0, *, batch: int | None = None,
                     kv_heads: int | None = None) -> PagedSchedule:
    """The table's schedule for d on arch with `group_rows` packed rows per (sequence, kv head),
    sequences of up to `capacity` keys, and `batch` sequences x `kv_heads` kv heads (module
    doc); more than 4 blocks of rows take the 4-block entry and more row tiles."""
    t = get_target(arch)
    blocks = -(-max(group_rows, 1) // 16)
    bucket = 1 if blocks == 1 else (2 if blocks == 2 else 4)
    knobs = TABLE[(t.family, d.head_dim, d.fp8, bucket)]
    if d.fp8_wmma:
        knobs = {**knobs, "q_in": "regs"}
    pairs = None if batch is None or kv_heads is None else batch * kv_heads
    split = split_for(t, knobs["waves"], knobs["frags_q"], group_rows, capacity, pairs)
    return PagedSchedule(block_n=16, load_bits=128, split_kv=split, **knobs).validate(d, t)
