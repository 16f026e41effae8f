"""The compiler as a named stage list (STYLE rule 2): lower -> isa -> hsaco.

All stages run in-process through one MLIR PassManager each; every artifact is kept in the
CompiledKernel. Failures raise CompileError with MLIR's diagnostics, the dumped module and
the exact pipeline (a repro).
"""
from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, field

from .mlir_api import ir, passmanager

from ..errors import CompileError
from ..targets import get_target
from . import mlir_api, toolchain
from .cache import KernelCache, make_key
from .elf import read_elf
from .metadata import KernelMetadata, parse_isa_metadata, parse_metadata
from .pipeline import binary_pipeline, lowering_pipeline

_OBJECT_RE = re.compile(r'(assembly|bin) = "((?:[^"\\]|\\.)*)"', re.S)
_ESCAPE_RE = re.compile(rb"\\([0-9A-Fa-f]{2}|.)", re.S)


@dataclass(frozen=True)
class CompiledKernel:
    """Every artifact of one compilation. The code object (`hsaco`) is produced on first
    use: the emulator and the model read the ISA, so GPU-less tuning skips the second
    LLVM code generation and the link (compile_mlir(eager_hsaco=True) forces it)."""
    name: str
    arch: str
    mlir: str                 # the module as built (GPU dialect)
    isa: str                  # assembly (format=isa)
    metadata: KernelMetadata  # from the ISA's metadata block; checked against the hsaco note
    key: str                  # content address
    toolchain: dict = field(default_factory=dict)
    cache: str = "miss"       # how this object was obtained: miss | hit | rebuilt
    compile_seconds: float = 0.0
    hsaco_bytes: bytes | None = field(default=None, repr=False, compare=False)
    store: "KernelCache | None" = field(default=None, repr=False, compare=False)

    @property
    def spilled(self) -> bool:
        return self.metadata.spills > 0

    @property
    def hsaco(self) -> bytes:
        """The linked code object (ELF), built now if this kernel has not needed one yet."""
        if self.hsaco_bytes is None:
            obj = hsaco(lower(self.mlir, self.arch), self.arch)
            note = parse_metadata(read_elf(obj))
            if note != self.metadata:
                raise CompileError(f"{self.name}: hsaco metadata note disagrees with the ISA metadata",
                                   diagnostics=f"note: {note}\nisa: {self.metadata}")
            object.__setattr__(self, "hsaco_bytes", obj)
            if self.store is not None:
                self.store.store(self.key, _payload(self))
        return self.hsaco_bytes


def _payload(k: CompiledKernel) -> dict:
    return {"name": k.name, "isa": k.isa, "hsaco": k.hsaco_bytes, "metadata": k.metadata.to_dict()}


def _run(text: str, pipeline: str, stage: str) -> str:
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
    return _run(text, lowering_pipeline(arch), "lower")


def isa(lowered: str, arch: str) -> str:
    linker = toolchain.find_linker()
    return _object(_run(lowered, binary_pipeline("isa", linker.toolkit), "isa"), "isa").decode()


def hsaco(lowered: str, arch: str) -> bytes:
    linker = toolchain.find_linker()
    return _object(_run(lowered, binary_pipeline("bin", linker.toolkit), "hsaco"), "hsaco")


def toolchain_info() -> dict:
    """What besides the MLIR text changes the bytes; every entry is part of the cache key.
    `mlir` names the bindings' distribution, provider package and LLVM version (mlir_api), so
    objects built by two providers (WMMA_GEN_MLIR_PROVIDER) never share a key."""
    linker = toolchain.find_linker()
    return {"mlir": toolchain.mlir_version(), "lld": linker.version, "lld_provider": linker.provider,
            "wmma_gen_compiler": toolchain.sources_hash()}


def compile_mlir(text: str, arch: str, cache: KernelCache | None | bool = None,
                 eager_hsaco: bool = False) -> CompiledKernel:
    """Compile a GPU-dialect module (one kernel) for `arch`; cached by content.

    cache: None -> default cache dir, False -> no cache, or a KernelCache.
    eager_hsaco: also link the code object now (otherwise on first `.hsaco` access)."""
    get_target(arch)  # unknown arch -> ScheduleError listing the known ones
    tc = toolchain_info()
    key = make_key(text, arch, lowering_pipeline(arch), *(f"{k}={v}" for k, v in sorted(tc.items())))
    store = None if cache is False else (cache or KernelCache())
    status = "miss"
    if store is not None:
        status, payload = store.load(key)
        if status == "hit":
            kernel = CompiledKernel(payload["name"], arch, text, payload["isa"],
                                    KernelMetadata.from_dict(payload["metadata"]), key, tc, "hit", 0.0,
                                    payload.get("hsaco"), store)
            if eager_hsaco:
                _ = kernel.hsaco  # link now
            return kernel
    t0 = time.perf_counter()
    asm = isa(lower(text, arch), arch)
    meta = parse_isa_metadata(asm)
    kernel = CompiledKernel(meta.name, arch, text, asm, meta, key, tc,
                            "rebuilt" if status == "corrupt" else "miss", time.perf_counter() - t0, None, store)
    if store is not None:
        store.store(key, _payload(kernel))
    if eager_hsaco:
        _ = kernel.hsaco  # link now
        object.__setattr__(kernel, "compile_seconds", time.perf_counter() - t0)
    return kernel
