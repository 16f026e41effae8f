"""Compiler stages: MLIR GPU-dialect text -> code object (hsaco) -> decoded ISA listing, in-process, cached.

The names below are imported on first use (PEP 562): a cached kernel's launch reads the disk
cache (cache.py) and metadata (metadata.py) without loading the compile stages' modules or the
code-object decoder behind `listing`."""
import importlib

_FROM = {"KernelCache": ".cache", "CODEGENS": ".compile", "CompiledKernel": ".kernel", "compile_mlir": ".compile",
         "hsaco": ".compile", "llvm_isa": ".compile", "lower": ".compile", "toolchain_info": ".toolchain",
         "listing": "..codeobj.listing"}
__all__ = list(_FROM)


def __getattr__(name):
    mod = _FROM.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(mod, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_FROM))
