"""Default paged decode schedule (untimed: spill-free, not ranked by a model or a GPU yet):

  waves, frags_q, q_in, prefetch: default_table.TABLE, the first spill-free candidate per
      (family, head dim, fp8 cache, 1 / 2 / 4 blocks of 16 packed rows) in sweep_defaults.py's
      order: fewest waves x blocks covering the rows, Q in registers before LDS, prefetch before
      none. Waves beyond the rows' need share the tile copy (fewer staging registers per lane)
      and run their WMMAs on padding rows, which a memory-bound decode can afford;
  block_n 16 (vLLM's default block_size; every block size is a multiple), load_bits 128;
  split_kv: about one split per 512 cache positions a sequence can hold (max_blocks *
      block_size), at most 16 -- decode has few (sequence, kv head) workgroups, so the key
      range is what spreads over the GPU; the combine is deterministic. Prefill chunks (more
      than 64 packed rows) have row tiles enough: no split.
fp8_wmma (gfx12): the fp8-cache entry with Q^T in registers (its E4M3 fragments are D/8 VGPRs
      and the K/V LDS tiles bytes, so the entry's VGPR and LDS needs only shrink;
      tests/compile/test_paged_fp8_wmma_compile.py checks them spill-free).
"""
from __future__ import annotations

from ...targets import get_target
from .default_table import TABLE
from .schedule import SPACE, PagedSchedule

SPLIT_KEYS = 512
SPLITS = dict((k.name, k.domain) for k in SPACE)["split_kv"]


def default_schedule(d, arch: str, group_rows: int = 16, capacity: int = 0) -> PagedSchedule:
    """The table's schedule for d on arch with `group_rows` packed rows per (sequence, kv head)
    and sequences of up to `capacity` keys (module doc); more than 4 blocks of rows take the
    4-block entry and more row tiles."""
    t = get_target(arch)
    blocks = -(-max(group_rows, 1) // 16)
    bucket = 1 if blocks == 1 else (2 if blocks == 2 else 4)
    split = max(x for x in SPLITS if x <= max(1, capacity // SPLIT_KEYS)) if group_rows <= 64 else 1
    knobs = TABLE[(t.family, d.head_dim, d.fp8, bucket)]
    if d.fp8_wmma:
        knobs = {**knobs, "q_in": "regs"}
    return PagedSchedule(block_n=16, load_bits=128, split_kv=split, **knobs).validate(d, t)
