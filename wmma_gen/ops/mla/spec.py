"""MLA decode's OpSpec (ops/contract.py); registry.py registers it with

    register("mla", "wmma_gen.ops.mla.spec")

KernelSet: {"mla", "combine"}. Every size is a kernel argument: the specialization key is None.
A Problem gives every sequence a length from `seq_len` down (seq_len, seq_len - 7, ... and 0
once it runs out), so a gate with small seq_len covers empty and short sequences.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..contract import I32_MAX, Axis, Deferred, ModelEstimate, OpSpec
from .directive import MLADirective as DIRECTIVE  # noqa: F401  (light: registry.directive_of)
from .sweep_axes import SWEEP_AXES  # noqa: F401  (light: registry.sweep_axes_of)

LIGHT_MODULES = {"recorded": ".recorded"}   # registry.light_module

SHORTER = 7   # each next sequence of a Problem is this much shorter (never below 0)


@dataclass(frozen=True)
class MLAProblem:
    batch: int
    heads: int
    seq_q: int
    seq_len: int


# Axis(name, type, flag, default, sweep, help, bounds, compile_flag): sizes are kernel arguments only
AXES = (Axis("batch", int, "--batch", 2, (1, 16), "sequences", (1, I32_MAX), False),
        Axis("heads", int, "--heads", 16, (16, 128), "query heads (all share the latent)", (1, I32_MAX), False),
        Axis("seq_q", int, "--seq-q", 1, (1,), "new query tokens per sequence (1..16)", (0, I32_MAX), False),
        Axis("seq_len", int, "--seq-len", 40, (1024, 8192), "cached length of the longest sequence", (0, I32_MAX),
             False))


def as_problem(p) -> MLAProblem:
    if isinstance(p, MLAProblem):
        return p
    return MLAProblem(**{k: p[k] for k in MLAProblem.__dataclass_fields__ if k in p})


def lengths(p) -> list[int]:
    p = as_problem(p)
    return [max(p.seq_len - SHORTER * i, 0) for i in range(p.batch)]


def sizes(d, p) -> dict:
    p = as_problem(p)
    return dict(batch=p.batch, heads=p.heads, seq_q=p.seq_q, head_dim=d.head_dim, head_dim_v=d.head_dim_v,
                block_size=d.block_size, seq_lens=lengths(p), kv_dtype=d.kv_dtype)


def build(d, s, target, key=None):
    from .combine import build_combine
    from .kernel import build_mla
    return {"mla": build_mla(d, s, target), "combine": build_combine(d, s, target)}


def key_of(d, s, p):
    return None


def check(cs, d, p, device=None, seed: int = 0):
    from .check import check_mla
    return check_mla(sizes(d, p), dtype=d.dtype, causal=d.causal, kv_dtype=d.kv_dtype, arch=cs.arch, device=device,
                     seed=seed, schedule=cs.schedule, kernels=cs.pairs())


def estimate(cs, d, s, p, arch: str) -> ModelEstimate:
    from .model import estimate_mla
    q = as_problem(p)
    e = estimate_mla(cs.kernel("mla"), d, s, dict(heads=q.heads, seq_q=q.seq_q), lengths(q), arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def flops(d, p) -> int:
    from .reference import mla_decode_flops
    q = as_problem(p)
    return mla_decode_flops(lengths(q), q.seq_q, q.heads, d.head_dim, d.head_dim_v)


def bucket(p) -> dict:
    p = as_problem(p)
    return {"seq": p.seq_len, "batch": p.batch}


def gate_problems(d, s, key=None) -> list[MLAProblem]:
    """A partial last tile with Sq > 1 and a ragged row tile (heads * Sq not a multiple of 16),
    and empty / short sequences (seq_len 8: 8, 1)."""
    return [MLAProblem(batch=2, heads=5, seq_q=2, seq_len=d.block_size + 21),
            MLAProblem(batch=2, heads=3, seq_q=1, seq_len=8)]


def default_schedule(d, arch: str, p=None):
    from .defaults import default_schedule as default
    if p is None:
        return default(d, arch)
    q = as_problem(p)
    return default(d, arch, dict(batch=q.batch, heads=q.heads, seq_q=q.seq_q, seq_lens=lengths(q)))


def spec() -> OpSpec:
    from .directive import MLADirective
    mla_decode = Deferred(f"{__package__}.api", "mla_decode")   # host side: imported on first call
    mla_plan = Deferred(f"{__package__}.plan", "mla_plan")
    mla_decode_reference = Deferred(f"{__package__}.reference", "mla_decode_reference")
    from .schedule import SPACE, MLASchedule
    return OpSpec(
        "mla", "MLA decode on a paged latent cache (DeepSeek-V2/V3): O = softmax(scale Q C^T) C[:, :Dv], LSE",
        "loop", MLADirective, MLASchedule, SPACE, MLAProblem, AXES, build, key_of, check, estimate,
        flops, bucket, default_schedule, gate_problems,
        tolerance="O within 3u*max|V|, LSE within 1e-5*(1+|LSE|) (u = unit roundoff of f16/bf16)",
        api=mla_decode, reference=mla_decode_reference, plan=mla_plan, tuning_from="wmma_gen.ops.mla.tuning",
        selftest=lambda arch: [(MLADirective(dt, 576, 512, 64), MLAProblem(2, 5, 2, 37)) for dt in ("f16", "bf16")])
