"""Which chunk of a staged GEMM tile each thread loads: the chunk width, the transposed
tiles' row groups and the thread-major order of gemm_tiles, as plain arithmetic.

`group_index` computes over an `ops` namespace: the kernel builder passes the IR builders
(kernels/irb), the GEMM model (ops/gemm/l0_lines.py) `IntOps`, so the addresses the model
counts are the ones the kernel loads. No MLIR import here (the model stays light).
"""
from __future__ import annotations


def chunk_width(total: int, align: int, load_bits: int, elem_bits: int) -> int:
    """Largest power of two w <= load_bits/elem_bits dividing `total` (the run length) and
    `align` (the row length and strides: chunks never straddle the edge or misalign)."""
    w = max(1, load_bits // elem_bits)
    while w > 1 and (total % w or align % w):
        w //= 2
    return w


def row_group(transpose: bool, rows: int, cols: int, w: int, threads: int, elem_bits: int,
              store_bits: int) -> int:
    """g: consecutive stored rows (k) one thread loads together. A thread that holds g
    consecutive k rows of the same w columns writes each column's g values with one store of
    up to `store_bits` instead of g scalar stores (fewer DS ops and lgkmcnt waits, more VALU
    packing); grow g while every thread has g chunks. 1 for tiles that are not transposed."""
    g = 1
    if transpose:
        chunks = rows * cols // w
        while (2 * g * elem_bits <= store_bits and rows % (2 * g) == 0
               and chunks // (2 * g) >= threads and (chunks // (2 * g)) % threads == 0):
            g *= 2
    return g


class IntOps:
    """`ops` for group_index over Python integers."""
    add = staticmethod(lambda a, b: a + b)
    mul = staticmethod(lambda a, b: a * b)
    div = staticmethod(lambda a, b: a // b)
    rem = staticmethod(lambda a, b: a % b)
    minu = staticmethod(min)


def group_index(cols: int, w: int, g: int, threads: int, groups: int, per_thread: int, tid, i: int, ops):
    """(first stored row, column, constant column offset) of thread `tid`'s i-th group of g
    stacked chunks.

    Thread-major order: a thread's groups are consecutive along the stored row, so they
    share one row address and differ by constant byte offsets (the load's immediate; the
    constant is returned apart when the thread's groups never wrap to the next row). Row
    strides are run-time kernel arguments: the interleaved order (group tid + i*threads) put
    each group on another row, and every such row address stayed live across the main loop
    (measured: 77-221 spilled VGPRs for the default schedule)."""
    per_row = cols // w
    if per_thread * threads == groups and per_row % per_thread == 0:
        q = ops.mul(tid, per_thread)
        return ops.mul(ops.div(q, per_row), g), ops.mul(ops.rem(q, per_row), w), i * w
    q = ops.add(ops.mul(tid, per_thread), i)
    if per_thread * threads > groups:
        # surplus threads repeat the last group: same values to the same LDS addresses
        q = ops.minu(q, groups - 1)
    return ops.mul(ops.div(q, per_row), g), ops.mul(ops.rem(q, per_row), w), 0
