"""A (batch, sequence, head, dim) tensor in global memory, read in the saddr form (kernels/saddr.py).

    element (b, s, h, d)  at  b*sb + s*ss + h*sh + d      (element strides: kernel arguments)

`read(uniform, lane, n)` splits an element position by who knows it, as GEMM's globalmem.Pos
does: the uniform part (batch, head, a tile's first row: SGPRs) becomes the 64-bit base, the
per-lane part (row within the tile, column) the unsigned 32-bit VGPR offset, a constant column
the immediate -- one global_load per run instead of a 64-bit address per lane and load. Both
parts are element offsets < 2**31 inside the buffer (launcher span limit), so the byte offsets of
16-bit elements fit 32 unsigned bits (saddr module docstring).

`write` stores in the same form (the attention backward's dQ/dK/dV and the pre-pass's Di). The
class can also describe a tensor kept behind a flat memref view: `ref` is then the view, and only
`row_base` applies.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler.mlir_api import ir

from . import irb, saddr


@dataclass(frozen=True)
class RowTensor:
    """ref: !llvm.ptr<1> (saddr reads) or a flat memref view; element strides as index values
    (row vectors (batch, head, seq): ss = 1)."""
    ref: ir.Value
    dtype: str
    sb: object
    ss: object
    sh: object

    @property
    def elem_bytes(self) -> int:
        return irb.storage_type(self.dtype).width // 8

    def row_base(self, b, row0, h):
        """Element offset of (b, row0, h, 0) (row vectors: of (b, h, row0))."""
        return irb.add(irb.add(irb.mul(b, self.sb), irb.mul(row0, self.ss)), irb.mul(h, self.sh))

    def read(self, uniform, lane, n: int, imm_elems: int = 0) -> ir.Value:
        """vector<n x storage> at element uniform + lane + imm_elems: uniform is the same in every
        lane (SGPR base), lane the per-lane offset; both in the same block as the load, so the
        backend selects the saddr form (saddr module docstring)."""
        base = saddr.offset_by(self.ref, saddr.byte_offset(uniform, self.elem_bytes))
        addr = saddr.offset_by(base, saddr.byte_offset(lane, self.elem_bytes))
        if imm_elems:
            addr = saddr.gep_bytes(addr, imm_elems * self.elem_bytes)
        return saddr.load(addr, n, irb.storage_type(self.dtype), self.elem_bytes)

    def write(self, uniform, lane, value: ir.Value, imm_elems: int = 0) -> None:
        """Store value (a vector or one element) at element uniform + lane + imm_elems, split as
        in `read` (uniform: SGPR base, lane: VGPR offset, both in the store's block)."""
        base = saddr.offset_by(self.ref, saddr.byte_offset(uniform, self.elem_bytes))
        addr = saddr.offset_by(base, saddr.byte_offset(lane, self.elem_bytes))
        if imm_elems:
            addr = saddr.gep_bytes(addr, imm_elems * self.elem_bytes)
        saddr.store(value, addr, self.elem_bytes)
