"""The op registry: op name -> everything op-specific that shared code needs (STYLE rule 16).

autotune, check, analyze, export and the CLI look an op up here instead of branching on its
name; adding an op is adding a folder under wmma_gen/ops/ and one entry below. Entries are
resolved lazily (imports inside the loaders) so `wmma-gen --help` does not load MLIR.

Fields of an OpSpec:
  directive        the frozen dataclass naming *what* is compiled (never sizes)
  schedule         the frozen dataclass naming *how*; `space` its knob table (SPACE)
  build            (directive, schedule, target[, key]) -> KernelSource (MLIR + Signature)
  api              the user function (numpy in, numpy out)
  reference        the float64 / exact numpy reference
  flops            (directive, problem) -> FLOPs, with the op's counting convention
  default_schedule (directive, arch, problem) -> schedule used when none is given
  gate_problems    (directive, schedule, key) -> small problems the correctness gate runs
  tolerance        a one-line statement of the per-dtype tolerance (details in the op's check)
  check            seeded random inputs -> compare with the reference (CLI `check`, the gate)
  estimate         (directive, schedule, problem, arch) -> ModelEstimate (source "model": the
                   GPU-less model; the op supplies its FLOPs and traffic, model/ knows no op)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class OpSpec:
    name: str
    doc: str
    directive: type
    schedule: type
    space: tuple
    build: Callable
    api: Callable
    reference: Callable
    flops: Callable
    default_schedule: Callable
    gate_problems: Callable
    tolerance: str
    check: Callable
    estimate: Callable

    FIELDS = ("directive", "schedule", "space", "build", "api", "reference", "flops", "default_schedule",
              "gate_problems", "tolerance", "check", "estimate")


@dataclass(frozen=True)
class ModelEstimate:
    """What every op's estimate returns (never a measurement)."""
    seconds: float
    tflops: float
    limiter: str
    source: str = "model"


def _gemm_estimate(d, s, p, arch):
    from dataclasses import replace

    from .gemm.build import compile_gemm
    from .gemm.model import estimate
    d = replace(d, m=p["m"], n=p["n"], k=p["k"], batch=p["batch"])
    e = estimate(compile_gemm(d, s, arch), d, s, arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def _attention_estimate(d, s, p, arch):
    from .attention.api import compile_attention
    from .attention.model import estimate_attention
    e = estimate_attention(compile_attention(d, s, arch)[1], d, s, p, arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def _attention_bwd_estimate(d, s, p, arch):
    from ..compiler import compile_mlir
    from .attention_bwd.model import estimate_attention_bwd
    from .attention_bwd.run import build_backward, make_spec
    spec = make_spec(arch, d.dtype, d.head_dim, causal=d.causal, window=d.window, varlen=d.varlen, layout=d.layout)
    compiled = {n: compile_mlir(src.mlir, arch) for n, src in build_backward(spec, s).items()}
    seconds, tflops, parts = estimate_attention_bwd(compiled, d, s, p, arch)
    return ModelEstimate(seconds, tflops, max(parts.items(), key=lambda kv: kv[1].seconds)[0] + ":"
                         + max(parts.values(), key=lambda e: e.seconds).limiter)


def _gemm() -> OpSpec:
    from .gemm.api import default_schedule, gemm
    from .gemm.check import check_gemm
    from .gemm.directive import GemmDirective
    from .gemm.kernel import build_gemm
    from .gemm.reference import gemm_reference
    from .gemm.schedule import SPACE, Schedule
    from .gemm.signature import gate_problems
    return OpSpec(
        "gemm", "C = act(alpha * A @ B + beta * C0 + bias) on WMMA", GemmDirective, Schedule, SPACE,
        build_gemm, gemm, gemm_reference,
        flops=lambda d, p: 2 * p["m"] * p["n"] * p["k"] * p["batch"],
        default_schedule=lambda d, arch, p=None: default_schedule(d, arch),
        gate_problems=gate_problems,
        tolerance="normwise: sqrt(K)*eps(in) + eps(out) for float inputs, exact for integers (check.py)",
        check=check_gemm, estimate=_gemm_estimate)


def _attention_problem_flops(d, p, backward: bool) -> int:
    from .attention.reference import attention_flops
    window = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else None
    return attention_flops(p["batch"], p["heads"], p["seq_q"], p["seq_k"], d.head_dim, d.causal, window,
                           backward=backward)


def _attention_gate(d, s, key=None) -> list[dict]:
    """Edges inside tiles on both axes, Sq != Sk both ways, GQA: one code object serves all."""
    bm, bn = s.block_m, getattr(s, "block_n", 16)
    return [dict(batch=2, heads=4, kv_heads=2, seq_q=bm + 7, seq_k=2 * bn + 5, head_dim=d.head_dim),
            dict(batch=1, heads=2, kv_heads=1, seq_q=2 * bn + 3, seq_k=bm - 9 if bm > 9 else 5, head_dim=d.head_dim)]


def _attention() -> OpSpec:
    from ..targets import get_target
    from .attention.api import attention
    from .attention.check import check_attention
    from .attention.defaults import default_schedule
    from .attention.directive import AttentionDirective
    from .attention.kernel import build_attention
    from .attention.reference import attention_forward
    from .attention.schedule import SPACE, AttentionSchedule
    return OpSpec(
        "attention", "flash-attention forward (FA-2): O = softmax(Q K^T * scale) V, LSE",
        AttentionDirective, AttentionSchedule, SPACE, build_attention, attention, attention_forward,
        flops=lambda d, p: _attention_problem_flops(d, p, False),
        default_schedule=lambda d, arch, p=None: default_schedule(get_target(arch), d),
        gate_problems=_attention_gate,
        tolerance="O within 3u*max|V|, LSE within 1e-5*(1+|LSE|) (u = unit roundoff of f16/bf16)",
        check=check_attention, estimate=_attention_estimate)


def _attention_bwd() -> OpSpec:
    from .attention.check import check_attention
    from .attention.directive import AttentionDirective
    from .attention.reference import attention_backward
    from .attention_bwd.api import attention_backward as api
    from .attention_bwd.defaults import default_schedule
    from .attention_bwd.run import build_backward
    from .attention_bwd.schedule import SPACE, AttentionBwdSchedule
    return OpSpec(
        "attention_bwd", "flash-attention backward: dQ, dK, dV recomputed from the forward LSE",
        AttentionDirective, AttentionBwdSchedule, SPACE, build_backward, api, attention_backward,
        flops=lambda d, p: _attention_problem_flops(d, p, True),
        default_schedule=lambda d, arch, p=None: default_schedule(arch, d.head_dim),
        gate_problems=_attention_gate,
        tolerance="dq, dk, dv within 8u*max|ref| + 1e-3 (u = unit roundoff of f16/bf16)",
        check=lambda *a, **kw: check_attention(*a, backward=True, **kw), estimate=_attention_bwd_estimate)


_LOADERS: dict[str, Callable[[], OpSpec]] = {"gemm": _gemm, "attention": _attention, "attention_bwd": _attention_bwd}
NAMES = tuple(_LOADERS)
_cache: dict[str, OpSpec] = {}


def get(name: str) -> OpSpec:
    """The OpSpec of `name`; ValueError naming the known ops otherwise."""
    if name not in _LOADERS:
        raise ValueError(f"op={name!r} is not allowed: one of {', '.join(NAMES)}")
    if name not in _cache:
        _cache[name] = _LOADERS[name]()
    return _cache[name]
