"""Which keys each query sees, at run time: per-query bands, the workgroup's key-tile range
(tiles wholly outside every band are skipped), and the -inf mask of boundary tiles.

The rule itself (off = Sk - Sq, causal, window, keys >= Sk never count) is
kernels/attention_mask.py, shared with the backward; this file applies it to the forward's
context.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...kernels import attention_mask as am
from ...kernels import irb, lanes
from ...kernels.irb import iadd
from . import softmax

if TYPE_CHECKING:
    from .context import AttentionCtx


def visibility(c: "AttentionCtx") -> am.Visibility:
    """The directive's masks with this kernel's run-time window sides."""
    if c.d.window:
        return am.Visibility(c.d.causal, True, c.sc["window_left"], c.sc["window_right"])
    return am.Visibility(c.d.causal, False)


def key_bounds(c: "AttentionCtx", i):
    """(lo, hi) visible keys of query i (hi < lo: none), per the directive's masks."""
    return am.key_bounds(visibility(c), i, c.seq_q, c.seq_k)


def tile_range(c: "AttentionCtx"):
    """[first, end) key offsets (multiples of BLOCK_N) this workgroup visits, and the range
    [full_lo, full_hi] of keys every valid query of the workgroup sees (no mask needed)."""
    return am.key_tile_span(visibility(c), c.q0, c.s.block_m, c.seq_q, c.seq_k, c.s.block_n,
                            c.s.split_kv, c.split)


def lane_band(c: "AttentionCtx", f: int):
    """(lo, count) of the lane's query in block f: its visible keys are lo .. lo + count - 1
    (count 0: none)."""
    return am.key_band(visibility(c), c.query(f), c.seq_q, c.seq_k)


def masked(c: "AttentionCtx", s_acc: list, n0, first, bands) -> list:
    """S^T with -inf outside each lane's band (mask_tile), for every f and key tile. The tile
    at n0 was read from key `first` <= n0 on (main_loop.tile_first: the last tile shifted to end
    at the sequence end), so its keys are first + row, and keys below n0 (seen in the previous
    tile) are invisible too: the band's start is raised by t = max(n0 - lo, 0) and its count
    lowered by t (to no less than 0)."""
    out = []
    for f, (lo, count) in enumerate(bands):
        rel = irb.sub(iadd(first, lanes.acc_row0(c.lane)), lo)
        out.append([softmax.mask_tile(x, rel, count, kt, irb.sub(n0, lo)) for kt, x in enumerate(s_acc[f])])
    return out
