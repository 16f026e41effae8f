"""This op's registry entry, built here so registry.py needs one entry in _LOADERS (STYLE rule 16):

    "paged_attention": lambda: __import__("wmma_gen.ops.paged_attention.opspec",
                                          fromlist=["_"]).paged_attention_opspec(),

The fields follow registry.OpSpec as it is today (directive, schedule, space, build, api,
reference, flops, default_schedule, gate_problems, tolerance, check, estimate).
"""
from __future__ import annotations


def _gate(d, s, key=None) -> list[dict]:
    """Empty and length-1 sequences, a partial last tile, Sq > 1 and GQA: one code object."""
    bs = d.block_size
    return [dict(batch=4, heads=4, kv_heads=2, seq_q=2, head_dim=d.head_dim, block_size=bs,
                 seq_lens=[0, 1, 2 * bs + 5, bs]),
            dict(batch=1, heads=3, kv_heads=1, seq_q=1, head_dim=d.head_dim, block_size=bs, seq_lens=[3 * bs - 1])]


def _estimate(d, s, p, arch):
    from ..registry import ModelEstimate
    from .api import compile_paged
    from .model import estimate_paged
    (_, ck), _ = compile_paged(d, s, arch)
    e = estimate_paged(ck, d, s, p, p["seq_lens"], arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def paged_attention_opspec():
    from ..registry import OpSpec
    from .api import paged_attention
    from .check import check_paged
    from .defaults import default_schedule
    from .directive import PagedAttentionDirective
    from .kernel import build_paged_attention
    from .reference import paged_attention_flops, paged_attention_reference
    from .schedule import SPACE, PagedSchedule
    return OpSpec(
        "paged_attention", "paged-KV decode attention (vLLM block tables): O = softmax(cap(Q K^T * scale)) V, LSE",
        PagedAttentionDirective, PagedSchedule, SPACE, build_paged_attention, paged_attention,
        paged_attention_reference,
        flops=lambda d, p: paged_attention_flops(p["seq_lens"], p["seq_q"], p["heads"], d.head_dim, d.causal,
                                                 (p.get("window_left", -1), p.get("window_right", -1))
                                                 if d.window else None),
        default_schedule=lambda d, arch, p=None: default_schedule(
            d, arch, 16 if p is None else p["heads"] // p["kv_heads"] * p["seq_q"],
            0 if p is None else max(p.get("seq_lens", [0]) or [0])),
        gate_problems=_gate,
        tolerance="O within 3u*max|v_scale V|, LSE within 1e-5*(1+|LSE|+softcap) (u = unit roundoff of f16/bf16)",
        check=check_paged, estimate=_estimate)
