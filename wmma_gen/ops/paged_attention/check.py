"""Correctness gate of paged decode attention: seeded random paged caches (shuffled,
non-contiguous block tables), the kernel vs the float64 reference (reference.py).

Tolerances (absolute; u = unit roundoff of the query dtype, f16 2^-11, bf16 2^-8), as the dense
forward's check.py: O within 3u * max|v_scale * V| (P rounded to the dtype before the second
WMMA, O once at the end); LSE within 1e-5 * (1 + max|LSE| + softcap) (f32 scores; softcap adds
the f32 tanh). Rows that see no key must give O = 0 and LSE = -inf exactly. fp8_wmma directives
are checked against the reference of Q as the kernel quantises it (reference.quantized_queries),
O within (2^-4 + n 2^-18 + 3u) * max|v_scale * V| for n = the longest sequence (P's E4M3
rounding: tests/emu/test_paged_attention_fp8_wmma.py derives it), LSE as above.

Problem keys: batch, heads, kv_heads, seq_q, head_dim, and optionally seq_lens (a list; default
random in 0..3*block_size+5 per sequence), block_size (16), window_left / window_right,
softcap, kv_dtype.
"""
from __future__ import annotations

import numpy as np

from ... import hostdata
from ...attention_common.check import UNIT, AttentionCheck
from ...attention_common.paged_check import random_pages, random_table, verdict
from .reference import paged_attention_reference, quantized_queries


def random_paged(problem: dict, dtype: str, seed: int):
    """(q, k_cache, v_cache stored; their float64 values; block_table; seq_lens)."""
    rng = np.random.default_rng(seed)
    B, H, Hkv, Sq, D = (problem[x] for x in ("batch", "heads", "kv_heads", "seq_q", "head_dim"))
    bs = problem.get("block_size", 16)
    table, lens, nb = random_table(rng, problem, bs)
    q = hostdata.rounded(rng.standard_normal((B, Sq, H, D)), dtype)
    caches = [random_pages(rng, (nb, bs, Hkv, D), dtype, problem.get("kv_dtype")) for _ in range(2)]
    return q, caches, table, lens


def check_paged(problem: dict, *, dtype="f16", causal=True, window=None, scale=None, softcap=None, kv_dtype=None,
                return_lse=True, arch="gfx1100", device=None, seed=0, schedule=None, kernels=None,
                fp8_wmma=False) -> AttentionCheck:
    """`kernels` ({"paged": (src, ck), "combine": (src, ck)}, a CompiledSet's pairs) makes the
    check run exactly those objects (the gate certifies what is timed and exported)."""
    from .api import paged_attention
    q, ((k, k64), (v, v64)), table, lens = random_paged({**problem, "kv_dtype": kv_dtype or problem.get("kv_dtype")},
                                                        dtype, seed)
    kvd = kv_dtype or problem.get("kv_dtype")
    o, lse = paged_attention(q, k, v, table, lens, causal=causal, window=window, scale=scale, softcap=softcap,
                             kv_dtype=kvd, return_lse=True, dtype=dtype, arch=arch, device=device, schedule=schedule,
                             fp8_wmma=fp8_wmma, _kernels=kernels, _return_lse=return_lse)
    ro, rl = paged_attention_reference(quantized_queries(q) if fp8_wmma else q, k64, v64, table, lens, causal=causal,
                                       window=window, scale=scale, softcap=softcap)
    if lse is None:                        # a directive without LSE: the O rows that see nothing must be 0
        lse = np.where((o == 0).all(axis=-1).transpose(0, 2, 1), -np.inf, rl).astype(np.float32)
    p_rounding = 2.0 ** -4 + int(max(lens, default=0)) * 2.0 ** -18 if fp8_wmma else 0.0
    otol = (p_rounding + 3 * UNIT[dtype]) * max(np.abs(v64).max(initial=0.0), 1.0)
    ltol = 1e-5 * (1 + np.abs(rl[np.isfinite(rl)]).max(initial=0.0) + (softcap or 0.0))
    return verdict(o, ro, lse, rl, otol, ltol, device)
