"""Builders for the AMDGPU-dialect ops wmma_gen emits, for providers that register the
dialect but ship no generated `_amdgpu_ops_gen` Python module (FlyDSL's `flydsl._mlir`).

Same call signatures as the generated classes (upstream mlir/dialects/_amdgpu_ops_gen.py),
built with `ir.Operation.create`, so a builder reads the same under every provider. Each
returns the verified Operation (`.result`, `.results`, `.operation`).

The provider's `ir` module is handed in by compiler/mlir_api.py (AmdgpuOps(ir)), so this file
imports nothing from mlir_api: the selection module depends on the builders, not the reverse.
"""
from __future__ import annotations


class AmdgpuOps:
    """The AMDGPU op builders over one provider's `ir` module."""

    def __init__(self, ir):
        self.ir = ir

    def _create(self, name: str, results=(), operands=(), attributes=None, loc=None, ip=None):
        op = self.ir.Operation.create(name, results=list(results), operands=list(operands),
                                      attributes=attributes or {}, loc=loc, ip=ip)
        op.verify()
        return op

    def _i32(self, v):
        ir = self.ir
        return v if isinstance(v, ir.Attribute) else ir.IntegerAttr.get(ir.IntegerType.get_signless(32), v)

    def WMMAOp(self, m, n, k, sourceA, sourceB, destC, *, subwordOffset=None, unsignedA=None, unsignedB=None,
               clamp=None, results=None, loc=None, ip=None):
        """amdgpu.wmma: destD = sourceA * sourceB + destC (destD has destC's type)."""
        attrs = {"m": self._i32(m), "n": self._i32(n), "k": self._i32(k)}
        if subwordOffset is not None:
            attrs["subwordOffset"] = self._i32(subwordOffset)
        for flag, on in (("unsignedA", unsignedA), ("unsignedB", unsignedB), ("clamp", clamp)):
            if on:
                attrs[flag] = self.ir.UnitAttr.get()
        return self._create("amdgpu.wmma", results or [destC.type], [sourceA, sourceB, destC], attrs, loc, ip)

    def LDSBarrierOp(self, *, loc=None, ip=None):
        """amdgpu.lds_barrier: a workgroup barrier that only orders LDS accesses."""
        return self._create("amdgpu.lds_barrier", loc=loc, ip=ip)
