"""The MLIR Python bindings wmma_gen builds and compiles with, from one provider.

Every module of wmma_gen imports `ir`, `passmanager`, the dialect modules and the op builders
(`gpu_ops`, `llvm_ops`, `rocdl_ops`, `amdgpu_ops`) from here, never from a provider package
directly. Providers, in the order `auto` tries them:

- `flydsl`: the upstream MLIR bindings embedded in AMD's FlyDSL wheel (`flydsl._mlir`;
  PyPI `flydsl`, Apache-2.0, the default install). LLVM 24 here. It ships no generated AMDGPU
  op module, so `amdgpu_ops` is wmma_gen's own builder for the AMDGPU ops it uses
  (compiler/amdgpu_ops.py).
- `mlir`: the upstream `mlir` package (PyPI `mlir-gml`, extra `wmma-gen[mlir]`; or LLVM's
  official wheels). LLVM 23 here.

The default provider comes first, so installing the other one (the test extra does, for
the compile tests under the second provider and the parity tests) changes nothing until it
is asked for; docs/mlir_providers.md says why FlyDSL is the default and how the two compare.

Setting: WMMA_GEN_MLIR_PROVIDER=mlir|flydsl picks the provider (unset or `auto`: the first
one installed). It only picks which bindings are loaded; the provider and its LLVM version
are part of every compile cache key (compile.toolchain_info), so switching it never reuses
or silently changes a cached code object.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from ..errors import CompileError
from .amdgpu_ops import AmdgpuOps
from .ir_without_numpy import import_ir
from .lean_ops import GpuOps, LlvmOps, RocdlOps, lazy_dialect_modules
from .provider_id import _PACKAGE, _distribution, _llvm_version

__all__ = ["ir", "passmanager", "arith", "math", "memref", "scf", "vector", "gpu_ops", "amdgpu_ops",
           "rocdl_ops", "llvm_ops", "SETTING", "PROVIDERS", "MlirProviderError", "Provider", "provider",
           "requested", "rocdl_problem", "require_rocdl"]

SETTING = "WMMA_GEN_MLIR_PROVIDER"
PROVIDERS = ("flydsl", "mlir")                     # the order `auto` tries them in: the default first
_INSTALL = {"flydsl": "pip install flydsl", "mlir": "pip install mlir-gml"}
_DIALECTS = ("arith", "math", "memref", "scf", "vector")
# Dialect modules the bindings would import on first sight of their ops: placeholders instead
# (lean_ops.py; the generated LLVM/ROCDL/GPU op modules were ~100 ms CPU of a first compile's imports).
_LAZY_DIALECTS = ("llvm", "rocdl", "gpu", "builtin")
# Ops a kernel needs the provider to have registered (the ROCDL/AMDGPU side of the build).
_REQUIRED_OPS = ("gpu.module", "amdgpu.wmma", "amdgpu.lds_barrier", "rocdl.workgroup.id.x", "llvm.call_intrinsic")


class MlirProviderError(CompileError, ImportError):
    """No usable MLIR bindings: none installed, the requested one missing, or no ROCDL target.

    Also an ImportError, so code that probes for the compiler (doctor) treats it as missing."""


def _install_hint() -> str:
    return (f"install one: `{_INSTALL['flydsl']}` (AMD FlyDSL, the default) or `{_INSTALL['mlir']}`; "
            f"{SETTING}=mlir|flydsl picks one when both are installed")


def requested() -> str:
    """The provider the setting asks for: 'auto', 'flydsl' or 'mlir'."""
    value = os.environ.get(SETTING, "").strip().lower() or "auto"
    if value not in ("auto",) + PROVIDERS:
        raise MlirProviderError(f"{SETTING}={value!r} is not allowed: one of auto, {', '.join(PROVIDERS)}")
    return value


def _import(name: str):
    """(ir, passmanager, {dialect module name: module}) of provider `name`."""
    pkg = _PACKAGE[name]
    with _bare_parent(pkg):
        ir_mod = import_ir(pkg)               # numpy stays unimported (ir_without_numpy.py)
        pm_mod = importlib.import_module(f"{pkg}.passmanager")
        dialects = {d: importlib.import_module(f"{pkg}.dialects.{d}") for d in _DIALECTS}
    return ir_mod, pm_mod, dialects


class _LazyPackage(types.ModuleType):
    """A package module whose __init__ runs on the first attribute it does not have: its
    submodules import without it (see _bare_parent)."""

    def __getattr__(self, attr: str):
        init = self.__dict__.pop("_wmma_gen_pending_init", None)
        if init is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")
        init.loader.exec_module(self)       # the package's own __init__, in this module: a real import
        return getattr(self, attr)


@contextlib.contextmanager
def _bare_parent(pkg: str):
    """Import `pkg` (e.g. flydsl._mlir) without running its parent package's __init__ first:
    flydsl/__init__.py imports flydsl.autotune, which imports torch (1.3 s of a 1.6 s import,
    -X importtime; DESIGN.md), and compiling needs none of it. The parent becomes a package
    module over the same folder whose __init__ runs on first use of anything it defines
    (`import flydsl; flydsl.autotune` by anyone works as before)."""
    parent = pkg.partition(".")[0]
    if "." not in pkg or parent in sys.modules:
        yield
        return
    spec = importlib.util.find_spec(parent)
    if spec is None or not spec.submodule_search_locations or spec.loader is None:
        yield
        return
    lazy = _LazyPackage(parent)
    lazy.__path__, lazy.__spec__, lazy.__file__ = list(spec.submodule_search_locations), spec, spec.origin
    lazy.__package__, lazy.__loader__ = parent, spec.loader
    lazy._wmma_gen_pending_init = spec
    sys.modules[parent] = lazy
    try:
        yield
    except BaseException:
        if sys.modules.get(parent) is lazy:
            del sys.modules[parent]
        raise


def _select():
    want = requested()
    tried = []
    for name in (PROVIDERS if want == "auto" else (want,)):
        try:
            return name, *_import(name)
        except ImportError as e:
            tried.append(f"{name} ({_PACKAGE[name]}): {e}")
    raise MlirProviderError(f"no MLIR Python bindings found ({SETTING}={want})",
                            diagnostics="tried: " + "; ".join(tried) + "\nfix: " + _install_hint())


NAME, ir, passmanager, _mods = _select()
lazy_dialect_modules(_PACKAGE[NAME], _LAZY_DIALECTS)
arith, math, memref, scf, vector = (_mods[d] for d in _DIALECTS)
# the ops wmma_gen emits, not the whole dialects (same names and call signatures as the provider's
# generated _gpu_ops_gen / _rocdl_ops_gen / _llvm_ops_gen modules, which stay unimported)
gpu_ops, rocdl_ops, llvm_ops = GpuOps(ir), RocdlOps(ir), LlvmOps(ir)
try:
    amdgpu_ops = importlib.import_module(f"{_PACKAGE[NAME]}.dialects._amdgpu_ops_gen")
except ImportError:      # FlyDSL: the dialect is registered, its Python op classes are not shipped
    amdgpu_ops = AmdgpuOps(ir)


@dataclass(frozen=True)
class Provider:
    """Where the bindings came from (what `wmma-gen doctor` prints and the cache key holds)."""
    name: str            # "flydsl" | "mlir"
    package: str         # the Python package loaded: "flydsl._mlir" | "mlir"
    distribution: str    # "flydsl==0.5.0", "mlir-gml==0.0.4", or "unknown"
    llvm_version: str    # LLVM/MLIR version the native library was built from, e.g. "24.0.0git"
    path: str            # folder of the package
    selected_by: str     # "auto" or the setting's value

    @property
    def identity(self) -> str:
        """What the compile cache key and exported schedules record, e.g.
        "flydsl==0.5.0 (flydsl._mlir, LLVM 24.0.0git)"."""
        return f"{self.distribution} ({self.package}, LLVM {self.llvm_version})"


@functools.lru_cache(maxsize=1)
def provider() -> Provider:
    """Facts about the loaded provider (cached: the version scan reads a library file once)."""
    path = Path(ir.__file__).parent
    return Provider(NAME, _PACKAGE[NAME], _distribution(NAME), _llvm_version(path), str(path), requested())


@functools.lru_cache(maxsize=1)
def rocdl_problem() -> str:
    """Why the loaded provider cannot compile for AMD GPUs ("" if it can): the ROCDL/AMDGPU
    dialects registered and `gpu-module-to-binary` producing ISA for a trivial gfx1100 module."""
    text = ('module attributes {gpu.container_module} { gpu.module @probe [#rocdl.target<chip = "gfx1100">] '
            '{ llvm.func @k() attributes {rocdl.kernel} { llvm.return } } }')
    try:
        with ir.Context() as ctx:
            missing = [op for op in _REQUIRED_OPS if not ctx.is_registered_operation(op)]
            if missing:
                return f"operations not registered: {', '.join(missing)}"
            module = ir.Module.parse(text)
            passmanager.PassManager.parse("builtin.module(gpu-module-to-binary{format=isa})").run(module.operation)
            if "s_endpgm" not in str(module):
                return "gpu-module-to-binary produced no AMDGPU assembly"
    except Exception as e:  # any binding failure here is the answer, reported with its text
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    return ""


def require_rocdl() -> None:
    """Raise MlirProviderError naming the packages to install if the provider lacks ROCDL."""
    why = rocdl_problem()
    if why:
        p = provider()
        raise MlirProviderError(f"MLIR provider '{p.name}' ({p.distribution}, {p.path}) cannot compile for AMD GPUs "
                                "(no ROCDL target)", diagnostics=f"{why}\nfix: {_install_hint()}")
