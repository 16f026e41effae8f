"""Tiny helpers over the upstream MLIR Python bindings (index math, constants, types).

Kept small on purpose: the kernel builders read like the math, these hide the
boilerplate of creating attributes and result types.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, scf
from ..compiler.mlir_api import llvm_ops as llvm
from ..compiler.mlir_api import rocdl_ops as rocdl

_ELEM_TYPES = {
    # storage element type of each dtype name in memory (memref element type)
    "f16": lambda: ir.F16Type.get(), "bf16": lambda: ir.BF16Type.get(),
    "f32": lambda: ir.F32Type.get(), "i32": lambda: ir.IntegerType.get_signless(32),
    "i8": lambda: ir.IntegerType.get_signless(8), "i4": lambda: ir.IntegerType.get_signless(8),
    "fp8": lambda: ir.IntegerType.get_signless(8), "bf8": lambda: ir.IntegerType.get_signless(8),
}
_VALUE_TYPES = {
    # register element type of each dtype name (what WMMA consumes)
    "i4": lambda: ir.IntegerType.get_signless(4),
    "fp8": lambda: ir.Type.parse("f8E4M3FN"), "bf8": lambda: ir.Type.parse("f8E5M2"),
}


def storage_type(dtype: str) -> ir.Type:
    return _ELEM_TYPES[dtype]()


def value_type(dtype: str) -> ir.Type:
    return _VALUE_TYPES.get(dtype, _ELEM_TYPES[dtype])()


def index() -> ir.Type:
    return ir.IndexType.get()


def vec(n: int, t: ir.Type) -> ir.VectorType:
    return ir.VectorType.get([n], t)


def c(v: int) -> ir.Value:
    """index constant"""
    return arith.ConstantOp(index(), v).result


def ci(v: int, bits: int) -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(bits), v).result


def cf(v: float, t: ir.Type) -> ir.Value:
    return arith.ConstantOp(t, v).result


def add(a, b):
    return arith.AddIOp(a, _v(b)).result


def sub(a, b):
    return arith.SubIOp(a, _v(b)).result


def mul(a, b):
    return arith.MulIOp(a, _v(b)).result


def _nsw():
    return ir.Attribute.parse("#arith.overflow<nsw>")


def iadd(a, b):
    """index add, no signed wrap (index math of non-negative values < 2**31: attention)."""
    return arith.AddIOp(a, _v(b), overflowFlags=_nsw()).result


def imul(a, b):
    """index multiply, no signed wrap (as iadd)."""
    return arith.MulIOp(a, _v(b), overflowFlags=_nsw()).result


def imin(a, b):
    return arith.MinSIOp(a, _v(b)).result


def imax(a, b):
    return arith.MaxSIOp(a, _v(b)).result


def div(a, b):
    return arith.DivUIOp(a, _v(b)).result


def rem(a, b):
    return arith.RemUIOp(a, _v(b)).result


def minu(a, b):
    return arith.MinUIOp(a, _v(b)).result


def lt(a, b):
    return arith.CmpIOp(arith.CmpIPredicate.ult, a, _v(b)).result


def land(a, b):
    return arith.AndIOp(a, b).result


def select(cond, a, b):
    return arith.SelectOp(cond, a, b).result


def uniform(v):
    """`v` (an index value the same in every lane) read from the first lane: the backend then
    keeps it and everything computed from it in SGPRs (llvm.amdgcn.readfirstlane is uniform by
    definition; AMDGPUUsage "AMDGPU Intrinsics"). Needed after a run-time division: its
    float-reciprocal expansion runs in VALU, and LLVM 24 on gfx12 left the whole tile-origin
    chain there, rebuilding every SGPR base with v_readfirstlane inside the K loop
    (docs/mlir_providers.md)."""
    i32 = ir.IntegerType.get_signless(32)
    x = arith.index_cast(i32, v)
    return arith.index_cast(index(), rocdl.ReadfirstlaneOp(i32, x).result)


def _v(x):
    return c(x) if isinstance(x, int) else x


def zeros(vt: ir.VectorType) -> ir.Value:
    et = vt.element_type
    zero = ir.FloatAttr.get(et, 0.0) if is_float(et) else ir.IntegerAttr.get(et, 0)
    return arith.ConstantOp(vt, ir.DenseElementsAttr.get_splat(vt, zero)).result


def is_float(t: ir.Type) -> bool:
    return any(isinstance(t, k) for k in (ir.F16Type, ir.BF16Type, ir.F32Type))


# Instruction classes llvm.amdgcn.sched.barrier may move across, as mask bits (LLVM AMDGPUUsage,
# "llvm.amdgcn.sched.barrier"; the same bits as MLIR's amdgpu.sched_barrier options).
SCHED_GROUPS = {"none": 0, "non_mem_non_sideeffect": 0x1, "valu": 0x2, "salu": 0x4, "mfma_wmma": 0x8,
                "all_vmem": 0x10, "vmem_read": 0x20, "vmem_write": 0x40, "all_ds": 0x80, "ds_read": 0x100,
                "ds_write": 0x200, "transcendental": 0x400}


def sched_barrier(*allow: str) -> None:
    """A scheduling barrier only the named instruction classes may cross (none: nothing does).

    Emitted as the intrinsic call `amdgpu.sched_barrier` lowers to, because that op's printed
    form differs between MLIR versions (`allow = <none>` with #amdgpu.sched_barrier_opt up to
    LLVM 23, `allow = none` with #rocdl.sched_group_mask from LLVM 24): the call reads the
    same in both and is what the op becomes (mlir-gml's GEMM ISA is byte-identical)."""
    mask = 0
    for name in allow:
        if name not in SCHED_GROUPS:
            raise ValueError(f"sched_barrier group {name!r} is not allowed: one of {', '.join(SCHED_GROUPS)}")
        mask |= SCHED_GROUPS[name]
    llvm.CallIntrinsicOp(None, "llvm.amdgcn.sched.barrier", [ci(mask, 32)], [], ir.DenseI32ArrayAttr.get([]))


def keep_unroll(loop) -> None:
    """Mark an scf.for so LLVM does not unroll it further: the schedule's own unroll (a knob)
    is what runs. convert-scf-to-cf copies LLVM-dialect attributes of the loop onto its
    back-edge branch and the cf->llvm lowering keeps them, so the name must be llvm.br's own
    `loop_annotation` (under `llvm.loop_annotation` it stays a discardable attribute that
    translation drops); it becomes `!llvm.loop !{"llvm.loop.unroll.disable"}` (LLVM LangRef,
    "'llvm.loop.unroll.disable' Metadata"). LLVM 24 runtime-unrolls short K loops x2-x4 with
    a remainder loop (LLVM 23 did not); the loop-trip model and the tuner's k_unroll knob
    assume the loop as built."""
    loop.operation.attributes["loop_annotation"] = ir.Attribute.parse(
        "#llvm.loop_annotation<unroll = <disable = true>>")


def if_then(cond, fn) -> None:
    """scf.if without results: fn() emits the then-block."""
    op = scf.IfOp(cond)
    with ir.InsertionPoint(op.then_block):
        fn()
        scf.YieldOp([])
