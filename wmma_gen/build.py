"""Directive + schedule -> compiled kernel: the one path every caller uses."""
from __future__ import annotations

from dataclasses import dataclass

from .compiler import CompiledKernel, KernelCache, compile_mlir
from .directive import GemmDirective
from .kernels.gemm import KernelSource, build_gemm
from .schedule import Schedule
from .targets import get_target


@dataclass(frozen=True)
class GemmKernel:
    directive: GemmDirective
    schedule: Schedule
    source: KernelSource
    compiled: CompiledKernel


def compile_gemm(d: GemmDirective, s: Schedule, arch: str, cache: KernelCache | None | bool = None,
                 eager_hsaco: bool = False) -> GemmKernel:
    """Build and compile; the hsaco is linked on first use unless eager_hsaco."""
    t = get_target(arch)
    src = build_gemm(d, s, t)
    return GemmKernel(d, s, src, compile_mlir(src.mlir, arch, cache=cache, eager_hsaco=eager_hsaco))
