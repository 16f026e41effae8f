"""The backward's three kernel sources and their compile-time key (BwdSpec): what building and
compiling them needs, apart from run.py's argument checks and launches (so a first compile
imports no numpy)."""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler import compile_mlir
from ...errors import ScheduleError
from ...kernels.signature import KernelSource
from ...targets import get_target
from .args import OUT_DTYPES, BwdSpec
from .schedule import AttentionBwdSchedule


@dataclass(frozen=True)
class BwdKernels:
    prepass: KernelSource
    dkdv: KernelSource
    dq: KernelSource

    def items(self):
        return (("prepass", self.prepass), ("dkdv", self.dkdv), ("dq", self.dq))


def build_backward(spec: BwdSpec, s: AttentionBwdSchedule) -> BwdKernels:
    """The three kernel sources for one compile-time key (nothing is compiled here)."""
    from .dkdv import build_dkdv          # the builders import the MLIR bindings: loaded on a build only
    from .dq import build_dq
    from .prepass import build_prepass
    s.validate(spec.head_dim, spec.dtype, get_target(spec.arch))
    return BwdKernels(build_prepass(spec, s), build_dkdv(spec, s), build_dq(spec, s))


def compiled_kernels(spec: BwdSpec, s: AttentionBwdSchedule) -> dict:
    """{name: (KernelSource, CompiledKernel)}: through ops/compile_op.py (LRU, disk index) when
    the outputs are stored like the inputs (what the op's directive describes), else built and
    compiled here (out="f32" is not a directive field)."""
    if spec.out != "same":
        return {n: (src, compile_mlir(src.mlir, spec.arch)) for n, src in build_backward(spec, s).items()}
    from .. import registry
    from ...attention_common.directive import AttentionDirective
    from ..compile_op import compile_op
    d = AttentionDirective(spec.dtype, spec.head_dim, causal=spec.causal, window=spec.window, varlen=spec.varlen,
                           layout=spec.layout, op="attention_bwd", softcap=spec.softcap)
    return compile_op(registry.get("attention_bwd"), d, s, None, spec.arch).pairs()


def make_spec(arch: str, dtype: str, head_dim: int, *, causal=False, window=False, varlen=False,
              layout="bshd", out="same", softcap=False) -> BwdSpec:
    if out not in OUT_DTYPES:
        raise ScheduleError("out_dtype", out, f"one of {', '.join(OUT_DTYPES)}")
    return BwdSpec(arch, get_target(arch).family, dtype, head_dim, causal, window, varlen, layout, out, softcap)
