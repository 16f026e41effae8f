"""Run-time shaped kernel arguments: bare pointers viewed as strided memrefs.

The pipeline lowers kernel memrefs with `use-bare-ptr-memref-call-conv` (one 8-byte
pointer per buffer; compiler/pipeline.py), which needs static memref types at the function
boundary. So a buffer argument is declared `memref<1 x T>` and re-viewed inside the kernel
with `memref.reinterpret_cast` to `memref<?x..x?xT, strided<[?, .., 1]>>`, whose sizes and
strides are i32 scalar kernel arguments. One code object then serves every problem size and
every strided host view; the last dimension is always unit-stride (vector loads need it).
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, memref

from . import irb

DYN = ir.ShapedType.get_dynamic_size()


def pointer_type(dtype: str) -> ir.MemRefType:
    """The function-boundary type of a buffer argument (lowered to one bare pointer)."""
    return ir.MemRefType.get([1], irb.storage_type(dtype))


def i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def as_index(v: ir.Value) -> ir.Value:
    """An i32 kernel argument as an index value (32-bit index: free)."""
    return arith.index_cast(irb.index(), v)


def strided_view(ptr: ir.Value, dtype: str, sizes: list, strides: list) -> ir.Value:
    """`ptr` seen as a len(sizes)-D memref; sizes/strides are index Values or ints; the
    last stride must be 1 (pass strides for the outer dims only)."""
    rank = len(sizes)
    if len(strides) != rank - 1:
        raise ValueError(f"strided_view: {rank} sizes need {rank - 1} outer strides, got {len(strides)}")
    dyn_sizes = [s for s in sizes if not isinstance(s, int)]
    dyn_strides = [s for s in strides if not isinstance(s, int)]
    static_sizes = [s if isinstance(s, int) else DYN for s in sizes]
    static_strides = [s if isinstance(s, int) else DYN for s in strides] + [1]
    layout = ir.StridedLayoutAttr.get(0, static_strides)
    t = ir.MemRefType.get(static_sizes, irb.storage_type(dtype), layout=layout)
    return memref.ReinterpretCastOp(t, ptr, [], dyn_sizes, dyn_strides, [0], static_sizes, static_strides).result


def flat_view(ptr: ir.Value, dtype: str) -> ir.Value:
    """`ptr` re-viewed as memref<?xT> of 2^31-1 elements: for kernels that index with their own
    i32 offsets (base + row * row_stride + col), so any strided layout is a matter of scalar
    strides (the attention forward, combine and paged kernels)."""
    t = ir.MemRefType.get([DYN], irb.storage_type(dtype))
    return memref.ReinterpretCastOp(t, ptr, [], [irb.c(2 ** 31 - 1)], [], [0], [DYN], [1]).result
