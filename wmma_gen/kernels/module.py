"""The MLIR module every kernel lives in: a `gpu.container_module` holding one
`gpu.module @<name>_module` with the ROCDL target of the arch (what the ROCDL pipeline in
compiler/ serializes to a code object)."""
from __future__ import annotations

from typing import Callable

from ..compiler.mlir_api import gpu_ops as gpu, ir, provider

# Target features per LLVM major version of the loaded provider (#rocdl.target `features`,
# a subtarget feature string as llc's -mattr takes; unlisted: the chip's defaults).
# LLVM 24 (FlyDSL) selects true16 instructions (16-bit VGPR halves: subtarget feature
# `real-true16`, "Use true 16-bit registers", llvm/lib/Target/AMDGPU/AMDGPU.td; llvm-mc takes it
# as -mattr=+real-true16 in llvm/test/MC/AMDGPU/gfx12_asm_vop1_t16_promote.s) for the attention
# kernels' 16-bit softmax/packing math; "-real-true16" keeps the fake16 forms LLVM 23 chose. bench/attention_provider_quality.py
# (compiler output, 2026-12-04): forward/dQ main-loop density under FlyDSL back to or above
# mlir-gml's (e.g. gfx1201 bf16 hd128 forward 0.135 -> 0.145, mlir-gml 0.135; gfx1100 bf16
# hd64 forward 0.079 -> 0.086, mlir-gml 0.086). Under LLVM 23 it changed density by
# -1.2%..+2.7%, so it is not set there.
FEATURES_BY_LLVM: dict[int, str] = {24: "-real-true16"}


def llvm_major() -> int:
    """Major LLVM version of the loaded provider (0 if unknown)."""
    head = provider().llvm_version.split(".")[0]
    return int(head) if head.isdigit() else 0


def rocdl_target(arch: str) -> str:
    """The #rocdl.target attribute of `arch` under the loaded provider."""
    features = FEATURES_BY_LLVM.get(llvm_major(), "")
    return f'#rocdl.target<chip = "{arch}"' + (f', features = "{features}">' if features else ">")


def kernel_func(name: str, arg_types: list, threads: int, lds_types: list | None = None,
                sched_strategy: str = ""):
    """The gpu.func `name` of one kernel, block (threads, 1, 1), and its entry block (arguments
    `arg_types`, then the LDS memrefs `lds_types`: its workgroup attributions; None leaves the
    attribute out). `sched_strategy`: LLVM's "amdgpu-sched-strategy" ("": LLVM's default)."""
    f = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(arg_types, [])),
                      known_block_size=ir.DenseI32ArrayAttr.get([threads, 1, 1]))
    f.attributes["sym_name"] = ir.StringAttr.get(name)
    f.attributes["gpu.kernel"] = ir.UnitAttr.get()
    if sched_strategy:
        # `llvm.passthrough` (compile.lower makes it llvm.func's under both providers); a bare
        # `passthrough` on gpu.func reaches LLVM 23 only
        f.attributes["llvm.passthrough"] = ir.Attribute.parse(f'[["amdgpu-sched-strategy", "{sched_strategy}"]]')
    if lds_types is not None:
        f.attributes["workgroup_attributions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(lds_types))
    return f.body.blocks.append(*arg_types, *(lds_types or ()))


def gpu_module_text(name: str, arch: str, emit: Callable[[], None], location: str | None = None) -> str:
    """MLIR text of the module; `emit()` builds the kernel(s) at the gpu.module's insertion point
    (inside the MLIR context). Verified: a builder bug raises MLIRError with its diagnostics."""
    with ir.Context(), ir.Location.name(location or f"{name} {arch}"):
        module = ir.Module.create()
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        with ir.InsertionPoint(module.body):
            gm = gpu.GPUModuleOp(f"{name}_module", targets=ir.ArrayAttr.get([ir.Attribute.parse(rocdl_target(arch))]))
            gm.bodyRegion.blocks.append()
            with ir.InsertionPoint(gm.bodyRegion.blocks[0]):
                emit()
        module.operation.verify()
        return str(module)
