"""Guarded global-memory reads (and unguarded writes) of a strided matrix `batch x rows x cols`.

Sizes are run-time values (kernel arguments); what is known at compile time is which axes
need guards and `align`, the power of two that divides the row length and every outer
stride (part of the op's specialization key). Edges are handled in-kernel, never by
padding on the host: a read outside the matrix returns zeros. A chunk of `w` consecutive
elements along the stored row is wholly inside or wholly outside when w divides the row
length, so one clamped vector load plus one select covers it; `chunk_width` picks such a
w, never wider than `align` (so every vector access is aligned to its own width).

Addressing (the FLAT-global "saddr" form, kernels/saddr.py, shared with the attention kernels):
every access is `global_load/store v_off, s[base:base+1] offset:imm` -- a uniform 64-bit base in
SGPRs plus a zero-extended unsigned 32-bit per-lane VGPR offset plus an immediate (RDNA3 ISA
guide ch. 10 "Global, Scratch and Flat Instructions", SADDR field; RDNA4 ISA guide, same chapter).
A position is therefore given split by who knows it (`Pos`): the loop-invariant uniform part
(batch, tile origin, split-K start, row constants) goes into the SGPR base; the per-lane part
(thread and lane ids) is a loop-invariant 32-bit VGPR offset, to which the K loop's step is
added once per iteration (one v_add_nc_u32 per distinct lane offset: why not the base, see
`_address`); constant column offsets become the immediate. With run-time strides the
alternative -- one 64-bit address per lane and load, rebuilt every K tile -- cost
v_lshlrev_b64/v_add_co pairs per load and many live 64-bit VGPR pairs (and the spills of
64x64 direct-to-fragment tiles and of gfx1201's k_unroll 2).

Offsets fit: the launcher limits every buffer's span to < 2**31 elements
(device/launcher.MAX_SPAN_ELEMS; kernels index with 32 bits) and WMMA operands are at most
16 bits wide (`Stored` checks), so any in-buffer byte offset is < 2**32 and the unsigned
32-bit VGPR offset is exact. No key bit is needed for huge operands: they are rejected at
launch (and by the GEMM legality `operand_size`) before any 64-bit path would matter.
Wider elements (a 32-bit output written with `write`) need the op's own bound on the VGPR
part of the offset (`Stored.offsets_checked`; GEMM: schedule.output_offsets).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, vector

from ..numerics import BITS
from . import irb, saddr

MAX_OPERAND_BITS = 16   # byte offsets < 2 * 2**31 (see the module docstring)


@dataclass(frozen=True)
class Stored:
    """A stored matrix: its global pointer (!llvm.ptr<1>, a kernel argument), element strides
    (batch, row) as index values, its dtype, (rows, cols) in storage elements (bytes for i4)
    as run-time index values, whether reads must be guarded along each axis, and the
    compile-time alignment (elements) of its row length and strides."""
    ptr: ir.Value
    sb: ir.Value
    sr: ir.Value
    dtype: str
    rows: ir.Value
    cols: ir.Value
    guard_rows: bool
    guard_cols: bool
    align: int = 1
    offsets_checked: bool = False  # the op bounds wider elements' VGPR offsets itself

    def __post_init__(self):
        if self.elem_bits > MAX_OPERAND_BITS and not self.offsets_checked:
            raise ValueError(f"Stored.dtype={self.dtype!r}: {self.elem_bits}-bit elements are not allowed "
                             f"unless the op bounds the byte offsets (offsets_checked); at most "
                             f"{MAX_OPERAND_BITS} bits (32-bit byte offsets, module docstring)")

    @property
    def elem_bits(self) -> int:
        return 8 if self.dtype == "i4" else BITS[self.dtype]

    @property
    def elem_bytes(self) -> int:
        return self.elem_bits // 8


@dataclass(frozen=True)
class Pos:
    """An index split by who knows it: `uniform` (the same in every lane and loop-invariant:
    kernel arguments, block ids -> the SGPR base), `step` (uniform but changing every K tile:
    the loop counter), `lane` (per lane, loop-invariant) and `const` (compile time). None
    means 0. step and lane make the 32-bit VGPR offset (see `_address` for why the step is
    there and not in the base)."""
    uniform: object = None
    lane: object = None
    const: int = 0
    step: object = None

    def total(self):
        """The position as one index value (for guards and memref accesses)."""
        parts = [p for p in (self.uniform, self.step, self.lane) if p is not None]
        v = parts[0] if parts else irb.c(0)
        for p in parts[1:]:
            v = irb.add(v, p)
        return irb.add(v, self.const) if self.const else v

    def half(self) -> "Pos":
        """This position / 2, part by part (every part even: tile origins, K steps and lane
        runs of packed i4 are)."""
        h = [None if v is None else irb.div(v, 2) for v in (self.uniform, self.lane, self.step)]
        return Pos(h[0], h[1], self.const // 2, h[2])

    def step_plus(self, n: int) -> "Pos":
        """This position moved by n inside the VGPR offset (one 32-bit add per access and
        tile) rather than by a constant: a row constant becomes its own SGPR base, which the
        loop-invariant code motion hoists out of the K loop -- fine for a few rows, but a
        gather's 16-32 rows per fragment held 64 SGPRs and spilled (38-39 SGPRs, i4 NN/TT)."""
        return Pos(self.uniform, self.lane, self.const, irb.c(n) if self.step is None else _add(self.step, n))

    def plus(self, const: int, lane=None) -> "Pos":
        """This position moved by a constant and (optionally) a per-lane value."""
        if lane is not None:
            lane = lane if self.lane is None else _add(self.lane, lane)
        return Pos(self.uniform, self.lane if lane is None else lane, self.const + const, self.step)


def chunk_width(total: int, align: int, load_bits: int, elem_bits: int) -> int:
    """Largest power of two w <= load_bits/elem_bits dividing `total` (the run length) and
    `align` (the row length and strides: chunks never straddle the edge or misalign)."""
    w = max(1, load_bits // elem_bits)
    while w > 1 and (total % w or align % w):
        w //= 2
    return w


def _nuw():
    return ir.Attribute.parse("#arith.overflow<nsw, nuw>")


def _add(a, b):
    """index add of non-negative values whose sum stays < 2**31 (in-buffer positions)."""
    return arith.AddIOp(a, irb._v(b), overflowFlags=_nuw()).result


def _mul(a, b):
    return arith.MulIOp(a, irb._v(b), overflowFlags=_nuw()).result


def _sub(a, b):
    return arith.SubIOp(a, irb._v(b), overflowFlags=_nuw()).result


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


def _address(x: Stored, b, row: Pos, col: Pos, w_clamp: int):
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
    r0, rl, _ = _axis(row, x.guard_rows, irb.sub(x.rows, 1), True)
    c0, cl, cc = _axis(col, x.guard_cols, irb.sub(x.cols, w_clamp), False)
    base_elems = _add(_add(_mul(b, x.sb), _mul(r0, x.sr)), c0)
    base = saddr.offset_by(x.ptr, saddr.byte_offset(base_elems, x.elem_bytes))
    lane = None
    if rl is not None:
        lane = _mul(rl, x.sr)
    if cl is not None:
        lane = cl if lane is None else _add(lane, cl)
    p = base if lane is None else saddr.offset_by(base, saddr.byte_offset(lane, x.elem_bytes))
    return saddr.gep_bytes(p, cc * x.elem_bytes) if cc else p


def _load(x: Stored, b, row: Pos, col: Pos, n: int, w_clamp: int) -> ir.Value:
    """vector<n x storage> (or the scalar for n=0) at (b, row, col), without the zero select."""
    return saddr.load(_address(x, b, row, col, w_clamp), n, irb.storage_type(x.dtype), x.elem_bytes)


def write(x: Stored, b, row: Pos, col: Pos, value: ir.Value) -> None:
    """Store one storage element at (b, row, col) (unguarded: callers predicate edges)."""
    saddr.store(value, _address(x, b, row, col, 1), x.elem_bytes)


def read_chunk(x: Stored, b, row: Pos, col: Pos, w: int) -> ir.Value:
    """vector<w x storage> at (row, col..col+w), zeros where outside the matrix."""
    v = _load(x, b, row, col, w, w)
    ok = _in_bounds(x, row.total() if x.guard_rows else None, col.total() if x.guard_cols else None)
    return v if ok is None else irb.select(ok, v, irb.zeros(irb.vec(w, irb.storage_type(x.dtype))))


def read_scalar(x: Stored, b, row: Pos, col: Pos) -> ir.Value:
    v = _load(x, b, row, col, 0, 1)
    ok = _in_bounds(x, row.total() if x.guard_rows else None, col.total() if x.guard_cols else None)
    if ok is None:
        return v
    zero = irb.cf(0.0, v.type) if irb.is_float(v.type) else arith.ConstantOp(v.type, 0).result
    return irb.select(ok, v, zero)


def read_row_run(x: Stored, b, row: Pos, col: Pos, n: int, load_bits: int) -> ir.Value:
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
