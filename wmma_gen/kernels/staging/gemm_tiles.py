"""Cooperative copy of one macro-tile operand from global memory into LDS.

LDS keeps every staged operand K-contiguous as [buffer][outer][k + pad] (outer = m for A,
n for B), so fragment reads are single contiguous vectors (fragments.load_fragment_lds).
When the stored operand is K-contiguous the copy is vector-to-vector; otherwise each
thread reads a vector along the stored row (outer) and scatters it down an LDS column
(the transpose happens once here, not on every fragment read).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import arith, memref, vector

from .. import irb
from ..lanes import PERM_HI, PERM_LO, perm_b32
from ..global_tensor import GlobalTensor, Pos
from ..globalmem import concat, read_chunk
from .tile_order import chunk_width, group_index, row_group


@dataclass(frozen=True)
class TilePlan:
    x: GlobalTensor
    transpose: bool  # stored rows run along k (True) or along outer (False)
    rows: int        # tile rows as stored (storage elements)
    cols: int        # tile cols as stored (storage elements)
    w: int           # elements per chunk (one global load)
    threads: int
    g: int = 1       # transposed tiles: consecutive stored rows (k) one thread loads together

    @property
    def groups(self) -> int:
        """Units of work: g chunks stacked along the stored rows."""
        return self.rows * self.cols // (self.w * self.g)

    @property
    def per_thread(self) -> int:
        return -(-self.groups // self.threads)


def plan_tile(x: GlobalTensor, transpose: bool, rows: int, cols: int, load_bits: int, threads: int,
              store_bits: int = 16) -> TilePlan:
    w = chunk_width(cols, x.align, load_bits, x.elem_bits)
    return TilePlan(x, transpose, rows, cols, w, threads, row_group(transpose, rows, cols, w, threads, x.elem_bits,
                                                                    store_bits))


def _group_index(p: TilePlan, tid, i: int):
    """(first stored row, column, constant column offset) of this thread's i-th group of g
    stacked chunks (tile_order.group_index, in IR)."""
    return group_index(p.cols, p.w, p.g, p.threads, p.groups, p.per_thread, tid, i, irb)


def load_tile(p: TilePlan, b, row0: Pos, col0: Pos, tid) -> list:
    """Global reads of this thread's chunks of the tile at stored (row0, col0): uniform
    positions (tile origin, K step; global_tensor.Pos) to which the thread's loop-invariant
    (row, column) inside the tile is added."""
    vals = []
    for i in range(p.per_thread):
        r, c, dc = _group_index(p, tid, i)
        for e in range(p.g):
            vals.append(read_chunk(p.x, b, row0.plus(e, r), col0.plus(dc, c), p.w))
    return vals


def store_tile(p: TilePlan, lds: ir.Value, buf, tid, vals: list) -> None:
    """Write this thread's chunks into LDS [buf][outer][k]."""
    for i in range(p.per_thread):
        r, c, dc = _group_index(p, tid, i)
        c = irb.add(c, dc) if dc else c
        chunk = vals[i * p.g:(i + 1) * p.g]
        if not p.transpose:
            vector.store(chunk[0], lds, [buf, r, c])
            continue
        cols = _byte_columns(p, chunk) if p.x.elem_bits == 8 and p.g > 1 and p.w % 4 == 0 else None
        for e in range(p.w):  # stored rows r..r+g-1 are k; the chunk runs along outer
            if p.g == 1:
                memref.store(vector.extract(chunk[0], [], [e]), lds, [buf, irb.add(c, e), r])
                continue
            vector.store(cols[e] if cols else _column(p, chunk, e), lds, [buf, irb.add(c, e), r])


def _column(p: TilePlan, chunk: list, e: int) -> ir.Value:
    """Element e of each of the g stacked chunks, as one vector<g> (rows in order). 16-bit
    elements pair up with one v_perm_b32 per 32-bit word (lanes.perm_b32; RDNA3
    ISA guide "V_PERM_B32", same on RDNA4): LLVM's shuffle made two v_mov_b16 per word on
    gfx11 (measured: 72 per TN main-loop iteration of the default schedule)."""
    if p.x.elem_bits != 16 or p.w % 2:
        return concat([vector.shuffle(chunk[j], chunk[j + 1], [e, p.w + e]) for j in range(0, p.g, 2)])
    i32 = ir.IntegerType.get_signless(32)
    words = [vector.extract(vector.bitcast(irb.vec(p.w // 2, i32), x), [], [e // 2]) for x in chunk]
    sel = PERM_LO if e % 2 == 0 else PERM_HI
    packed = [perm_b32(words[j + 1], words[j], sel) for j in range(0, p.g, 2)]
    col = vector.from_elements(irb.vec(p.g // 2, i32), packed)
    return vector.bitcast(irb.vec(p.g, irb.storage_type(p.x.dtype)), col)


def _byte_columns(p: TilePlan, chunk: list) -> list:
    """Every column of g stacked 8-bit chunks, each as one vector<g> (rows in order), with
    v_perm_b32 (RDNA3/RDNA4 ISA guides, "V_PERM_B32": byte i of the result is byte sel[i] of
    {s0, s1}). Two columns e, e+1 of rows j, j+1 come from one perm (bytes r_j[e], r_j+1[e],
    r_j[e+1], r_j+1[e+1]); for g >= 4 two such pairs merge with PERM_LO/PERM_HI into the
    32-bit column words: 2 perms per column word. LLVM's shuffles of i8 vectors made 16-bit
    and/shift/or chains and byte stores (measured: 146-156 VALU per i8 NN/TN main loop on gfx11)."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    words = [[vector.extract(vector.bitcast(irb.vec(p.w // 4, i32), x), [], [k]) for k in range(p.w // 4)]
             for x in chunk]

    def pair(j: int, e: int):   # bytes r_j[e], r_j+1[e], r_j[e+1], r_j+1[e+1]
        b = e % 4
        return perm_b32(words[j + 1][e // 4], words[j][e // 4], b | (4 + b) << 8 | (b + 1) << 16 | (5 + b) << 24)

    out = []
    for e in range(0, p.w, 2):
        if p.g == 2:  # the two 16-bit halves, as i16 (a vector<2xi8> store was split into bytes)
            w = pair(0, e)
            out += [_as_bytes(p, arith.trunci(i16, h)) for h in (w, arith.shrui(w, arith.constant(i32, 16)))]
            continue
        lo, hi = [], []
        for j in range(0, p.g, 4):
            p01, p23 = pair(j, e), pair(j + 2, e)
            lo.append(perm_b32(p23, p01, PERM_LO))
            hi.append(perm_b32(p23, p01, PERM_HI))
        out += [_as_bytes(p, *w) for w in (lo, hi)]
    return out


def _as_bytes(p: TilePlan, *words) -> ir.Value:
    """Integer words as one vector of 8-bit storage elements (a bitcast: LLVM stores the words)."""
    t = words[0].type
    n = len(words) * ir.IntegerType(t).width // 8
    return vector.bitcast(irb.vec(n, irb.storage_type(p.x.dtype)), vector.from_elements(irb.vec(len(words), t), list(words)))

