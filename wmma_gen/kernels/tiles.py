"""Cooperative copy of one macro-tile operand from global memory into LDS.

LDS keeps every staged operand K-contiguous as [buffer][outer][k + pad] (outer = m for A,
n for B), so fragment reads are single contiguous vectors (fragments.load_fragment_lds).
When the stored operand is K-contiguous the copy is vector-to-vector; otherwise each
thread reads a vector along the stored row (outer) and scatters it down an LDS column
(the transpose happens once here, not on every fragment read).
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref, vector

from . import irb
from .globalmem import Stored, chunk_width, read_chunk


@dataclass(frozen=True)
class TilePlan:
    x: Stored
    transpose: bool  # stored rows run along k (True) or along outer (False)
    rows: int        # tile rows as stored (storage elements)
    cols: int        # tile cols as stored (storage elements)
    w: int           # elements per chunk (one global load)
    threads: int

    @property
    def chunks(self) -> int:
        return self.rows * self.cols // self.w

    @property
    def per_thread(self) -> int:
        return -(-self.chunks // self.threads)


def plan_tile(x: Stored, transpose: bool, rows: int, cols: int, load_bits: int, threads: int) -> TilePlan:
    return TilePlan(x, transpose, rows, cols, chunk_width(cols, x.cols, load_bits, x.elem_bits, x.guard_cols), threads)


def _chunk_index(p: TilePlan, tid, i: int):
    q = irb.add(tid, i * p.threads)
    if (i + 1) * p.threads > p.chunks:
        # surplus threads repeat the last chunk: same value to the same LDS address
        q = irb.minu(q, p.chunks - 1)
    per_row = p.cols // p.w
    return irb.div(q, per_row), irb.mul(irb.rem(q, per_row), p.w)


def load_tile(p: TilePlan, b, row0, col0, tid) -> list:
    """Global reads of this thread's chunks of the tile at stored (row0, col0)."""
    vals = []
    for i in range(p.per_thread):
        r, c = _chunk_index(p, tid, i)
        vals.append(read_chunk(p.x, b, irb.add(row0, r), irb.add(col0, c), p.w))
    return vals


def store_tile(p: TilePlan, lds: ir.Value, buf, tid, vals: list) -> None:
    """Write this thread's chunks into LDS [buf][outer][k]."""
    for i, v in enumerate(vals):
        r, c = _chunk_index(p, tid, i)
        if not p.transpose:
            vector.store(v, lds, [buf, r, c])
            continue
        for e in range(p.w):  # stored row r is k, chunk runs along outer
            memref.store(vector.extract(v, [], [e]), lds, [buf, irb.add(c, e), r])
