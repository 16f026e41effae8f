"""Builders for the AMDGPU-dialect ops wmma_gen emits, for providers that register the
dialect but ship no generated `_amdgpu_ops_gen` Python module (FlyDSL's `flydsl._mlir`).

Same call signatures as the generated classes (upstream mlir/dialects/_amdgpu_ops_gen.py),
built with `ir.Operation.create`, so a builder reads the same under every provider. Each
returns the verified Operation (`.result`, `.results`, `.operation`).
"""
from __future__ import annotations

from . import mlir_api as _api


def _create(name: str, results=(), operands=(), attributes=None, loc=None, ip=None):
    op = _api.ir.Operation.create(name, results=list(results), operands=list(operands),
                                  attributes=attributes or {}, loc=loc, ip=ip)
    op.verify()
    return op


def _i32(v):
    return v if isinstance(v, _api.ir.Attribute) else _api.ir.IntegerAttr.get(_api.ir.IntegerType.get_signless(32), v)


def WMMAOp(m, n, k, sourceA, sourceB, destC, *, subwordOffset=None, unsignedA=None, unsignedB=None,
           clamp=None, results=None, loc=None, ip=None):
    """amdgpu.wmma: destD = sourceA * sourceB + destC (destD has destC's type)."""
    attrs = {"m": _i32(m), "n": _i32(n), "k": _i32(k)}
    if subwordOffset is not None:
        attrs["subwordOffset"] = _i32(subwordOffset)
    for flag, on in (("unsignedA", unsignedA), ("unsignedB", unsignedB), ("clamp", clamp)):
        if on:
            attrs[flag] = _api.ir.UnitAttr.get()
    return _create("amdgpu.wmma", results or [destC.type], [sourceA, sourceB, destC], attrs, loc, ip)


def LDSBarrierOp(*, loc=None, ip=None):
    """amdgpu.lds_barrier: a workgroup barrier that only orders LDS accesses."""
    return _create("amdgpu.lds_barrier", loc=loc, ip=ip)
