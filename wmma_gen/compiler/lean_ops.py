"""Builders for the few LLVM-, ROCDL- and GPU-dialect ops wmma_gen emits, in place of the
provider's generated `_llvm_ops_gen` / `_rocdl_ops_gen` / `_gpu_ops_gen` modules (issue 36 item 5:
the first compile's imports).

Those generated modules define a Python class for every op of the dialect (FlyDSL: 1.1 MB,
1.4 MB and 0.3 MB of source); importing them was ~100 ms CPU of a first compile, for the 22 ops
used here.
Each builder has the generated class's (or function's) call signature and sets exactly the
operands and attributes the generated builder sets, through `ir.Operation.create`, so the
printed MLIR is the same (bench/codegen_fingerprint.py checks it). Class-style names return the
Operation (`.result`, `.results`); lower-case function-style names return the result Value.

`lazy_dialect_modules` keeps the bindings from importing the generated modules anyway: MLIR's
Python bindings import `<package>.dialects.<namespace>` the first time they meet an op, type or
attribute of a dialect (to register its Python classes); a placeholder module in sys.modules
satisfies that import and becomes the real module on first use of any name it defines.

Like amdgpu_ops.py, this file imports nothing from mlir_api: mlir_api hands in its `ir`.
"""
from __future__ import annotations

import importlib.util
import sys
import types


class _Ops:
    def __init__(self, ir):
        self.ir = ir

    def _create(self, name, results=(), operands=(), attributes=None, loc=None, ip=None):
        return self.ir.Operation.create(name, results=list(results), operands=list(operands),
                                        attributes=attributes or {}, loc=loc, ip=ip)

    def _int(self, bits, v):
        ir = self.ir
        return v if isinstance(v, ir.Attribute) else ir.IntegerAttr.get(ir.IntegerType.get_signless(bits), v)

    def _str(self, v):
        return v if isinstance(v, self.ir.Attribute) else self.ir.StringAttr.get(v)

    def _i32_array(self, v):
        return v if isinstance(v, self.ir.Attribute) else self.ir.DenseI32ArrayAttr.get(list(v))

    def _unary(self, name, res, arg, loc, ip):
        return self._create(name, [res], [arg], loc=loc, ip=ip)


class LlvmOps(_Ops):
    """llvm.* builders (upstream mlir/dialects/_llvm_ops_gen.py signatures)."""

    def GEPOp(self, res, base, dynamicIndices, rawConstantIndices, elem_type, noWrapFlags, *, loc=None, ip=None):
        """llvm.getelementptr. `noWrapFlags` is accepted and not set: the generated builders of
        both providers (FlyDSL 0.5.0, mlir-gml 0.0.4) drop it too, and the IR must not change."""
        ir = self.ir
        attrs = {"rawConstantIndices": self._i32_array(rawConstantIndices),
                 "elem_type": elem_type if isinstance(elem_type, ir.Attribute) else ir.TypeAttr.get(elem_type)}
        return self._create("llvm.getelementptr", [res], [base, *dynamicIndices], attrs, loc, ip)

    def ZExtOp(self, res, arg, *, nonNeg=None, loc=None, ip=None):
        attrs = {"nonNeg": self.ir.UnitAttr.get()} if nonNeg else {}
        return self._create("llvm.zext", [res], [arg], attrs, loc, ip)

    def LoadOp(self, res, addr, *, alignment=None, loc=None, ip=None):
        attrs = {} if alignment is None else {"alignment": self._int(64, alignment)}
        return self._create("llvm.load", [res], [addr], attrs, loc, ip)

    def StoreOp(self, value, addr, *, alignment=None, loc=None, ip=None):
        attrs = {} if alignment is None else {"alignment": self._int(64, alignment)}
        return self._create("llvm.store", [], [value, addr], attrs, loc, ip)

    def PoisonOp(self, res, *, loc=None, ip=None):
        return self._create("llvm.mlir.poison", [res], loc=loc, ip=ip)

    def InlineAsmOp(self, res, operands_, asm_string, constraints, *, has_side_effects=None, loc=None, ip=None):
        attrs = {"asm_string": self._str(asm_string), "constraints": self._str(constraints)}
        if has_side_effects:
            attrs["has_side_effects"] = self.ir.UnitAttr.get()
        return self._create("llvm.inline_asm", [] if res is None else [res], operands_, attrs, loc, ip)

    def CallIntrinsicOp(self, results_, intrin, args, op_bundle_operands, op_bundle_sizes, *, loc=None, ip=None):
        # two variadic operand groups: their sizes go in operandSegmentSizes (ODS AttrSizedOperandSegments)
        attrs = {"intrin": self._str(intrin), "op_bundle_sizes": self._i32_array(op_bundle_sizes),
                 "operandSegmentSizes": self.ir.DenseI32ArrayAttr.get([len(args), len(op_bundle_operands)])}
        return self._create("llvm.call_intrinsic", [] if results_ is None else [results_],
                            [*args, *op_bundle_operands], attrs, loc, ip)


class RocdlOps(_Ops):
    """rocdl.* builders (upstream mlir/dialects/_rocdl_ops_gen.py signatures)."""

    def ROCDLLog(self, res, arg, *, loc=None, ip=None):
        return self._unary("rocdl.log", res, arg, loc, ip)

    def ROCDLExp2(self, res, arg, *, loc=None, ip=None):
        return self._unary("rocdl.exp2", res, arg, loc, ip)

    def exp2(self, res, arg, *, loc=None, ip=None):
        return self.ROCDLExp2(res, arg, loc=loc, ip=ip).result

    def rcp(self, res, arg, *, loc=None, ip=None):
        return self._unary("rocdl.rcp", res, arg, loc, ip).result

    def ReadfirstlaneOp(self, res, src, *, loc=None, ip=None):
        return self._unary("rocdl.readfirstlane", res, src, loc, ip)

    def CvtPkRtz(self, res, srcA, srcB, *, loc=None, ip=None):
        return self._create("rocdl.cvt.pkrtz", [res], [srcA, srcB], loc=loc, ip=ip)

    def CvtPkFp8F32Op(self, res, srcA, srcB, old, wordSel, *, loc=None, ip=None):
        return self._create("rocdl.cvt.pk.fp8.f32", [res], [srcA, srcB, old], {"wordSel": self._int(1, wordSel)},
                            loc, ip)

    def PermlaneX16Op(self, res, old, src0, src1, src2, fi, boundControl, *, loc=None, ip=None):
        attrs = {"fi": self._int(1, fi), "boundControl": self._int(1, boundControl)}
        return self._create("rocdl.permlanex16", [res], [old, src0, src1, src2], attrs, loc, ip)

    def permlanex16(self, res, old, src0, src1, src2, fi, bound_control, *, loc=None, ip=None):
        return self.PermlaneX16Op(res, old, src0, src1, src2, fi, bound_control, loc=loc, ip=ip).result


class GpuOps(_Ops):
    """gpu.* builders (upstream mlir/dialects/_gpu_ops_gen.py signatures). gpu.func and
    gpu.module come back as views with the generated classes' region names (`body`, `bodyRegion`)."""

    def __init__(self, ir):
        super().__init__(ir)

        class FuncView(ir.OpView):
            OPERATION_NAME, _ODS_REGIONS = "gpu.func", (1, True)
            body = property(lambda self: self.regions[0])

        class ModuleView(ir.OpView):
            OPERATION_NAME, _ODS_REGIONS = "gpu.module", (1, True)
            bodyRegion = property(lambda self: self.regions[0])

        self._func_view, self._module_view = FuncView, ModuleView

    def GPUFuncOp(self, function_type, *, known_block_size=None, workgroup_attributions=None, kernel=None,
                  loc=None, ip=None):
        ir = self.ir
        attrs = {"function_type": function_type if isinstance(function_type, ir.Attribute)
                 else ir.TypeAttr.get(function_type)}
        if known_block_size is not None:
            attrs["known_block_size"] = self._i32_array(known_block_size)
        if workgroup_attributions is not None:
            attrs["workgroup_attributions"] = self._int(64, workgroup_attributions)
        if kernel:
            attrs["kernel"] = ir.UnitAttr.get()
        op = ir.Operation.create("gpu.func", results=[], operands=[], attributes=attrs, regions=1, loc=loc, ip=ip)
        return self._func_view(op)

    def GPUModuleOp(self, sym_name, *, targets=None, loc=None, ip=None):
        ir = self.ir
        attrs = {"sym_name": self._str(sym_name)}
        if targets is not None:
            attrs["targets"] = targets
        op = ir.Operation.create("gpu.module", results=[], operands=[], attributes=attrs, regions=1, loc=loc, ip=ip)
        return self._module_view(op)

    def _dim(self, name, dimension, upper_bound, results, loc, ip):
        ir = self.ir
        attrs = {"dimension": dimension}
        if upper_bound is not None:
            attrs["upper_bound"] = upper_bound if isinstance(upper_bound, ir.Attribute) else \
                ir.IntegerAttr.get(ir.IndexType.get(), upper_bound)
        # the generated builder infers the result type (InferTypeOpInterface): index
        return self._create(name, results or [ir.IndexType.get()], [], attrs, loc, ip)

    def BlockIdOp(self, dimension, *, upper_bound=None, results=None, loc=None, ip=None):
        return self._dim("gpu.block_id", dimension, upper_bound, results, loc, ip)

    def ThreadIdOp(self, dimension, *, upper_bound=None, results=None, loc=None, ip=None):
        return self._dim("gpu.thread_id", dimension, upper_bound, results, loc, ip)

    def BarrierOp(self, *, loc=None, ip=None):
        return self._create("gpu.barrier", loc=loc, ip=ip)

    def ReturnOp(self, operands_, *, loc=None, ip=None):
        return self._create("gpu.return", [], operands_, loc=loc, ip=ip)


class _LazyModule(types.ModuleType):
    """A module whose source runs on the first name asked of it (then it is the real module)."""

    def __getattr__(self, attr: str):
        spec = self.__dict__.pop("_wmma_gen_pending", None)
        if spec is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")
        spec.loader.exec_module(self)
        return getattr(self, attr)


def lazy_dialect_modules(package: str, namespaces) -> None:
    """Put a placeholder for `<package>.dialects.<ns>` in sys.modules for each namespace not
    imported yet, so the bindings' automatic dialect-module import costs nothing."""
    for ns in namespaces:
        name = f"{package}.dialects.{ns}"
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            continue
        mod = _LazyModule(name)
        mod.__spec__, mod.__loader__, mod.__file__ = spec, spec.loader, spec.origin
        mod.__package__ = name if spec.submodule_search_locations else name.rpartition(".")[0]
        if spec.submodule_search_locations is not None:
            mod.__path__ = list(spec.submodule_search_locations)
        mod._wmma_gen_pending = spec
        sys.modules[name] = mod
