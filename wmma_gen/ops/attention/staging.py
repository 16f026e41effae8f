"""Cooperative global -> LDS copies of one BLOCK_N-key tile of K or V.

    K tile  -> LDS [key][d + pad]     (as stored: rows of K are runs along d; vector stores)
    V tile  -> LDS [d][key + pad]     (transposed: the A operand V^T of O^T += V^T P^T needs
                                       runs along keys; each thread loads g consecutive key
                                       rows of w d-values and writes each d column's g keys
                                       with one g*16-bit LDS store)

Rows past the sequence end are clamped to its last row: K rows there are masked to -inf in
S and V rows get P = 0, so their (finite) values never reach O; nothing is read outside the
caller's arrays. `load` issues the global reads (so they can overlap math) and `store`
writes the registers into LDS later.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import vector

from ...kernels import irb
from ...kernels.attention_blocks import iadd, imin, imul, load_run


@dataclass(frozen=True)
class TileCopy:
    rows: int        # BLOCK_N keys
    cols: int        # head_dim
    w: int           # halves per global load
    g: int           # consecutive rows per thread group (transposed copies)
    threads: int
    transpose: bool
    dtype: str

    @property
    def groups(self) -> int:
        return self.rows * self.cols // (self.w * self.g)

    @property
    def per_thread(self) -> int:
        return -(-self.groups // self.threads)

    @property
    def regs(self) -> int:
        """vectors each thread holds between load and store"""
        return self.per_thread * self.g


def plan(rows: int, cols: int, load_bits: int, threads: int, transpose: bool, dtype: str) -> TileCopy:
    w = load_bits // 16
    g = 1
    if transpose:  # widen the LDS stores while every thread still has whole groups
        while g < 4 and rows % (2 * g) == 0 and (rows * cols // (w * 2 * g)) % threads == 0:
            g *= 2
    return TileCopy(rows, cols, w, g, threads, transpose, dtype)


def _group(p: TileCopy, tid, i: int):
    """(first tile row, column) of this thread's i-th group."""
    q = iadd(tid, i * p.threads)
    if (i + 1) * p.threads > p.groups:  # surplus threads repeat the last group (same bytes)
        q = irb.minu(q, p.groups - 1)
    per_row = p.cols // p.w
    return imul(irb.div(q, per_row), p.g), imul(irb.rem(q, per_row), p.w)


def load(p: TileCopy, view, base, row_stride, row0, last_row, tid) -> list:
    """Global reads of this thread's part of the tile whose first key is row0; rows are
    clamped to last_row (the sequence's last key)."""
    vals = []
    for i in range(p.per_thread):
        r, c = _group(p, tid, i)
        for e in range(p.g):
            row = imin(iadd(row0, iadd(r, e)), last_row)
            vals.append(load_run(view, p.dtype, iadd(base, iadd(imul(row, row_stride), c)), p.w))
    return vals


def store(p: TileCopy, lds, tid, vals: list) -> None:
    for i in range(p.per_thread):
        r, c = _group(p, tid, i)
        chunk = vals[i * p.g:(i + 1) * p.g]
        if not p.transpose:
            vector.store(chunk[0], lds, [r, c])
            continue
        for e in range(p.w):
            col = [vector.extract(x, [], [e]) for x in chunk]
            vec = vector.from_elements(irb.vec(p.g, ir.VectorType(chunk[0].type).element_type), col)
            vector.store(vec, lds, [iadd(c, e), r])
