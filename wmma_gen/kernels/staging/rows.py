"""The attention backward's cooperative copies of row tiles into LDS: rows of a (batch, seq,
head, dim) tensor in natural order ([row][col]) and/or transposed in slot order ([col][slot(row)],
kernels/lanes.slot: the order the accumulator reused as a B operand expects), and per-row f32
values (LSE, Di) in slot order. Reads use the saddr form (global_tensor.GlobalTensor.read)."""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import arith, memref, vector

from .. import irb
from ..global_tensor import GlobalTensor
from ..irb import if_then
from ..lanes import slot


def stage_rows(t: GlobalTensor, family: str, b, h, seq_row0, row0, nvalid, rows: int, d: int, tid, threads: int,
               natural=None, transposed=None, select_offset: bool = False) -> None:
    """Copy rows row0 .. row0+rows (of one head; rows >= nvalid read as zeros) into LDS:
    natural[0][r][c] and/or transposed[0][c][slot(r)]. A thread copies two rows whose
    slots are adjacent (r, r+1 on gfx12; r, r+2 on gfx11) in chunks of 8 elements, so each
    transposed store writes two 16-bit values (one 32-bit ds_store)."""
    w = 8
    per_row = d // w
    units = rows // 2 * per_row
    st = irb.storage_type(t.dtype)
    base = t.row_base(b, irb.add(seq_row0, row0), h)
    delta = 1 if family == "gfx12" else 2
    for k in range(-(-units // threads)):
        u = irb.add(tid, k * threads)
        if (k + 1) * threads > units:
            u = irb.minu(u, units - 1)   # surplus threads repeat the last unit (same values)
        p, c = irb.div(u, per_row), irb.mul(irb.rem(u, per_row), w)
        r = irb.mul(p, 2) if family == "gfx12" else irb.add(irb.mul(irb.div(p, 2), 4), irb.rem(p, 2))
        chunks = []
        for e in (0, delta):
            row = irb.add(r, e)
            ok = irb.lt(irb.add(row0, row), nvalid)
            # rows past nvalid read row 0 of the tile (row0 < nvalid whenever a tile is staged) and
            # are zeroed below. Where the select goes only moves register pressure (LLVM hoists
            # row * ss out of the loop when it is unconditional), measured on the default
            # schedules: select_offset=True kept gfx1100 hd48 dQ (all masks) at 236 VGPRs where
            # selecting the row spilled 13, and spilled 18-20 in gfx11 hd256 dK/dV instead
            if select_offset:
                off = irb.add(irb.select(ok, irb.mul(row, t.strides[1]), irb.c(0)), c)
            else:
                off = irb.add(irb.mul(irb.select(ok, row, irb.c(0)), t.strides[1]), c)
            v = t.read(base, off, w)   # saddr: base uniform, row and column per lane
            chunks.append(irb.select(ok, v, irb.zeros(irb.vec(w, st))))
            if natural is not None:
                vector.store(chunks[-1], natural, [irb.c(0), row, c])
        if transposed is not None:
            col = slot(family, r)
            for e in range(w):
                pair = vector.shuffle(chunks[0], chunks[1], [e, w + e])
                vector.store(pair, transposed, [irb.c(0), irb.add(c, e), col])


def load_row_value(t: GlobalTensor, b, h, seq_row0, i, nvalid, scale: float = 1.0):
    """f32 row-vector element (b, h, i) * scale, 0 outside [0, nvalid); saddr read: the
    sequence's first row is the uniform base, the (clamped) row the lane offset."""
    ok = irb.lt(i, nvalid)
    return _scaled(t.read(t.row_base(b, seq_row0, h), irb.select(ok, i, irb.c(0)), 0), ok, scale)


def _scaled(v, ok, scale: float):
    if scale != 1.0:
        v = arith.mulf(v, irb.cf(scale, ir.F32Type.get()))
    return irb.select(ok, v, irb.cf(0.0, ir.F32Type.get()))


def stage_row_vectors(vectors, family: str, b, h, seq_row0, row0, nvalid, rows: int, tid, threads: int) -> None:
    """lds[slot(r)] = t[b, h, row0 + r] * scale for every (t, lds, scale) of `vectors` and
    r < rows (f32, zeros past nvalid), all under ONE guard per thread: LLVM 24 (FlyDSL) no
    longer merges two guarded copies into one block, and each guard costs an exec
    save/branch/restore in the backward's query-tile loop. Reads are saddr (the tile's first
    row the uniform base, the thread's row the 32-bit lane offset), as stage_rows'."""
    bases = [t.row_base(b, irb.add(seq_row0, row0), h) for t, _, _ in vectors]
    for k in range(-(-rows // threads)):
        r = irb.add(tid, k * threads)

        def put(r=r):
            ok = irb.lt(irb.add(row0, r), nvalid)
            lane = irb.select(ok, r, irb.c(0))   # row0 < nvalid whenever a tile is staged
            for (t, lds, scale), base in zip(vectors, bases, strict=True):
                memref.store(_scaled(t.read(base, lane, 0), ok, scale), lds, [slot(family, r)])
        if (k + 1) * threads > rows:
            if_then(irb.lt(r, rows), put)
        else:
            put()
