"""Directive + schedule + specialization key -> compiled GEMM: the one path every caller uses.

Compiled kernels are kept in memory for the process, keyed by what changes the code
(directive without sizes, schedule, key, arch), so a repeated `gemm()` call on any shape of
the same key neither rebuilds the MLIR nor reads the disk cache.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler import CompiledKernel, KernelCache, compile_mlir
from ...kernels.signature import KernelSource, Signature
from ...targets import get_target
from .directive import GemmDirective
from .kernel import build_gemm
from .schedule import Schedule
from .signature import GemmKey, problem_of, spec_key

_MEMO: dict[tuple, tuple[KernelSource, CompiledKernel]] = {}


@dataclass(frozen=True)
class GemmKernel:
    directive: GemmDirective   # the problem it was asked for (sizes are not compiled in)
    schedule: Schedule
    key: GemmKey
    source: KernelSource
    compiled: CompiledKernel

    @property
    def signature(self) -> Signature:
        return self.source.signature

    @property
    def problem(self) -> dict[str, int]:
        return problem_of(self.directive)

    @property
    def grid(self) -> tuple[int, int, int]:
        return self.signature.grid(self.problem)

    @property
    def block(self) -> tuple[int, int, int]:
        return self.signature.block

    def scalars(self) -> list:
        """Scalar kernel arguments for contiguous buffers of this kernel's problem."""
        from ...device.launcher import contiguous_scalars
        return contiguous_scalars(self.signature, self.problem)


def compile_gemm(d: GemmDirective, s: Schedule, arch: str, cache: KernelCache | None | bool = None,
                 key: GemmKey | None = None) -> GemmKernel:
    """Build and compile the kernel serving `d`'s problem (key: contiguous operands unless
    given) to its code object. With the default cache the object is also kept in memory for
    the process."""
    t = get_target(arch)
    s.validate(d, t)
    key = key if key is not None else spec_key(d, s, problem_of(d))
    memo_key = (d.sizeless().to_json(), s.to_json(), key, t.arch)
    hit = _MEMO.get(memo_key) if cache is None else None
    if hit is None:
        src = build_gemm(d, s, t, key)
        hit = (src, compile_mlir(src.mlir, arch, cache=cache))
        if cache is None:
            _MEMO[memo_key] = hit
    return GemmKernel(d, s, key, *hit)
