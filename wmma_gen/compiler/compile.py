"""The compiler as a named stage list (STYLE rule 2): lower -> hsaco -> isa.

    lower   GPU-dialect MLIR -> ROCDL/LLVM dialect                  (MLIR passes)
    hsaco   -> linked code object: the ONE LLVM code generation     (gpu-module-to-binary{format=bin})
    isa     -> assembly listing decoded from the hsaco's bytes      (codeobj/listing.py, no LLVM)

The code object is the one artifact: the emulator runs it, a GPU loads it, the model reads
its listing and metadata note, exports hash it. Every candidate costs one LLVM code
generation on every path (`CODEGENS` counts them; tests assert it). Stages run in-process,
one PassManager each; failures raise CompileError with MLIR's diagnostics, the dumped
module and the exact pipeline (a repro).
"""
from __future__ import annotations

import collections
import re
import tempfile
import time

from ..errors import CompileError
from ..targets import get_target
from . import toolchain
from .cache import KernelCache, make_key
from .kernel import CompiledKernel
from .metadata import KernelMetadata, read_metadata
from .pipeline import binary_pipeline, lowering_pipeline
from .toolchain import toolchain_info

__all__ = ["CODEGENS", "CompiledKernel", "compile_mlir", "hsaco", "llvm_isa", "lower", "toolchain_info"]

_OBJECT_RE = re.compile(r'(assembly|bin) = "((?:[^"\\]|\\.)*)"', re.S)
_ESCAPE_RE = re.compile(rb"\\([0-9A-Fa-f]{2}|.)", re.S)

# LLVM code generations (gpu-module-to-binary runs) in this process, by format. The pipeline
# runs exactly one per compiled candidate ("bin"); "isa" counts test-oracle calls of llvm_isa.
CODEGENS: collections.Counter = collections.Counter()


def _payload(k: CompiledKernel) -> dict:
    return {"name": k.name, "hsaco": k.hsaco, "metadata": k.metadata.to_dict()}


def _run(text: str, pipeline: str, stage: str) -> str:
    from . import mlir_api     # the MLIR provider loads on the first build, not on a cached launch
    ir, passmanager = mlir_api.ir, mlir_api.passmanager
    with ir.Context():
        try:
            module = ir.Module.parse(text)
            pm = passmanager.PassManager.parse(pipeline)
            pm.run(module.operation)
        except Exception as e:  # MLIRError carries the diagnostics; turn it into our error
            mlir_api.require_rocdl()  # a provider without the ROCDL target: name what to install
            with tempfile.NamedTemporaryFile("w", suffix=".mlir", prefix=f"wmma_gen_{stage}_", delete=False) as f:
                f.write(text)
            raise CompileError(f"stage '{stage}' failed", diagnostics=str(e), pipeline=pipeline,
                               mlir_path=f.name) from None
        return str(module)


def _unescape(s: str) -> bytes:
    """Decode an MLIR string literal body (\\XX hex escapes, \\\\ and \\" )."""
    def rep(m):
        g = m.group(1)
        return bytes([int(g, 16)]) if len(g) == 2 else g
    return _ESCAPE_RE.sub(rep, s.encode("utf-8"))


def _object(printed: str, stage: str) -> bytes:
    m = _OBJECT_RE.search(printed)
    if not m:
        raise CompileError(f"stage '{stage}' produced no gpu.object payload", diagnostics=printed[:2000])
    return _unescape(m.group(2))


def lower(text: str, arch: str) -> str:
    return _function_attributes(_run(text, lowering_pipeline(arch), "lower"))


def _function_attributes(lowered: str) -> str:
    """Make a kernel's `llvm.passthrough` (LLVM function attributes a builder asks for, e.g.
    "amdgpu-sched-strategy") llvm.func's own `passthrough`, which translation emits. LLVM 24's
    gpu-to-rocdl moves it there itself; LLVM 23's keeps it as a discardable attribute that
    translation drops. The printed result is the same under both."""
    if "llvm.passthrough" not in lowered:
        return lowered
    from .mlir_api import ir
    with ir.Context():
        module = ir.Module.parse(lowered)

        def visit(op):
            op = op.operation
            if op.name == "llvm.func" and "llvm.passthrough" in op.attributes:
                op.attributes["passthrough"] = op.attributes["llvm.passthrough"]
                del op.attributes["llvm.passthrough"]
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        visit(child)
        visit(module.operation)
        return str(module)


def hsaco(lowered: str, arch: str) -> bytes:
    """The one code generation: ROCDL module -> linked code object (assembled and linked by
    gpu-module-to-binary{format=bin}; no ISA text comes back)."""
    linker = toolchain.find_linker()
    CODEGENS["bin"] += 1
    return _object(_run(lowered, binary_pipeline("bin", linker.toolkit), "hsaco"), "hsaco")


def llvm_isa(lowered: str, arch: str) -> str:
    """LLVM's own assembly text of the module: a SECOND code generation (format=isa). The
    pipeline never calls it; tests compare it with the listing decoded from the hsaco."""
    linker = toolchain.find_linker()
    CODEGENS["isa"] += 1
    return _object(_run(lowered, binary_pipeline("isa", linker.toolkit), "isa"), "isa").decode()


def compile_mlir(text: str, arch: str, cache: KernelCache | None | bool = None) -> CompiledKernel:
    """Compile a GPU-dialect module (one kernel) for `arch` to its code object; cached by content.

    cache: None -> default cache dir, False -> no cache, or a KernelCache."""
    get_target(arch)  # unknown arch -> ScheduleError listing the known ones
    tc = toolchain_info()
    key = make_key(text, arch, lowering_pipeline(arch), *(f"{k}={v}" for k, v in sorted(tc.items())))
    store = None if cache is False else (cache or KernelCache())
    status = "miss"
    if store is not None:
        status, payload = store.load(key)
        if status == "hit" and not payload.get("hsaco"):
            status = "corrupt"                     # an entry without its code object is rebuilt
        if status == "hit":
            return CompiledKernel(payload["name"], arch, text, payload["hsaco"],
                                  KernelMetadata.from_dict(payload["metadata"]), key, tc, "hit", 0.0)
    t0 = time.perf_counter()
    toolchain.require_chip(arch)  # an LLVM that does not know the chip would abort the process
    obj = hsaco(lower(text, arch), arch)
    meta = read_metadata(obj)
    kernel = CompiledKernel(meta.name, arch, text, obj, meta, key, tc,
                            "rebuilt" if status == "corrupt" else "miss", time.perf_counter() - t0)
    if store is not None:
        store.store(key, _payload(kernel))
    return kernel
