"""Directive + schedule + specialization key -> compiled GEMM: the one path every caller uses.

Compiled kernels come from ops/compile_op.py (the one compile path of every op): a bounded
in-memory LRU keyed by what changes the code (directive without sizes, schedule, key, arch),
then a disk index in front of the content-addressed cache, so a repeated `gemm()` call on any
shape of the same key neither rebuilds the MLIR nor reads the disk cache.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler import CompiledKernel, KernelCache
from ...kernels.signature import KernelSource, Signature
from ...targets import get_target
from ..compile_op import CompiledSet
from .directive import GemmDirective
from .problem import GemmProblem, as_problem
from .schedule import Schedule
from .signature import GemmKey, spec_key


@dataclass(frozen=True)
class GemmKernel:
    """A compiled GEMM and the problem it was asked for (sizes are kernel arguments: the same
    object serves every problem with its key)."""
    directive: GemmDirective
    schedule: Schedule
    key: GemmKey
    kernels: CompiledSet       # from ops/compile_op.py; its MLIR/Signature are built on first use
    problem: GemmProblem
    compiled: CompiledKernel | None = None   # the set's "gemm" object unless given (a test's stand-in)

    def __post_init__(self):
        if self.compiled is None:
            object.__setattr__(self, "compiled", self.kernels.kernel("gemm"))

    @property
    def source(self) -> KernelSource:
        return self.kernels.sources["gemm"]

    @property
    def signature(self) -> Signature:
        """The kernel's Signature: gemm_signature(d, s, name) is what build_gemm declares, so a
        set served by the compile index needs no MLIR build for a launch (the first call of a
        cached kernel in a process); launcher.check_binding still checks it against the code
        object's .args at the first bind."""
        if "sources" in self.kernels._memo:
            return self.source.signature
        from .signature import gemm_signature
        return gemm_signature(self.directive, self.schedule, self.compiled.name)

    @property
    def sizes(self) -> dict[str, int]:
        """The problem as the Signature's mapping."""
        return self.problem.as_dict()

    @property
    def grid(self) -> tuple[int, int, int]:
        return self.signature.grid(self.sizes)

    @property
    def block(self) -> tuple[int, int, int]:
        return self.signature.block

    def scalars(self) -> list:
        """Scalar kernel arguments for contiguous buffers of this kernel's problem."""
        from ...device.launcher import contiguous_scalars
        return contiguous_scalars(self.signature, self.sizes)


def compile_gemm(d: GemmDirective, s: Schedule, arch: str, problem, cache: KernelCache | None | bool = None,
                 key: GemmKey | None = None) -> GemmKernel:
    """Build and compile the kernel serving `problem` (a GemmProblem or a mapping of its
    fields; key: contiguous operands unless given) to its code object. With the default cache
    the object is also kept in memory for the process."""
    t, p = get_target(arch), as_problem(problem)
    s.validate(d, t, p)
    key = key if key is not None else spec_key(d, s, p.as_dict())
    from .. import registry
    from ..compile_op import compile_op
    return GemmKernel(d, s, key, compile_op(registry.get("gemm"), d, s, key, t.arch, cache=cache), p)
