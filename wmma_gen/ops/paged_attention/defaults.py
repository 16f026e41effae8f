"""Default paged decode schedule, a rule (no sweep has run for this op yet -- untuned):

  waves x frags_q: enough 16-row blocks for the packed rows (kv_group * Sq), one wave per block
      up to 4 waves, then two blocks per wave (a decode workgroup's work is its K/V tile reads,
      shared by all of its rows);
  block_n: 32 when the cache block allows it (16 otherwise), lowered to 16 when the VGPR
      estimate or LDS would not fit (large head dims); then more waves than rows need (the
      extra waves share the tile copy, halving each lane's staging registers; their WMMAs run
      on padding rows, which a memory-bound decode can afford);
  split_kv: about one split per 512 cache positions a sequence can hold (max_blocks *
      block_size), at most 16 -- decode has few (sequence, kv head) workgroups, so the key
      range is what spreads over the GPU; the combine is deterministic. Prefill chunks (more
      than 64 packed rows) have row tiles enough: no split.
"""
from __future__ import annotations

from ...targets import get_target
from .schedule import SPACE, PagedSchedule

SPLIT_KEYS = 512
SPLITS = dict((k.name, k.domain) for k in SPACE)["split_kv"]


def default_schedule(d, arch: str, group_rows: int = 16, capacity: int = 0) -> PagedSchedule:
    t = get_target(arch)
    blocks = -(-max(group_rows, 1) // 16)
    split = max(x for x in SPLITS if x <= max(1, capacity // SPLIT_KEYS)) if group_rows <= 64 else 1
    shapes = [(w, f) for f in (1, 2) for w in (1, 2, 4) if w * f >= min(blocks, 8)]
    for q_in, prefetch in (("regs", True), ("lds", True), ("lds", False)):
        for waves, frags in shapes:
            for block_n in (32, 16):
                for load_bits in (128, 64, 32):
                    s = PagedSchedule(block_n=block_n, waves=waves, frags_q=frags, load_bits=load_bits,
                                      split_kv=split, prefetch=prefetch, q_in=q_in)
                    if not s.problems(d, t):
                        return s
    return s.validate(d, t)   # raises, naming the failing check
