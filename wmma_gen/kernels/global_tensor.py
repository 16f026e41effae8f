"""The one global-memory tensor of kernels/: `GlobalTensor` -- a pointer, a dtype, element strides
of the outer axes (the innermost axis is contiguous), optionally run-time extents with guard flags
and a compile-time `align` -- read and written in the FLAT-global "saddr" form (kernels/saddr.py).

    GEMM operand / output (batch, rows, cols):  strides (sb, sr), element (b, r, c) at b*sb + r*sr + c
    attention tensor (batch, seq, head, dim):   strides (sb, ss, sh), element at b*sb + s*ss + h*sh + d
    attention row vector (batch, head, seq):    strides (sb, 1, sh) (the sequence axis contiguous)
    paged K/V cache (block, slot, head, dim):   strides (sblk, ss, sh)

Addressing: every access is `global_load/store v_off, s[base:base+1] offset:imm` -- a uniform
64-bit base in SGPRs plus a zero-extended unsigned 32-bit per-lane VGPR offset plus an immediate
(RDNA3 ISA guide ch. 10 "Global, Scratch and Flat Instructions", SADDR field; RDNA4 ISA guide,
same chapter). A position is therefore given split by who knows it (`Pos`, or the attention's
`read(uniform, lane, n, imm)`): the uniform part (batch, head, tile origin, split-K start, row
constants) goes into the SGPR base; the per-lane part (thread and lane ids, row within a tile,
column) is the 32-bit VGPR offset; constant column offsets become the immediate. With run-time
strides the alternative -- one 64-bit address per lane and load, rebuilt every K tile -- cost
v_lshlrev_b64/v_add_co pairs per load and many live 64-bit VGPR pairs (and the spills of 64x64
direct-to-fragment tiles and of gfx1201's k_unroll 2).

Guarded access (GEMM, kernels/globalmem.py): sizes are run-time values (kernel arguments); what is
known at compile time is which axes need guards and `align`, the power of two that divides the row
length and every outer stride (part of the op's specialization key). Edges are handled in-kernel,
never by padding on the host: a read outside the matrix returns zeros. A chunk of `w` consecutive
elements along the stored row is wholly inside or wholly outside when w divides the row length, so
one clamped vector load plus one select covers it; `chunk_width` picks such a w, never wider than
`align` (so every vector access is aligned to its own width). In the K loop the step is added to
the VGPR offset once per iteration (one v_add_nc_u32 per distinct lane offset: why not the base,
see globalmem._address).

Offsets fit: both parts of an address -- the uniform base (`row_base`: batch, head, first row)
and the lane part -- are unsigned 32-bit byte offsets (saddr.byte_offset, zero-extended), exact
only while every in-buffer byte offset is < 2**32 (MAX_OFFSET_BYTES). The launcher limits every
buffer's span to < 2**31 elements (device/launcher.MAX_SPAN_ELEMS; kernels index with 32 bits),
which keeps elements of at most 16 bits inside that. Wider elements (f32: the GEMM's 32-bit
output, the attention backward's LSE/Di row vectors and f32 gradients) could reach 2**33 bytes,
so such a tensor must say that its op bounds the bytes (`offsets_checked`, refused otherwise):
GEMM by the legality schedule.output_offsets, the attention backward by its kernel arguments'
`KArg.offset_bits` (kernels/signature.py: a problem whose buffer exceeds 2**32 bytes is refused
naming the argument, its bytes and the limit before anything is allocated or launched).

A tensor of the attention backward kept behind a flat memref view (not one of its SADDR_TENSORS)
has the view as `ptr`; only `row_base` applies to it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith

from ..dtype_bits import BITS
from . import irb, saddr

MAX_OPERAND_BITS = 16   # byte offsets < 2 * 2**31 (see the module docstring)
MAX_OFFSET_BYTES = 2 ** 32   # unsigned 32-bit byte offsets (saddr.byte_offset): every offset below this


@dataclass(frozen=True)
class GlobalTensor:
    """ptr: !llvm.ptr<1> (a kernel argument; or a flat memref view, see the module docstring);
    dtype; strides: element strides of the outer axes as index values, outermost first (the
    innermost axis is contiguous). Guarded 2-D form (GEMM): extents = (rows, cols) in storage
    elements (bytes for i4) as run-time index values, guards = whether reads must be guarded
    along (rows, cols), align = the compile-time alignment (elements) of the row length and
    strides; offsets_checked: the op bounds wider elements' byte offsets itself (below
    MAX_OFFSET_BYTES: GEMM schedule.output_offsets, KArg.offset_bits)."""
    ptr: ir.Value
    dtype: str
    strides: tuple
    extents: tuple | None = None
    guards: tuple = (False, False)
    align: int = 1
    offsets_checked: bool = False

    def __post_init__(self):
        if self.elem_bits > MAX_OPERAND_BITS and not self.offsets_checked:
            # guarded or not: the base and the lane part are both 32-bit byte offsets (module docstring)
            raise ValueError(f"GlobalTensor.dtype={self.dtype!r}: {self.elem_bits}-bit elements are not "
                             f"allowed unless the op bounds the byte offsets below 2**32 (offsets_checked); "
                             f"at most {MAX_OPERAND_BITS} bits otherwise (32-bit byte offsets, module docstring)")
        if self.extents is not None and len(self.extents) != 2:
            raise ValueError(f"GlobalTensor.extents has {len(self.extents)} axes; allowed: None or (rows, cols)")

    @property
    def elem_bits(self) -> int:
        return 8 if self.dtype == "i4" else BITS[self.dtype]

    @property
    def elem_bytes(self) -> int:
        return self.elem_bits // 8

    @property
    def row_stride(self):
        """Element stride of the row axis, strides[1]: the sequence of an attention tensor, the
        slot of a paged cache block, the row of a GEMM matrix."""
        return self.strides[1]

    def byte_offset(self, elems) -> ir.Value:
        """An element offset (index, >= 0) as the unsigned i32 byte offset `read_at` takes
        (exact below MAX_OFFSET_BYTES, module docstring)."""
        return saddr.byte_offset(elems, self.elem_bytes)

    def row_base(self, *index):
        """Element offset of the row at the outer-axis `index` (one value per stride: the
        attention's (b, row0, h) -> b*sb + row0*ss + h*sh)."""
        if len(index) != len(self.strides):
            raise ValueError(f"GlobalTensor.row_base: {len(index)} indices for {len(self.strides)} strides")
        off = irb.mul(index[0], self.strides[0])
        for i, s in zip(index[1:], self.strides[1:]):
            off = irb.add(off, irb.mul(i, s))
        return off

    def _at(self, uniform, lane, imm_elems: int):
        base = saddr.offset_by(self.ptr, saddr.byte_offset(uniform, self.elem_bytes))
        addr = saddr.offset_by(base, saddr.byte_offset(lane, self.elem_bytes))
        return saddr.gep_bytes(addr, imm_elems * self.elem_bytes) if imm_elems else addr

    def read(self, uniform, lane, n: int, imm_elems: int = 0) -> ir.Value:
        """vector<n x storage> at element uniform + lane + imm_elems (unguarded): uniform is the
        same in every lane (SGPR base), lane the per-lane offset; both in the same block as the
        load, so the backend selects the saddr form (saddr module docstring)."""
        return saddr.load(self._at(uniform, lane, imm_elems), n, irb.storage_type(self.dtype), self.elem_bytes)

    def read_at(self, byte_off: ir.Value, n: int, imm_elems: int = 0) -> ir.Value:
        """vector<n x storage> at ptr + zext(byte_off) + imm_elems: the attention forward's and
        paged decode's form, where the caller has already summed a tile's uniform offset and the
        lane's row/column into one i32 byte offset (`byte_offset`; kv_tiles.lane_offsets +
        tile_offset)."""
        return saddr.load_at(self.ptr, byte_off, n, irb.storage_type(self.dtype), self.elem_bytes,
                             imm_elems * self.elem_bytes)

    def write(self, uniform, lane, value: ir.Value, imm_elems: int = 0) -> None:
        """Store value (a vector or one element) at element uniform + lane + imm_elems, split as
        in `read` (uniform: SGPR base, lane: VGPR offset, both in the store's block)."""
        saddr.store(value, self._at(uniform, lane, imm_elems), self.elem_bytes)


@dataclass(frozen=True)
class Pos:
    """An index split by who knows it: `uniform` (the same in every lane and loop-invariant:
    kernel arguments, block ids -> the SGPR base), `step` (uniform but changing every K tile:
    the loop counter), `lane` (per lane, loop-invariant) and `const` (compile time). None
    means 0. step and lane make the 32-bit VGPR offset (see globalmem._address for why the step is
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


def _add(a, b):
    """index add of non-negative values whose sum stays < 2**31 (in-buffer positions)."""
    return arith.AddIOp(a, irb._v(b), overflowFlags=_nuw()).result


def _nuw():
    return ir.Attribute.parse("#arith.overflow<nsw, nuw>")
