"""Guarded reads (and unguarded writes) of a GEMM strided matrix `batch x rows x cols`: a
kernels/global_tensor.GlobalTensor with extents (rows, cols), guard flags and `align`, addressed
by `Pos` positions in the saddr form (the hardware facts and offset bounds: global_tensor's module
docstring). A read outside the matrix returns zeros.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, vector

from . import irb, saddr
from .global_tensor import GlobalTensor, Pos, _add, _nuw
from .staging.tile_order import chunk_width


def _mul(a, b):
    return arith.MulIOp(a, irb._v(b), overflowFlags=_nuw()).result


def _sub(a, b):
    return arith.SubIOp(a, irb._v(b), overflowFlags=_nuw()).result


def _in_bounds(x: GlobalTensor, row, col):
    conds = []
    if x.guards[0]:
        conds.append(irb.lt(row, x.extents[0]))
    if x.guards[1]:
        conds.append(irb.lt(col, x.extents[1]))
    ok = None
    for cnd in conds:
        ok = cnd if ok is None else irb.land(ok, cnd)
    return ok


def _axis(p: Pos, guard: bool, last, is_row: bool):
    """(uniform origin, VGPR part, constant) of one axis. Unguarded: the parts as given (a
    row constant joins the uniform part: row offsets are multiples of a run-time stride).
    Guarded: the clamped position min(total, last) minus the clamped origin min(uniform,
    last): never negative, so the unsigned offset stays exact even for a tile wholly past
    the edge (split-K's last split may start beyond K)."""
    u = p.uniform if p.uniform is not None else irb.c(0)
    if not guard:
        var = p.lane if p.step is None else (p.step if p.lane is None else _add(p.step, p.lane))
        if is_row and p.const:
            return _add(u, p.const), var, 0
        return u, var, p.const
    u0 = irb.minu(u, last)
    return u0, _sub(irb.minu(p.total(), last), u0), 0


def _address(x: GlobalTensor, b, row: Pos, col: Pos, w_clamp: int):
    """The address of (b, row, col) in the SADDR form: base = ptr + bytes * (b*sb + row0*sr
    + col0) (uniform, loop-invariant: SGPRs), VGPR offset = bytes * (rows*sr + cols) of the
    step and lane parts, immediate = bytes * const.

    The K step sits in the VGPR offset, not in the base, because the backend selects the
    SADDR form only when it sees the zero-extension of the 32-bit offset in the access's own
    basic block (SelectionDAG works per block: LLVM AMDGPUISelDAGToDAG SelectGlobalSAddr
    matches `add (uniform i64), (zext i32)`). A loop-invariant lane offset is hoisted out of
    the K loop with its zext and the loop then rebuilt a 64-bit address per load (measured:
    two v_add_co per load per tile); one 32-bit v_add of the uniform step per distinct lane
    offset and tile keeps the SADDR form inside the loop."""
    r0, rl, _ = _axis(row, x.guards[0], irb.sub(x.extents[0], 1), True)
    c0, cl, cc = _axis(col, x.guards[1], irb.sub(x.extents[1], w_clamp), False)
    base_elems = _add(_add(_mul(b, x.strides[0]), _mul(r0, x.strides[1])), c0)
    base = saddr.offset_by(x.ptr, saddr.byte_offset(base_elems, x.elem_bytes))
    lane = None
    if rl is not None:
        lane = _mul(rl, x.strides[1])
    if cl is not None:
        lane = cl if lane is None else _add(lane, cl)
    p = base if lane is None else saddr.offset_by(base, saddr.byte_offset(lane, x.elem_bytes))
    return saddr.gep_bytes(p, cc * x.elem_bytes) if cc else p


def _load(x: GlobalTensor, b, row: Pos, col: Pos, n: int, w_clamp: int) -> ir.Value:
    """vector<n x storage> (or the scalar for n=0) at (b, row, col), without the zero select."""
    return saddr.load(_address(x, b, row, col, w_clamp), n, irb.storage_type(x.dtype), x.elem_bytes)


def write(x: GlobalTensor, b, row: Pos, col: Pos, value: ir.Value) -> None:
    """Store one storage element at (b, row, col) (unguarded: callers predicate edges)."""
    saddr.store(value, _address(x, b, row, col, 1), x.elem_bytes)


def read_chunk(x: GlobalTensor, b, row: Pos, col: Pos, w: int) -> ir.Value:
    """vector<w x storage> at (row, col..col+w), zeros where outside the matrix."""
    v = _load(x, b, row, col, w, w)
    ok = _in_bounds(x, row.total() if x.guards[0] else None, col.total() if x.guards[1] else None)
    return v if ok is None else irb.select(ok, v, irb.zeros(irb.vec(w, irb.storage_type(x.dtype))))


def read_scalar(x: GlobalTensor, b, row: Pos, col: Pos) -> ir.Value:
    v = _load(x, b, row, col, 0, 1)
    ok = _in_bounds(x, row.total() if x.guards[0] else None, col.total() if x.guards[1] else None)
    if ok is None:
        return v
    zero = irb.cf(0.0, v.type) if irb.is_float(v.type) else arith.ConstantOp(v.type, 0).result
    return irb.select(ok, v, zero)


def read_row_run(x: GlobalTensor, b, row: Pos, col: Pos, n: int, load_bits: int) -> ir.Value:
    """n consecutive storage elements of one stored row, in chunks of up to load_bits."""
    w = chunk_width(n, x.align, load_bits, x.elem_bits)
    parts = [read_chunk(x, b, row, col.plus(off), w) for off in range(0, n, w)]
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
