"""The attention backward's OpSpec (ops/contract.py): the forward's directive, Problem and shared
fields (attention_common/spec_parts.py), its own schedule and a KernelSet of three kernels launched
in order (prepass, dkdv, dq)."""
from __future__ import annotations

from functools import partial

from ...attention_common import spec_parts as fwd
from ...attention_common import tune_parts
from ...attention_common.directive import AttentionDirective as DIRECTIVE  # noqa: F401  (light: registry.directive_of)
from ...attention_common.spec_parts import AXES  # noqa: F401  (the forward's Problem and flags)
from ..contract import Deferred, ModelEstimate, OpSpec

KERNELS = ("prepass", "dkdv", "dq")    # launch order (`wmma-gen compile` writes one kernel: not this op)
from ...attention_common.sweep_axes import SHARED as SWEEP_AXES  # noqa: F401  (light; no --softcap yet)
from .schedule import SPACE  # noqa: F401  (light: registry.space_of)

LIGHT_MODULES = {"problem_file": "wmma_gen.attention_common.problem_file",   # registry.light_module
                 "recorded": ".recorded", "calibration_point": ".calibration_point"}


def build(d, s, target, key=None):
    from .build import build_backward, make_spec
    bs = make_spec(target.arch, d.dtype, d.head_dim, causal=d.causal, window=d.window, varlen=d.varlen,
                   layout=d.layout, softcap=d.softcap)
    return dict(build_backward(bs, s).items())


def signatures(d, s, target, key, symbols) -> dict:
    """What build declares per kernel, without MLIR (OpSpec.signatures: a cached launch)."""
    from .args import signature
    from .build import make_spec
    bs = make_spec(target.arch, d.dtype, d.head_dim, causal=d.causal, window=d.window, varlen=d.varlen,
                   layout=d.layout, softcap=d.softcap)
    return {k: signature(bs, s, k, symbols[k]) for k in KERNELS}


def check(cs, d, p, device=None, seed: int = 0):
    """Forward by the forward's default, then this set's three kernels, vs the float64 reference."""
    return fwd.check(cs, d, p, device, seed, backward=True)


def estimate(cs, d, s, p, arch: str) -> ModelEstimate:
    from .model import estimate_attention_bwd
    seconds, tflops, parts = estimate_attention_bwd(dict(cs.compiled), d, s, fwd.sizes(d, p), arch)
    slowest = max(parts.items(), key=lambda kv: kv[1].seconds)
    return ModelEstimate(seconds, tflops, f"{slowest[0]}:{slowest[1].limiter}")


def flops(d, p) -> int:
    return fwd.flops_of(d, p, True)


def schedule_problems(d, s, p, target) -> list[str]:
    """The tuner's validate stage: the backward schedule's named problems for d (schedule.py)."""
    return s.problems(d.head_dim, d.dtype, target)


def timing_sizes(d, p) -> dict:
    """The backward kernels' arguments for GPU timing (the packed totals a varlen kernel reads too)."""
    from dataclasses import asdict
    p = asdict(fwd.as_problem(p))
    return {"total_q": p["batch"] * p["seq_q"], "total_k": p["batch"] * p["seq_k"], **p, "head_dim": d.head_dim,
            "scale": 1.0 / d.head_dim ** 0.5}


def varlen_gate():
    """The forward's varlen gate and timer (packed sequences), looked up: no op folder imported."""
    from .. import registry
    return registry.sibling("attention", "varlen_gate")


def default_schedule(d, arch: str, p=None):
    from .defaults import default_schedule as default
    return default(arch, d.head_dim)


def spec() -> OpSpec:
    from ...attention_common.directive import AttentionDirective
    from ...attention_common.problem import AttentionProblem
    api = Deferred(f"{__package__}.api", "attention_backward")      # host side: imported on first call
    backward_plan = Deferred(f"{__package__}.plan", "backward_plan")
    attention_backward = Deferred("wmma_gen.attention_common.reference", "attention_backward")
    from .schedule import SPACE, AttentionBwdSchedule
    return OpSpec(
        "attention_bwd", "flash-attention backward: dQ, dK, dV recomputed from the forward LSE", "loop",
        AttentionDirective, AttentionBwdSchedule, SPACE, AttentionProblem, AXES, build, fwd.key_of, check,
        estimate, flops, fwd.bucket, default_schedule, fwd.gate_problems,
        tolerance="dq, dk, dv within 8u*max|ref| + 1e-3 (u = unit roundoff of f16/bf16)",
        api=api, reference=attention_backward, cli_values=tune_parts.cli_values,
        host_bytes=partial(tune_parts.host_bytes, backward=True),
        tuning_from="wmma_gen.ops.attention_bwd.tuning", selftest=fwd.selftest_of("attention_bwd"),
        plan=backward_plan, signatures=signatures, schedule_problems=schedule_problems,
        gate_check=tune_parts.gate_check_of(varlen_gate, backward=True), gate_attrs=tune_parts.gate_attrs,
        gpu_time=tune_parts.gpu_time_of(timing_sizes, varlen_gate))
