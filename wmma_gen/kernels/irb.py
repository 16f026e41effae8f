"""Tiny helpers over the upstream MLIR Python bindings (index math, constants, types).

Kept small on purpose: the kernel builders read like the math, these hide the
boilerplate of creating attributes and result types.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

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


def _v(x):
    return c(x) if isinstance(x, int) else x


def zeros(vt: ir.VectorType) -> ir.Value:
    et = vt.element_type
    zero = ir.FloatAttr.get(et, 0.0) if is_float(et) else ir.IntegerAttr.get(et, 0)
    return arith.ConstantOp(vt, ir.DenseElementsAttr.get_splat(vt, zero)).result


def is_float(t: ir.Type) -> bool:
    return any(isinstance(t, k) for k in (ir.F16Type, ir.BF16Type, ir.F32Type))
