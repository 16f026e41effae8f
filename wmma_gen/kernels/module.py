"""The MLIR module every kernel lives in: a `gpu.container_module` holding one
`gpu.module @<name>_module` with the ROCDL target of the arch (what the ROCDL pipeline in
compiler/ serializes to a code object)."""
from __future__ import annotations

from typing import Callable

from ..compiler.mlir_api import _gpu_ops_gen as gpu, ir


def gpu_module_text(name: str, arch: str, emit: Callable[[], None], location: str | None = None) -> str:
    """MLIR text of the module; `emit()` builds the kernel(s) at the gpu.module's insertion point
    (inside the MLIR context). Verified: a builder bug raises MLIRError with its diagnostics."""
    with ir.Context(), ir.Location.name(location or f"{name} {arch}"):
        module = ir.Module.create()
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        with ir.InsertionPoint(module.body):
            gm = gpu.GPUModuleOp(f"{name}_module", targets=ir.ArrayAttr.get(
                [ir.Attribute.parse(f'#rocdl.target<chip = "{arch}">')]))
            gm.bodyRegion.blocks.append()
            with ir.InsertionPoint(gm.bodyRegion.blocks[0]):
                emit()
        module.operation.verify()
        return str(module)
