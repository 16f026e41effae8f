"""Default backward schedules per (WMMA family, head_dim): spill-free on gfx1100, gfx1151 and
gfx1201 at head_dim 64 and 128 (tests/compile/test_attention_bwd_quality.py checks it).

Rules behind the table: every wave owns one 16-key (dK/dV) or 16-query (dQ) slice; the f32
accumulators take 8 VGPRs per 16x16 tile, i.e. 2 * (D/16/d_split) * 8 for dK and dV. Up to
hd128 no head-dim split is needed (block_m / dq_block_n shrink instead: every WMMA is useful
work); hd256 splits the head dimension across waves (d_split: each such wave recomputes S
and dP, so part of its WMMAs are redundant). block_m and dq_block_n keep the streamed LDS
tiles inside 64 KiB. tests/compile/test_attention_bwd_quality.py checks spills and density.
"""
from __future__ import annotations

from ...targets import get_target
from .schedule import AttentionBwdSchedule

S = AttentionBwdSchedule
_HD128 = S(block_m=16, block_n=64, waves=4, dq_block_m=64, dq_block_n=16, dq_waves=4)
_TABLE: dict[tuple[str, int], AttentionBwdSchedule] = {
    ("gfx11", 32): S(block_m=64, block_n=64, waves=4, dq_block_m=64, dq_block_n=64, dq_waves=4),
    ("gfx11", 64): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx11", 80): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx11", 96): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx11", 128): _HD128,
    ("gfx11", 256): S(block_m=16, block_n=16, waves=2, d_split=2, dq_block_m=32, dq_block_n=16, dq_waves=4,
                      dq_d_split=2),
    ("gfx12", 32): S(block_m=64, block_n=64, waves=4, dq_block_m=64, dq_block_n=64, dq_waves=4),
    ("gfx12", 64): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx12", 80): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx12", 96): S(block_m=16, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx12", 128): _HD128,
    ("gfx12", 256): S(block_m=16, block_n=16, waves=4, d_split=4, dq_block_m=32, dq_block_n=16, dq_waves=4,
                      dq_d_split=2),
}


def default_schedule(arch: str, head_dim: int) -> AttentionBwdSchedule:
    return _TABLE[(get_target(arch).family, head_dim)]
