"""Device-resident paged decode: `paged_attention_into` writes into the caller's o (and lse) on
operands that already live on the device (torch tensors on a ROCm GPU, DLPack arrays, CPU memory
for the emulator), as ops/device_calls.attention_into does for the dense forward:

    paged_attention_into(q, k_cache, v_cache, block_table, seq_lens, o, lse=None, *, causal=True,
                         scale=None, window=None, softcap=None, kv_dtype=None, kv_scales=None,
                         cu_seqlens_q=None, max_seqlen_q=None, device=None, arch=None, stream=None,
                         alloc=None, fp8_wmma=False, sinks=None)

Chunked prefill: q / o packed (total_q, heads, D), lse (heads, total_q), cu_seqlens_q (batch + 1,)
int32 on the device; GPU offsets are never read on the host, so max_seqlen_q (the longest
chunk) must be given with them (as flash-attn's varlen calls).

Two enqueues on `stream` (the paged kernel, the dense forward's combine), no host copy, no sync.
The split-KV partials come from `alloc(shape, dtype, zero)` (device_calls' contract). kv_scales
(2, kv_heads) float32 on the device (row 0 K, row 1 V) is required for fp8 caches; fp8_wmma=True
(gfx12) multiplies them natively on fp8 WMMA (wmma_gen.paged_attention says how the numerics differ).
Sizes and kernels are chosen once per call shape (a bounded plan cache); seq_lens are read on
the host only when they are CPU memory (checked there: 0 <= L <= max_blocks * block_size); GPU
seq_lens and block ids are the caller's responsibility (never copied to the host).
"""
from __future__ import annotations

import numpy as np

from ...device.operand import as_operand
from ...errors import ScheduleError
from .. import device_calls, plans
from ..plans import Plan
from .inputs import check_lens


def _offsets(named: dict, max_seqlen_q):
    """Host cu_seqlens_q for the plan's shape check: read from CPU memory, or for GPU offsets
    (never read on the host) a stand-in with the right ends; then max_seqlen_q (the caller's) is
    the grid's."""
    cu = named["cu_seqlens_q"]
    if cu.dtype != "i32" or cu.ndim != 1:
        raise ScheduleError("cu_seqlens_q", f"{cu.dtype} {cu.shape}", "a 1-D int32 tensor of batch + 1 offsets")
    if cu.device == "cpu":
        return np.array(device_calls.np_view(cu)), None
    if not isinstance(max_seqlen_q, (int, np.integer)) or isinstance(max_seqlen_q, bool) or max_seqlen_q < 1:
        raise ScheduleError("max_seqlen_q", max_seqlen_q, "an int >= 1 (the longest chunk): GPU cu_seqlens_q are "
                            "not read on the host")
    ends = np.zeros(cu.shape[0], np.int64)
    ends[-1] = named["q"].shape[0]
    return ends, int(max_seqlen_q)


def plan_for(named: dict, arch: str, *, causal, scale, window, softcap, kv_dtype, return_lse,
             max_seqlen_q=None, fp8_wmma=False) -> Plan:
    """(paged kernel, combine) and the problem for these operands: their shapes and dtypes (and
    CPU-read query offsets) as the hashable call ops/plans.cached_plan keys and shows to its
    observers (wmma_gen.torch.record_problems); the builder is OpSpec.plan (plan.py)."""
    offsets = None
    if "cu_seqlens_q" in named:
        cu, longest = _offsets(named, max_seqlen_q)
        offsets = (tuple(int(x) for x in cu), longest)
    operands = tuple((n, tuple(x.shape), x.dtype) for n, x in named.items())
    return plans.cached_plan("paged_attention", arch, operands=operands, causal=causal, scale=scale,
                             window=None if window is None else tuple(window), softcap=softcap, kv_dtype=kv_dtype,
                             return_lse=return_lse, offsets=offsets, fp8_wmma=fp8_wmma)


def paged_attention_into(q, k_cache, v_cache, block_table, seq_lens, o, lse=None, *, causal: bool = True,
                         scale=None, window=None, softcap=None, kv_dtype=None, kv_scales=None, cu_seqlens_q=None,
                         max_seqlen_q=None, device=None, arch: str | None = None, stream=None, alloc=None,
                         fp8_wmma: bool = False, sinks=None):
    """Paged decode attention into o (batch, Sq, heads, D) and lse (batch, heads, Sq) f32 when
    given; see the module doc and wmma_gen.paged_attention for shapes and semantics. sinks:
    float32 (heads,) attention-sink logits (GPT-OSS s_aux) or None. Returns the call's replay
    token (device_calls.Prepacked: what wmma_gen.torch's call-site cache re-runs), None for an
    empty problem."""
    named = {n: as_operand(x, n) for n, x in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache),
                                               ("block_table", block_table), ("seq_lens", seq_lens), ("o", o),
                                               ("lse", lse), ("kv_scales", kv_scales), ("cu_seqlens_q", cu_seqlens_q),
                                               ("sinks", sinks))
             if x is not None}
    device, arch, alloc, _keep = device_calls.place_operands(named, device, arch, alloc)
    plan = plan_for(named, arch, causal=causal, scale=scale, window=window, softcap=softcap, kv_dtype=kv_dtype,
                    return_lse=lse is not None, max_seqlen_q=max_seqlen_q, fp8_wmma=fp8_wmma)
    if named["seq_lens"].device == "cpu":
        check_lens(device_calls.np_view(named["seq_lens"]), plan.problem["max_blocks"] * plan.problem["block_size"])
    ops = {"Q": named["q"], "K_cache": named["k_cache"], "V_cache": named["v_cache"],
           "block_table": named["block_table"], "seq_lens": named["seq_lens"], "O": named["o"]}
    for n, k in (("lse", "LSE"), ("kv_scales", "kv_scales"), ("cu_seqlens_q", "cu_seqlens_q"), ("sinks", "sinks")):
        if n in named:
            ops[k] = named[n]
    return device_calls.run_plan(plan, device, ops, alloc, stream)
