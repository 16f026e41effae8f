"""Global-memory addressing in the FLAT-global "saddr" form, the one way every kernel reaches
global memory through a pointer argument:

    global_load/store v_off, s[base:base+1] offset:imm
    address = 64-bit uniform base (SGPRs) + zext(unsigned 32-bit per-lane offset, VGPR) + imm

(RDNA3 ISA guide ch. 10 "Global, Scratch and Flat Instructions", SADDR field; RDNA4 ISA guide,
same chapter; LLVM AMDGPU syntax `vaddr` + `saddr`.) The backend selects that form when it
sees `gep i8 (uniform ptr), zext(i32)` in the access's own basic block (LLVM
AMDGPUISelDAGToDAG::SelectGlobalSAddr matches `add (uniform i64), (zext i32)`), so a load
costs no 64-bit address arithmetic. The offset is exact as unsigned 32 bits when every byte
offset in the buffer is < 2**32: the launcher limits spans to < 2**31 elements
(device/launcher.MAX_SPAN_ELEMS) and 16-bit elements double that at most
(global_tensor.GlobalTensor refuses wider ones unless the op bounds their bytes: offsets_checked,
KArg.offset_bits). The immediate is 13-bit signed on gfx11 and 24-bit signed on gfx12; callers
keep it below 4096.

Used by kernels/global_tensor.py (GlobalTensor: GEMM's guarded strided matrices via
kernels/globalmem.py; every attention backward tensor but cu_seqlens: reads, LSE/Di staging, the
dQ/dK/dV/Di stores; the attention forward's and paged decode's tile copies and Q fragments,
kernels/staging/kv_tiles.py and kernels/attention/operands.py via GlobalTensor.read_at). The forward's O
stays a flat memref view (ops/attention/kernel.epilogue says why).
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import llvm_ops as llvm
from ..compiler.mlir_api import arith

from . import irb

MAX_IMM = 4096   # immediate byte offsets callers stay below (gfx11: 13-bit signed field)


def pointer_type() -> ir.Type:
    """Function-boundary type of a buffer reached through saddr loads/stores: a global-address-
    space pointer (one 8-byte kernarg, like the bare-pointer memrefs)."""
    return ir.Type.parse("!llvm.ptr<1>")


def gep_bytes(ptr: ir.Value, off) -> ir.Value:
    """ptr + off bytes (an int: a constant GEP index, folded into the immediate; else an i64
    value). inbounds | nusw | nuw: every offset here is non-negative and inside the buffer."""
    i8 = ir.IntegerType.get_signless(8)
    dyn = -2 ** 31  # LLVM::GEPOp::kDynamicIndex
    flags = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 7)
    if isinstance(off, int):
        return llvm.GEPOp(ptr.type, ptr, [], ir.DenseI32ArrayAttr.get([off]), ir.TypeAttr.get(i8), flags).result
    return llvm.GEPOp(ptr.type, ptr, [off], ir.DenseI32ArrayAttr.get([dyn]), ir.TypeAttr.get(i8), flags).result


def byte_offset(elems, elem_bytes: int) -> ir.Value:
    """An index-typed element offset (>= 0) as the unsigned i32 byte offset: index_cast and a
    nuw multiply (exact, module docstring); 1-byte elements need no multiply."""
    i32 = ir.IntegerType.get_signless(32)
    e = arith.index_cast(i32, elems)
    if elem_bytes > 1:
        e = arith.MulIOp(e, arith.ConstantOp(i32, elem_bytes).result,
                         overflowFlags=ir.Attribute.parse("#arith.overflow<nuw>")).result
    return e


def offset_by(ptr: ir.Value, byte_off: ir.Value) -> ir.Value:
    """ptr + zext(byte_off): the uniform-base + 32-bit-lane-offset pair the backend matches."""
    return gep_bytes(ptr, llvm.ZExtOp(ir.IntegerType.get_signless(64), byte_off).result)


def offset_by_signed(ptr: ir.Value, byte_off: ir.Value) -> ir.Value:
    """ptr + byte_off for a signed i64 uniform offset, no wrap and no in-bounds promise: the paged
    cache's block offset (block id x block bytes), where a block id outside the cache must land
    outside the buffer (an emulator fault, a GPU memory fault) instead of wrapping into it
    modulo 2**32 (ops/paged_attention/cache_tiles.block_tensor)."""
    i8 = ir.IntegerType.get_signless(8)
    return llvm.GEPOp(ptr.type, ptr, [byte_off], ir.DenseI32ArrayAttr.get([-2 ** 31]), ir.TypeAttr.get(i8),
                      ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)).result


def _align(nbytes: int) -> ir.Attribute:
    """The element's own alignment (b128 loads need no more on global memory)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), nbytes)


def load(addr: ir.Value, n: int, elem_type: ir.Type, elem_bytes: int) -> ir.Value:
    """vector<n x elem_type> (the scalar for n=0) at addr."""
    t = irb.vec(n, elem_type) if n else elem_type
    return llvm.LoadOp(t, addr, alignment=_align(elem_bytes)).result


def store(value: ir.Value, addr: ir.Value, elem_bytes: int) -> None:
    llvm.StoreOp(value, addr, alignment=_align(elem_bytes))


def load_at(ptr: ir.Value, byte_off: ir.Value, n: int, elem_type: ir.Type, elem_bytes: int,
            imm: int = 0) -> ir.Value:
    """vector<n x elem_type> at ptr + zext(byte_off) + imm (ptr uniform, byte_off unsigned i32)."""
    p = offset_by(ptr, byte_off)
    return load(gep_bytes(p, imm) if imm else p, n, elem_type, elem_bytes)
