"""Which keys a query sees: the one visibility rule of every attention kernel (forward, backward,
paged decode), and the key/query ranges and tiles it implies.

For a sequence of Sq queries and Sk keys, off = Sk - Sq aligns queries bottom-right
(attention_common/directive.py; FlashAttention's convention). Key j is visible to query i iff

    0 <= j < Sk,  0 <= i < Sq,  and  lo <= j - (i + off) <= hi

with the band (lo, hi) = (-left, right) for a window (a negative side is unbounded: BIG), and
hi <= 0 under causal (causal acts as right = 0). Without causal and window the band is
unbounded. `Visibility` carries the compile-time flags and the run-time window sides; the
views below all derive from it:

    key_bounds(v, i, Sq, Sk)           first/last key of query i               (forward, decode)
    key_band(v, i, Sq, Sk)             (first key, count) of query i           (forward lanes)
    key_tile_span(v, q0, ...)          key tiles a block of queries visits     (forward, decode)
    relative_band(v) -> Band           (lo, hi) of j - i - off; Band.visible   (backward masks)
    query_tiles_seeing(b, n0, ...)     query tiles that see a key tile         (backward dK/dV)
    key_tiles_seen(b, m0, ...)         key tiles a query tile sees             (backward dQ, decode)

Index values are MLIR `index` values (kernels/irb); all sizes stay far below BIG.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler.mlir_api import arith

from . import irb
from .irb import iadd, imax, imin, imul

BIG = 1 << 30   # "unbounded" band side; sequence sizes stay far below it


@dataclass(frozen=True)
class Visibility:
    """The rule's parameters: causal and window (compile-time flags) and the window sides
    `left`, `right` (run-time index values, negative = unbounded; used only with window)."""
    causal: bool
    window: bool
    left: object = None
    right: object = None


def _scmp(pred: str, a, b):
    return arith.CmpIOp(getattr(arith.CmpIPredicate, pred), a, irb._v(b)).result


def key_bounds(v: Visibility, i, seq_q, seq_k):
    """(lo, hi): the keys query i sees are lo..hi (hi < lo: none)."""
    off = irb.sub(seq_k, seq_q)
    diag = iadd(i, off)
    hi = irb.sub(seq_k, 1)
    lo = irb.c(0)
    if v.causal:
        hi = imin(hi, diag)
    if v.window:
        neg = lambda x: _scmp("slt", x, irb.c(0))   # noqa: E731
        hi = imin(hi, irb.add(diag, irb.select(neg(v.right), irb.c(BIG), v.right)))
        lo = imax(lo, irb.sub(diag, irb.select(neg(v.left), irb.c(BIG), v.left)))
    return lo, hi


def key_band(v: Visibility, i, seq_q, seq_k):
    """(lo, count): query i sees keys lo .. lo + count - 1 (count 0: none)."""
    lo, hi = key_bounds(v, i, seq_q, seq_k)
    return lo, imax(iadd(irb.sub(hi, lo), 1), 0)


def key_tile_span(v: Visibility, q0, block_m: int, seq_q, seq_k, block_n: int, split_kv: int = 1, split=None):
    """(start, end, full_lo, full_hi) for the queries q0 .. min(q0 + block_m, Sq) - 1: the key
    offsets [start, end) (multiples of block_n) they visit -- tiles wholly outside every band
    skipped; with split_kv > 1 the part `split` of them -- and the keys [full_lo, full_hi] every
    one of those queries sees (tiles inside need no mask)."""
    q_last = irb.sub(imin(iadd(q0, block_m), seq_q), 1)
    lo_first, hi_first = key_bounds(v, q0, seq_q, seq_k)
    lo_last, hi_last = key_bounds(v, q_last, seq_q, seq_k)
    start = imul(irb.div(lo_first, block_n), block_n)
    end = imul(irb.div(iadd(imax(iadd(hi_last, 1), lo_first), block_n - 1), block_n), block_n)
    end = imax(end, start)
    if split_kv > 1:
        per = imul(irb.div(iadd(irb.div(irb.sub(end, start), block_n), split_kv - 1), split_kv), block_n)
        start = imin(iadd(start, imul(split, per)), end)
        end = imin(iadd(start, per), end)
    return start, end, lo_last, hi_first


@dataclass(frozen=True)
class Band:
    """Key j is visible to query i iff lo <= j - i - off <= hi (lo/hi: index values), inside
    the sequence. causal/window: which sides can bind (none: only the sequence bounds)."""
    lo: object
    hi: object
    causal: bool
    window: bool

    def visible(self, i, j, seq_q, seq_k):
        """i1: (i, j) inside the sequence and visible."""
        ok = irb.land(irb.lt(i, seq_q), irb.lt(j, seq_k))
        if self.causal or self.window:
            t = irb.sub(irb.sub(j, i), irb.sub(seq_k, seq_q))
            ok = irb.land(ok, _scmp("sle", t, self.hi))
            if self.window:
                ok = irb.land(ok, _scmp("sge", t, self.lo))
        return ok


def relative_band(v: Visibility) -> Band:
    """The band (lo, hi) of j - i - off, computed once per kernel."""
    lo, hi = irb.c(-BIG), irb.c(BIG)
    if v.window:
        lo = irb.select(_scmp("slt", v.left, 0), irb.c(-BIG), irb.sub(irb.c(0), v.left))
        hi = irb.select(_scmp("slt", v.right, 0), irb.c(BIG), v.right)
    if v.causal:
        hi = arith.MinSIOp(hi, irb._v(0)).result
    return Band(lo, hi, v.causal, v.window)


@dataclass(frozen=True)
class Ranges:
    """Stream tiles [t_lo, t_hi) that see the fixed tile; [f_lo, f_hi) of them need no mask."""
    t_lo: object
    t_hi: object
    f_lo: object
    f_hi: object

    @property
    def masked(self):
        return irb.add(irb.sub(self.f_lo, self.t_lo), irb.sub(self.t_hi, self.f_hi))

    def masked_tile(self, t):
        """Index of the t-th masked tile (those before f_lo, then those from f_hi)."""
        first = irb.sub(self.f_lo, self.t_lo)
        return irb.select(irb.lt(t, first), irb.add(self.t_lo, t), irb.add(self.f_hi, irb.sub(t, first)))


def _floor_count(x, tile: int):
    """#{n >= 0 : n*tile <= x}"""
    return irb.select(_scmp("slt", x, 0), irb.c(0), irb.add(arith.DivSIOp(x, irb.c(tile)).result, 1))


def tile_ranges(a, b, limit, tile: int, full_from, full_to, fixed_ok) -> Ranges:
    """Tiles of `tile` stream elements covering [a, b) clipped to [0, limit); fully valid
    ones are those n with n*tile >= full_from, n*tile <= full_to, (n+1)*tile <= limit, when
    fixed_ok (the fixed tile lies inside its sequence)."""
    smax = lambda x, y: arith.MaxSIOp(x, irb._v(y)).result   # noqa: E731
    smin = lambda x, y: arith.MinSIOp(x, irb._v(y)).result   # noqa: E731
    a = smax(a, 0)
    b = smax(smin(b, limit), a)
    cap = irb.div(limit, tile)
    t_lo = irb.div(a, tile)
    t_hi = irb.div(irb.add(b, tile - 1), tile)
    f_lo = irb.div(irb.add(smax(full_from, 0), tile - 1), tile)
    f_hi = smin(_floor_count(full_to, tile), cap)
    f_hi = irb.select(fixed_ok, f_hi, irb.c(0))
    f_lo = smin(smax(f_lo, t_lo), t_hi)
    f_hi = smin(smax(f_hi, f_lo), t_hi)
    return Ranges(t_lo, t_hi, f_lo, f_hi)


def query_tiles_seeing(band: Band, n0, block_n: int, block_m: int, seq_q, seq_k) -> Ranges:
    """Query tiles of block_m that see some key of n0 .. n0 + block_n - 1; the unmasked ones see
    every key of the tile (the key tile is whole)."""
    off = lambda: irb.sub(seq_k, seq_q)   # noqa: E731  (Sk - Sq, built where used)
    n_end = irb.minu(irb.add(n0, block_n), seq_k)
    a = irb.sub(irb.sub(n0, off()), band.hi)           # first query that sees key n0
    b = irb.sub(irb.sub(n_end, off()), band.lo)        # one past the last that sees n_end-1
    full_from = irb.sub(irb.sub(irb.add(n0, block_n - 1), off()), band.hi)
    full_to = irb.sub(irb.sub(n0, off()), irb.add(band.lo, block_m - 1))
    fixed_ok = irb.lt(irb.add(n0, block_n - 1), seq_k)
    return tile_ranges(a, b, seq_q, block_m, full_from, full_to, fixed_ok)


def key_tiles_seen(band: Band, m0, block_m: int, block_n: int, seq_q, seq_k) -> Ranges:
    """Key tiles of block_n that some query of m0 .. m0 + block_m - 1 sees; the unmasked ones
    are seen whole by every query of the tile (the query tile is whole)."""
    off = lambda: irb.sub(seq_k, seq_q)   # noqa: E731
    m_end = irb.minu(irb.add(m0, block_m), seq_q)
    a = irb.add(irb.add(m0, off()), band.lo)            # first key query m0 sees
    b = irb.add(irb.add(m_end, off()), band.hi)         # one past the last key m_end-1 sees
    full_from = irb.add(irb.add(band.lo, off()), irb.add(m0, block_m - 1))
    full_to = irb.sub(irb.add(irb.add(m0, off()), band.hi), block_n - 1)
    fixed_ok = irb.lt(irb.add(m0, block_m - 1), seq_q)
    return tile_ranges(a, b, seq_k, block_n, full_from, full_to, fixed_ok)
