"""Paged decode attention's OpSpec (ops/contract.py); registry.py registers it with

    register("paged_attention", "wmma_gen.ops.paged_attention.spec")

KernelSet: {"paged", "combine"} (the dense forward's combine finishes every split count). Every
size is a kernel argument: the specialization key is None. A Problem gives every sequence a
length from `seq_len` down (`lengths`: seq_len, seq_len - 7, ... and 0 once it runs out), so
a gate with small seq_len covers empty and length-1 sequences. Sweepable: tuning.py (studies,
objective, export); lookup.py reads the exported files back.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..contract import I32_MAX, Axis, Deferred, ModelEstimate, OpSpec
from .directive import PagedAttentionDirective as DIRECTIVE  # noqa: F401  (light: registry.directive_of)
from .sweep_axes import SWEEP_AXES  # noqa: F401  (light: registry.sweep_axes_of)

LIGHT_MODULES = {"recorded": ".recorded"}   # registry.light_module

SHORTER = 7   # each next sequence of a Problem is this much shorter (never below 0)


@dataclass(frozen=True)
class PagedProblem:
    batch: int
    heads: int
    kv_heads: int
    seq_q: int
    seq_len: int
    window_left: int = -1
    window_right: int = -1

    def __post_init__(self):
        from ...errors import ScheduleError
        if self.kv_heads < 1 or self.heads % self.kv_heads:
            raise ScheduleError("kv_heads", self.kv_heads, f"a positive divisor of heads={self.heads} (GQA/MQA)")


# Axis(name, type, flag, default, sweep, help, bounds, compile_flag): sizes are kernel arguments only
AXES = (Axis("batch", int, "--batch", 3, (1, 16), "sequences", (1, I32_MAX), False),
        Axis("heads", int, "--heads", 4, (32,), "query heads", (1, I32_MAX), False),
        Axis("kv_heads", int, "--kv-heads", 2, (8,), "key/value heads (divides heads)", (1, I32_MAX), False),
        Axis("seq_q", int, "--seq-q", 1, (1,), "new query tokens per sequence (1..16)", (0, I32_MAX), False),
        Axis("seq_len", int, "--seq-len", 40, (1024, 8192), "cached length of the longest sequence", (0, I32_MAX),
             False))


def as_problem(p) -> PagedProblem:
    if isinstance(p, PagedProblem):
        return p
    return PagedProblem(**{k: p[k] for k in PagedProblem.__dataclass_fields__ if k in p})


def lengths(p) -> list[int]:
    p = as_problem(p)
    return [max(p.seq_len - SHORTER * i, 0) for i in range(p.batch)]


def sizes(d, p) -> dict:
    p = as_problem(p)
    out = dict(batch=p.batch, heads=p.heads, kv_heads=p.kv_heads, seq_q=p.seq_q, head_dim=d.head_dim,
               block_size=d.block_size, seq_lens=lengths(p))
    if d.window:
        out.update(window_left=p.window_left, window_right=p.window_right)
    return out


def build(d, s, target, key=None):
    from .. import registry     # the dense forward's split-KV combine, looked up (no op folder imported)
    from .directive import combine_directive
    build_attention_combine = registry.sibling("attention", "combine").build_attention_combine
    from .kernel import build_paged_attention
    return {"paged": build_paged_attention(d, s, target), "combine": build_attention_combine(combine_directive(d), s,
                                                                                             target)}


def signatures(d, s, target, key, symbols) -> dict:
    """What build declares per kernel, without MLIR (OpSpec.signatures: a cached launch)."""
    from .. import registry
    from .directive import combine_directive
    combine_signature = registry.sibling("attention", "combine_signature").combine_signature
    from .signature import paged_signature
    return {"paged": paged_signature(d, s, symbols["paged"]),
            "combine": combine_signature(combine_directive(d), s, symbols["combine"])}


def key_of(d, s, p):
    return None


def check(cs, d, p, device=None, seed: int = 0):
    """The set's kernels on p's random paged cache vs the float64 reference (check.check_paged)."""
    from .check import check_paged
    window = (as_problem(p).window_left, as_problem(p).window_right) if d.window else None
    return check_paged(sizes(d, p), dtype=d.dtype, causal=d.causal, window=window, softcap=10.0 if d.softcap else None,
                       kv_dtype=None if d.kv_dtype == d.dtype else d.kv_dtype, return_lse=d.return_lse,
                       arch=cs.arch, device=device, seed=seed, schedule=cs.schedule, kernels=cs.pairs(),
                       fp8_wmma=d.fp8_wmma)


def estimate(cs, d, s, p, arch: str) -> ModelEstimate:
    from .model import estimate_paged
    e = estimate_paged(cs.kernel("paged"), d, s, sizes(d, p), lengths(p), arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def flops(d, p) -> int:
    from .reference import paged_attention_flops
    q = as_problem(p)
    return paged_attention_flops(lengths(q), q.seq_q, q.heads, d.head_dim, d.causal,
                                 (q.window_left, q.window_right) if d.window else None)


def bucket(p) -> dict:
    """Exported schedules are looked up by context length and batch (issue 27 item 5)."""
    p = as_problem(p)
    return {"seq": p.seq_len, "batch": p.batch}


def gate_problems(d, s, key=None) -> list[PagedProblem]:
    """A partial last tile, Sq > 1 with GQA, and empty / length-1 sequences (seq_len 8: 8, 1, 0)."""
    bs = d.block_size
    return [PagedProblem(batch=3, heads=4, kv_heads=2, seq_q=2, seq_len=2 * bs + 5),
            PagedProblem(batch=3, heads=3, kv_heads=1, seq_q=1, seq_len=8)]


def default_schedule(d, arch: str, p=None):
    from .defaults import default_schedule as default
    if p is None:
        return default(d, arch)
    q = as_problem(p)
    return default(d, arch, q.heads // q.kv_heads * q.seq_q, q.seq_len, batch=q.batch, kv_heads=q.kv_heads)


def spec() -> OpSpec:
    from .directive import PagedAttentionDirective
    paged_attention = Deferred(f"{__package__}.api", "paged_attention")   # host side: imported on first call
    paged_plan = Deferred(f"{__package__}.plan", "paged_plan")
    paged_attention_reference = Deferred(f"{__package__}.reference", "paged_attention_reference")
    from .schedule import SPACE, PagedSchedule
    return OpSpec(
        "paged_attention", "paged-KV decode attention (vLLM block tables): O = softmax(cap(scale Q K^T)) V, LSE",
        "loop", PagedAttentionDirective, PagedSchedule, SPACE, PagedProblem, AXES, build, key_of, check, estimate,
        flops, bucket, default_schedule, gate_problems,
        tolerance="O within 3u*max|v_scale V|, LSE within 1e-5*(1+|LSE|+softcap) (u = unit roundoff of f16/bf16)",
        api=paged_attention, reference=paged_attention_reference, tuning_from="wmma_gen.ops.paged_attention.tuning",
        plan=paged_plan, signatures=signatures,
        selftest=lambda arch: [(PagedAttentionDirective(dt, 64), PagedProblem(3, 4, 2, 2, 37)) for dt in ("f16", "bf16")])
