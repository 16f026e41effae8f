"""Which keys each query sees, at run time: per-query bands, the workgroup's key-tile range
(tiles wholly outside every band are skipped), and the -inf mask of boundary tiles.

Conventions (directive.py): off = Sk - Sq aligns queries bottom-right; causal keeps
j <= i + off; window (left, right) keeps i + off - left <= j <= i + off + right, where a
negative size is unbounded; keys >= Sk never count.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...compiler.mlir_api import arith

from ...kernels import attention_blocks as ab
from ...kernels import irb
from ...kernels.attention_blocks import iadd, imax, imin, imul
from . import softmax

if TYPE_CHECKING:
    from .kernel import Ctx

BIG = 1 << 30


def key_bounds(c: "Ctx", i):
    """(lo, hi) visible keys of query i (hi < lo: none), per the directive's masks."""
    off = irb.sub(c.seq_k, c.seq_q)
    diag = iadd(i, off)
    hi = irb.sub(c.seq_k, 1)
    lo = irb.c(0)
    if c.d.causal:
        hi = imin(hi, diag)
    if c.d.window:
        left, right = c.sc["window_left"], c.sc["window_right"]
        neg = lambda v: arith.CmpIOp(arith.CmpIPredicate.slt, v, irb.c(0)).result
        hi = imin(hi, irb.add(diag, irb.select(neg(right), irb.c(BIG), right)))
        lo = imax(lo, irb.sub(diag, irb.select(neg(left), irb.c(BIG), left)))
    return lo, hi


def tile_range(c: "Ctx"):
    """[first, end) key offsets (multiples of BLOCK_N) this workgroup visits, and the range
    [full_lo, full_hi] of keys every valid query of the workgroup sees (no mask needed)."""
    bn = c.s.block_n
    q_last = irb.sub(imin(iadd(c.q0, c.s.block_m), c.seq_q), 1)
    lo_first, hi_first = key_bounds(c, c.q0)
    lo_last, hi_last = key_bounds(c, q_last)
    start = imul(irb.div(lo_first, bn), bn)
    end = imul(irb.div(iadd(imax(iadd(hi_last, 1), lo_first), bn - 1), bn), bn)
    end = imax(end, start)
    if c.s.split_kv > 1:
        per = imul(irb.div(iadd(irb.div(irb.sub(end, start), bn), c.s.split_kv - 1), c.s.split_kv), bn)
        start = imin(iadd(start, imul(c.split, per)), end)
        end = imin(iadd(start, per), end)
    return start, end, lo_last, hi_first


def lane_band(c: "Ctx", f: int):
    """(lo, count) of the lane's query in block f: its visible keys are lo .. lo + count - 1
    (count 0: none)."""
    lo, hi = key_bounds(c, c.query(f))
    return lo, imax(iadd(irb.sub(hi, lo), 1), 0)


def masked(c: "Ctx", s_acc: list, n0, first, bands) -> list:
    """S^T with -inf outside each lane's band (mask_tile), for every f and key tile. The tile
    at n0 was read from key `first` <= n0 on (kernel.tile_first: the last tile shifted to end
    at the sequence end), so its keys are first + row, and keys below n0 (seen in the previous
    tile) are invisible too: the band's start is raised by t = max(n0 - lo, 0) and its count
    lowered by t (to no less than 0)."""
    out = []
    for f, (lo, count) in enumerate(bands):
        rel = irb.sub(iadd(first, ab.acc_row0(c.lane)), lo)
        out.append([softmax.mask_tile(x, rel, count, kt, irb.sub(n0, lo)) for kt, x in enumerate(s_acc[f])])
    return out
