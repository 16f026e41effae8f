"""Guarded global-memory reads of a stored operand, a strided view `batch x rows x cols`.

Sizes are run-time values (kernel arguments); what is known at compile time is which axes
need guards and `align`, the power of two that divides the row length and every outer
stride (part of the op's specialization key). Edges are handled in-kernel, never by
padding on the host: a read outside the matrix returns zeros. A chunk of `w` consecutive
elements along the stored row is wholly inside or wholly outside when w divides the row
length, so one clamped vector load plus one select covers it; `chunk_width` picks such a
w, never wider than `align` (so every vector access is aligned to its own width).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, memref, vector

from ..numerics import BITS
from . import irb


@dataclass(frozen=True)
class Stored:
    """A stored matrix: the strided memref view, its dtype, (rows, cols) in storage elements
    (bytes for i4) as run-time index values, whether reads must be guarded along each axis,
    and the compile-time alignment (elements) of its row length and strides."""
    ref: ir.Value
    dtype: str
    rows: ir.Value
    cols: ir.Value
    guard_rows: bool
    guard_cols: bool
    align: int = 1

    @property
    def elem_bits(self) -> int:
        return 8 if self.dtype == "i4" else BITS[self.dtype]


def chunk_width(total: int, align: int, load_bits: int, elem_bits: int) -> int:
    """Largest power of two w <= load_bits/elem_bits dividing `total` (the run length) and
    `align` (the row length and strides: chunks never straddle the edge or misalign)."""
    w = max(1, load_bits // elem_bits)
    while w > 1 and (total % w or align % w):
        w //= 2
    return w


def _in_bounds(x: Stored, row, col):
    conds = []
    if x.guard_rows:
        conds.append(irb.lt(row, x.rows))
    if x.guard_cols:
        conds.append(irb.lt(col, x.cols))
    ok = None
    for cnd in conds:
        ok = cnd if ok is None else irb.land(ok, cnd)
    return ok


def read_chunk(x: Stored, b, row, col, w: int) -> ir.Value:
    """vector<w x storage> at (row, col..col+w), zeros where outside the matrix."""
    st = irb.storage_type(x.dtype)
    ok = _in_bounds(x, row, col)
    if ok is None:
        return vector.load(irb.vec(w, st), x.ref, [b, row, col])
    r = irb.minu(row, irb.sub(x.rows, 1)) if x.guard_rows else row
    c = irb.minu(col, irb.sub(x.cols, w)) if x.guard_cols else col
    v = vector.load(irb.vec(w, st), x.ref, [b, r, c])
    return irb.select(ok, v, irb.zeros(irb.vec(w, st)))


def read_scalar(x: Stored, b, row, col) -> ir.Value:
    ok = _in_bounds(x, row, col)
    if ok is None:
        return memref.load(x.ref, [b, row, col])
    r = irb.minu(row, irb.sub(x.rows, 1)) if x.guard_rows else row
    c = irb.minu(col, irb.sub(x.cols, 1)) if x.guard_cols else col
    v = memref.load(x.ref, [b, r, c])
    zero = irb.cf(0.0, v.type) if irb.is_float(v.type) else arith.ConstantOp(v.type, 0).result
    return irb.select(ok, v, zero)


def read_row_run(x: Stored, b, row, col, n: int, load_bits: int) -> ir.Value:
    """n consecutive storage elements of one stored row, in chunks of up to load_bits."""
    w = chunk_width(n, x.align, load_bits, x.elem_bits)
    parts = [read_chunk(x, b, row, irb.add(col, off), w) for off in range(0, n, w)]
    return concat(parts)


def concat(vals: list) -> ir.Value:
    """Join equal-length vectors in order with vector.shuffle (pairwise)."""
    while len(vals) > 1:
        n = ir.VectorType(vals[0].type).shape[0]
        nxt = [vector.shuffle(vals[i], vals[i + 1], list(range(2 * n))) for i in range(0, len(vals) - 1, 2)]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return vals[0]
