"""Cooperative global -> LDS copies of one BLOCK_N-key tile of K or V (or BLOCK_M rows of Q).

    K tile  -> LDS [key][d + pad]     (as stored: rows of K are runs along d; vector stores)
    V tile  -> LDS [d][key + pad]     (transposed: the A operand V^T of O^T += V^T P^T needs
                                       runs along keys; a thread reads g consecutive key rows
                                       and writes each d column's g keys with one g*16-bit
                                       LDS store, its halves paired by v_perm_b32)

Thread layout (`plan`): a thread owns a group of g consecutive rows and, in each, `cpt`
chunks of w halves spaced lpr*w apart. The lpr lanes of a group read adjacent chunks (at
least 64 contiguous bytes per row and load instruction), and a thread's chunks in one row
differ by compile-time byte offsets that ride in the load's immediate field. Groups are
spread over `passes` of threads // lpr groups; surplus threads repeat the last group (the
same bytes to the same LDS place).

Addressing: one unsigned 32-bit byte offset per row a thread reads (`addresses` of them),
computed once before the key loop (`lane_offsets`: base of the (sequence, head) + row *
row_stride + column). Per tile the caller adds only the uniform tile offset: one
v_add_nc_u32 per row, and each load is the global "saddr" form
(kernels/saddr.py).

Bounds without per-lane clamps in the loop: the caller passes the tile's first row already
shifted to first' = max(0, min(first, seq - BLOCK)) (uniform), and `lane_offsets` clamps the
thread's rows once to seq - 1 (that clamp only bites when seq < BLOCK, where first' = 0).
Every row read is then inside the sequence; LDS row j holds row first' + j, and the kernel
masks keys below `first` (already seen) or past the sequence end.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import arith, vector

from .. import irb, saddr
from ..global_tensor import GlobalTensor
from ..irb import iadd, imin, imul
from ..lanes import PERM_HI, PERM_LO, perm_b32

CONTIG_BYTES = 64  # bytes a row group reads contiguously per load (half a 128-byte line)
MAX_IMM = saddr.MAX_IMM  # immediate byte offsets stay below this (gfx11: 13-bit signed field)


@dataclass(frozen=True)
class TileCopy:
    rows: int        # BLOCK_N keys (or BLOCK_M queries)
    cols: int        # head_dim
    w: int           # halves per global load
    g: int           # consecutive rows per thread group (transposed copies)
    lpr: int         # lanes per row group
    threads: int
    transpose: bool
    dtype: str

    @property
    def cpt(self) -> int:
        """chunks per thread and row (immediate offsets k * lpr * w halves)"""
        return self.cols // (self.w * self.lpr)

    @property
    def groups(self) -> int:
        return self.rows // self.g

    @property
    def per_pass(self) -> int:
        """row groups one pass of the workgroup's threads covers"""
        return self.threads // self.lpr

    @property
    def passes(self) -> int:
        return -(-self.groups // self.per_pass)

    @property
    def addresses(self) -> int:
        """rows (32-bit lane offsets) per thread"""
        return self.passes * self.g

    @property
    def regs(self) -> int:
        """vectors each thread holds between load and store"""
        return self.addresses * self.cpt


def plan(rows: int, cols: int, load_bits: int, threads: int, transpose: bool, dtype: str) -> TileCopy:
    """The cheapest thread layout: group height g (transposed copies) and lanes per row lpr (a
    divisor of the row's chunks, at most the thread count), scored by staging VGPRs + per-tile
    instructions (loads, address adds, LDS stores), runs shorter than CONTIG_BYTES penalised."""
    w = load_bits // 16
    per_row = cols // w
    lanes = [x for x in range(1, min(per_row, threads) + 1) if per_row % x == 0]
    best = None
    for g in ((4, 2, 1) if transpose else (1,)):
        if rows % g:
            continue
        for lpr in lanes:
            p = TileCopy(rows, cols, w, g, lpr, threads, transpose, dtype)
            if (p.cpt - 1) * lpr * w * 2 >= MAX_IMM:
                continue
            stores = p.passes * p.cpt * (w if transpose else 1)
            scattered = p.regs if 2 * w * lpr < CONTIG_BYTES else 0  # short runs: more memory transactions
            cost = (p.regs * w // 2 + p.regs + p.addresses + 2 * stores + scattered, p.addresses)
            if best is None or cost < best[0]:
                best = (cost, p)
    return best[1]


def _divmod(tid, n: int, limit: int):
    """(tid // n, tid % n) for 0 <= tid < limit. Not a power of two: a 32-bit multiply by
    ceil(2**20 / n) and a shift (exact on the range, checked here); a plain udiv of the thread
    id is narrowed by LLVM to true16 shifts (v_lshrrev_b16 VOP3) that the emulator lacks."""
    if n & (n - 1) == 0:
        return irb.div(tid, n), irb.rem(tid, n)
    m = -(-(1 << 20) // n)
    assert all((t * m) >> 20 == t // n for t in range(limit)), (n, limit)
    q = irb.div(imul(tid, m), 1 << 20)
    return q, irb.sub(tid, imul(q, n))


def thread_slots(p: TileCopy, tid) -> list:
    """(first tile row of the group, first column) per pass of this thread."""
    grp, lane = _divmod(tid, p.lpr, p.threads)
    col = imul(lane, p.w)
    out = []
    for ps in range(p.passes):
        q = iadd(grp, ps * p.per_pass)
        if ps * p.per_pass + -(-p.threads // p.lpr) > p.groups:  # surplus threads: last group again
            q = irb.minu(q, p.groups - 1)
        out.append((imul(q, p.g), col))
    return out


def lane_offsets(p: TileCopy, t: GlobalTensor, tid, base, last_row) -> list:
    """i32 byte offsets of this thread's rows (pass-major, then the g rows of a group) from
    t's pointer: base (elements of row 0 of the sequence, e.g. t.row_base(b, start, h)) +
    min(row, last_row) * t.row_stride + column. Loop-invariant: computed once."""
    out = []
    for r0, col in thread_slots(p, tid):
        for e in range(p.g):
            row = imin(iadd(r0, e), last_row)
            out.append(t.byte_offset(iadd(base, iadd(imul(row, t.row_stride), col))))
    return out


def tile_offset(t: GlobalTensor, first):
    """Uniform i32 byte offset in t of a tile whose (shifted) first row is `first`."""
    return t.byte_offset(imul(first, t.row_stride))


def load(p: TileCopy, t: GlobalTensor, offsets: list, tile_off) -> list:
    """Global reads of this thread's part of the tile at uniform byte offset tile_off (one
    v_add per row, the chunks of a row by immediate offsets)."""
    vals = []
    for off in offsets:
        o = arith.addi(off, tile_off)
        vals += [t.read_at(o, p.w, k * p.lpr * p.w) for k in range(p.cpt)]
    return vals


def _pack_column(words: list, j: int):
    """The 16-bit element j of each i32-word vector in `words` (rows of a group), packed two per
    i32 (low half first): one v_perm_b32 per word (lanes.perm_b32; LLVM makes two or
    three ops of the equivalent and/shift/or on gfx11)."""
    halves = [vector.extract(x, [], [j // 2]) for x in words]
    sel = PERM_LO if j % 2 == 0 else PERM_HI
    return [perm_b32(b, a, sel) for a, b in zip(halves[0::2], halves[1::2], strict=True)]


def store(p: TileCopy, lds, tid, vals: list, buf=0) -> None:
    """Write the registers `load` returned (as f16 bit patterns) into the LDS tile whose first
    LDS row is `buf` (0, or the second buffer's with kv_buffers=2)."""
    f16 = ir.F16Type.get()
    for ps, (r0, col) in enumerate(thread_slots(p, tid)):
        for k in range(p.cpt):
            c = iadd(col, k * p.lpr * p.w)
            chunk = [vals[(ps * p.g + e) * p.cpt + k] for e in range(p.g)]
            if not p.transpose:
                vector.store(chunk[0], lds, [iadd(r0, buf), c])
                continue
            c = iadd(c, buf)
            if p.g == 1:
                for j in range(p.w):
                    one = vector.from_elements(irb.vec(1, f16), [vector.extract(chunk[0], [], [j])])
                    vector.store(one, lds, [iadd(c, j), r0])
                continue
            words = [vector.bitcast(irb.vec(p.w // 2, ir.IntegerType.get_signless(32)), x) for x in chunk]
            for j in range(p.w):
                packed = vector.from_elements(irb.vec(p.g // 2, ir.IntegerType.get_signless(32)), _pack_column(words, j))
                vector.store(vector.bitcast(irb.vec(p.g, f16), packed), lds, [iadd(c, j), r0])


def load_lds(p: TileCopy, lds, tid, et=None) -> list:
    """The registers `load` would return for plan p, read from an LDS tile [rows][cols] (f16-
    declared, or of element type et: i8 for fp8 bytes) instead of global memory: a transposed
    copy (`store` of a transpose plan) of a tile already in LDS (MLA builds its V^T tile from
    the K tile, ops/mla/kernel.py)."""
    et = et or ir.F16Type.get()
    vals = []
    for r0, col in thread_slots(p, tid):
        for e in range(p.g):
            vals += [vector.load(irb.vec(p.w, et), lds, [iadd(r0, e), iadd(col, k * p.lpr * p.w)])
                     for k in range(p.cpt)]
    return vals
