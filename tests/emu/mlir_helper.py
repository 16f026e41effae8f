"""Compile small MLIR test kernels to gfx11 ISA text for the emulator tests.

Uses the project compiler (wmma_gen.compiler.compile_mlir) when it exists, otherwise a
minimal in-process pipeline (the same pass list DESIGN.md documents)."""
from __future__ import annotations

import functools
import re

PIPELINE = ("builtin.module(convert-amdgpu-to-rocdl{{chipset={arch}}},gpu.module(convert-scf-to-cf,"
            "convert-gpu-to-rocdl{{chipset={arch} use-bare-ptr-memref-call-conv=true}}),"
            "gpu-module-to-binary{{format=isa}})")


def _unescape(s: str) -> str:
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), s)


def wrap(body: str, arch: str = "gfx1100") -> str:
    """Wrap gpu.func text into a container module for `arch`."""
    return ("module attributes {gpu.container_module} {\n"
            f'gpu.module @m [#rocdl.target<chip = "{arch}">] {{\n{body}\n}}\n}}\n')


@functools.lru_cache(maxsize=None)
def compile_isa(body: str, arch: str = "gfx1100") -> str:
    """ISA text of the gpu.func(s) in `body`."""
    src = wrap(body, arch)
    try:
        from wmma_gen.compiler import compile_mlir  # type: ignore
    except ImportError:
        compile_mlir = None
    if compile_mlir is not None:
        return compile_mlir(src, arch).isa
    from mlir import ir, passmanager
    with ir.Context():
        m = ir.Module.parse(src)
        passmanager.PassManager.parse(PIPELINE.format(arch=arch)).run(m.operation)
        text = str(m)
    match = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', text)
    if match is None:
        raise RuntimeError(f"no assembly in compiled module:\n{text[:2000]}")
    return _unescape(match.group(1))
