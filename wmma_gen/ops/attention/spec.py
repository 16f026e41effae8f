"""The attention forward's OpSpec (ops/contract.py); the Problem and the fields both attention ops
share are attention_common's (problem.py, spec_parts.py).

The forward's KernelSet is {"attention"} plus {"combine"} when the schedule splits the keys
(split_kv > 1); every size is a kernel argument, so the specialization key is None: one code
object per (directive, schedule, arch) serves every problem."""
from __future__ import annotations

from dataclasses import asdict

from ...attention_common import tune_parts
from ...attention_common.directive import AttentionDirective as DIRECTIVE  # noqa: F401  (light: registry.directive_of)
from ...attention_common.problem import AttentionProblem, as_problem
from ...attention_common.spec_parts import (AXES, bucket, check, flops_of, gate_problems, key_of, selftest_of,
                                            sizes)
from ..contract import Deferred, ModelEstimate, OpSpec
from ...attention_common.sweep_axes import SHARED, SOFTCAP
from .schedule import SPACE  # noqa: F401  (light: registry.space_of)

SWEEP_AXES = SHARED + (SOFTCAP,)   # light: registry.sweep_axes_of
LIGHT_MODULES = {"problem_file": "wmma_gen.attention_common.problem_file",   # registry.light_module
                 "recorded": ".recorded", "calibration_point": ".calibration_point"}


def build(d, s, target, key=None):
    from .combine import build_attention_combine
    from .kernel import build_attention
    out = {"attention": build_attention(d, s, target)}
    if s.split_kv > 1:
        out["combine"] = build_attention_combine(d, s, target)
    return out


def signatures(d, s, target, key, symbols) -> dict:
    """What build declares per kernel, without MLIR (OpSpec.signatures: a cached launch)."""
    from .signature import attention_signature
    out = {"attention": attention_signature(d, s, symbols["attention"])}
    if "combine" in symbols:
        from .combine_signature import combine_signature
        out["combine"] = combine_signature(d, s, symbols["combine"])
    return out


def estimate(cs, d, s, p, arch: str) -> ModelEstimate:
    from .model import estimate_attention
    e = estimate_attention(cs.kernel("attention"), d, s, sizes(d, p), arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def flops(d, p) -> int:
    return flops_of(d, p, False)


def report(cs, d, s, p, arch: str):
    from .report import report as analyze_report
    return analyze_report(cs, d, s, as_problem(p), arch)


def varlen_gate():
    from . import varlen_gate as module
    return module


def timing_sizes(d, p) -> dict:
    """The forward's arguments for GPU timing (OpSpec.gpu_time)."""
    return {**asdict(as_problem(p)), "scale": 1.0 / d.head_dim ** 0.5}


def default_schedule(d, arch: str, p=None):
    from ...targets import get_target
    from .defaults import default_schedule as default
    return default(get_target(arch), d)


def torch_sdpa(torch, r):
    """`wmma-gen bench --vs torch`'s baseline: torch's scaled_dot_product_attention on ladder row
    `r` (bhsd, K = V), as (callable, FLOPs by this op's convention, label); None for other dtypes."""
    from ...attention_common.directive import AttentionDirective
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}.get(str(r["dtype"]))
    if dt is None:
        return None
    p = AttentionProblem(**{c: int(r[c]) for c in ("batch", "heads", "kv_heads", "seq_q", "seq_k")})
    d = AttentionDirective(str(r["dtype"]), int(r["head_dim"]), causal=bool(r["causal"]))
    q = torch.randn(p.batch, p.heads, p.seq_q, d.head_dim, dtype=dt, device="cuda")
    kv = torch.randn(p.batch, p.heads, p.seq_k, d.head_dim, dtype=dt, device="cuda")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return (lambda: sdpa(q, kv, kv, is_causal=d.causal)), flops(d, p), "torch SDPA"


def spec() -> OpSpec:
    from ...attention_common.directive import AttentionDirective
    from .schedule import SPACE, AttentionSchedule
    # the host side (numpy), imported on its first call
    attention = Deferred(f"{__package__}.api", "attention")
    forward_plan = Deferred(f"{__package__}.plans", "forward_plan")
    attention_forward = Deferred("wmma_gen.attention_common.reference", "attention_forward")
    return OpSpec(
        "attention", "flash-attention forward (FA-2): O = softmax(Q K^T * scale) V, LSE", "loop",
        AttentionDirective, AttentionSchedule, SPACE, AttentionProblem, AXES, build, key_of, check, estimate,
        flops, bucket, default_schedule, gate_problems,
        tolerance="O within 3u*max|V|, LSE within 1e-5*(1+|LSE|+softcap) (u = unit roundoff of f16/bf16)",
        api=attention, reference=attention_forward, cli_values=tune_parts.cli_values,
        host_bytes=tune_parts.host_bytes, report=report,
        tuning_from="wmma_gen.ops.attention.tuning", selftest=selftest_of("attention"), plan=forward_plan,
        signatures=signatures,
        torch_baseline=torch_sdpa, gate_check=tune_parts.gate_check_of(varlen_gate), gate_attrs=tune_parts.gate_attrs,
        gpu_time=tune_parts.gpu_time_of(timing_sizes, varlen_gate))
