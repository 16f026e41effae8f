"""flash-attn 2 and SDPA front ends over torch.ops.wmma_gen.attention (attention_ops.py).

    flash_attn_func(q, k, v, ...)              q (B, Sq, H, D), k/v (B, Sk, Hkv, D); causal bottom-right
    flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, ...)   q (total_q, H, D); lse (H, total_q)
    scaled_dot_product_attention(q, k, v, ...)  q (B, H, Sq, D), k/v (B, Hkv, Sk, D); is_causal TOP-LEFT

SDPA's top-left causal (query i sees key j iff j <= i) in the kernel's bottom-right terms
(visible iff i + off - left <= j <= i + off + right, off = Sk - Sq):
    Sq == Sk   causal                          (off = 0: the two alignments agree)
    Sq >  Sk   window (-1, Sq - Sk), not causal (i + off + Sq - Sk = i)
    Sq <  Sk   causal on keys[:Sq] (a view)    (no query reaches key Sq or later; their grads are 0)
"""
from __future__ import annotations

import math
import warnings

import torch

from ..attention_common.directive import HEAD_DIMS
from ..attention_common.inputs import check_softcap
from ..device import native
from ..ops.device_calls import placement as _placement
from . import attention_ops, replay, runtime
from .args import check_max_seqlen, check_sinks, check_window, signed_scale
from .flash_fp8 import FP8, flash_attn_fp8
from .out_arg import check_out, into
from .runtime import STRAIGHT, _is_compiling, check_dtype, check_tensors, direct, stream_of

DTYPES = ("f16", "bf16")
_FWD = ("Q", "K", "V", "O", "LSE")      # the forward's pointer arguments a replayed call fills


def _attention(q, k, v, *rest, key=None, lse_seen=True):
    """The forward op, straight when nothing needs torch's dispatcher (runtime.direct); a
    straight call is remembered under the front end's replay `key` (replay.py), its lse kept
    for every hit when no caller of the key sees it (lse_seen False; the key must say so)."""
    if key is None:               # autograd to record (eager Function) or the dispatcher's turn
        return attention_ops.attention_any(q, k, v, *rest)
    out, lse, token = attention_ops.attention_call(q, k, v, *rest)
    if key:                       # () = straight but not replayable (varlen: offsets are data)
        replay.record(key, token, _FWD, out, lse, kept=() if lse_seen else (1,))
    return out, lse


def _replay_key(front: str, q, k, v, *args):
    """(key, (out, lse) of a replayed call or None); key None when the call cannot be replayed
    or recorded (runtime.direct is False). The key holds the call's arguments as given: a front
    end keys only calls whose q, k, v reach the kernels unchanged (a negative scale negates q)."""
    if _is_compiling() or runtime._native_mode(q, k, v) != STRAIGHT:      # runtime.direct, inline
        return None, None
    key, entry, made = native.lookup(replay._entries, (front, _placement(q), *args), (q, k, v), stream_of(q),
                                     replay._ENV)                             # replay.lookup_run, inline
    if made is None and entry is not None:        # stale, or scratch to allocate
        made = replay.hit(key, (q, k, v), q.device, stream_of(q), entry)
    return key, (None if made is None else (made[0], made[1]))


def _refuse(**unsupported) -> None:
    for name, (value, off) in unsupported.items():
        if value is not None and value != off:
            raise NotImplementedError(f"{name}={value!r} is not supported by wmma_gen attention "
                                      f"(only {name}={off!r}); use flash-attn or torch SDPA for it")


def _check(q, k, v, rank: int, layout_doc: str, names=("q", "k", "v")) -> int:
    nq, nk, nv = names
    for name, t in zip(names, (q, k, v)):
        if t.dim() != rank:
            raise ValueError(f"{name}.shape={tuple(t.shape)} is not allowed: {rank}-D {layout_doc}")
        check_dtype(name, t, DTYPES)
    if not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"{nk}.dtype={k.dtype}, {nv}.dtype={v.dtype} are not allowed: {q.dtype}, the dtype of {nq}")
    d = q.shape[-1]
    if d not in HEAD_DIMS:
        raise ValueError(f"head_dim={d} ({nq}.shape[-1]) is not allowed: one of {', '.join(map(str, HEAD_DIMS))}")
    if k.shape[-1] != d or v.shape[-1] != d:
        raise ValueError(f"{nk}.shape={tuple(k.shape)}, {nv}.shape={tuple(v.shape)}: their head_dim must be {d} "
                         f"like {nq}'s")
    return d


def _looks_like_bhsd(q, k) -> bool:
    """A likely (B, H, S, D) mix-up: q AND k both read as fewer tokens than heads. A decode step
    (Sq == 1) or a query against a KV cache longer than its kv heads never matches, so correct
    flash-attn calls stay silent; only a prefill shorter than both head counts can (it warns)."""
    return 1 < q.shape[1] < q.shape[2] and k.shape[1] < k.shape[2]


def _window(window_size) -> tuple[int, int]:
    return check_window(window_size)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False, return_attn_probs=False, *, q_descale=None,
                    k_descale=None, v_descale=None, s_aux=None, learnable_sink=None):
    """flash-attn 2's flash_attn_func: q (B, Sq, H, D), k/v (B, Sk, Hkv, D) with Hkv dividing H
    (GQA: query head h reads kv head h // (H // Hkv)); f16 or bf16; D one of HEAD_DIMS.
    causal is bottom-right aligned; window_size=(left, right), -1 unbounded; softmax_scale
    default 1/sqrt(D); softcap > 0 caps the scaled logits at softcap * tanh(. / softcap)
    (Gemma-2; 0.0 = off), forward and backward. Returns out (B, Sq, H, D), or (out, softmax_lse (B, H, Sq) f32, None)
    with return_attn_probs=True (no probabilities: that needs dropout, which is unsupported).
    The backward is always deterministic (`deterministic` is accepted and has no effect).
    Tensors with a strided last dim are made contiguous on their device (one copy).
    fp8 q, k, v (torch.float8_e4m3fn / float8_e5m2, gfx12 only) take FlashAttention-3's fp8
    forward: q_descale / k_descale / v_descale (batch, nheads_k) float32, O bf16, forward only
    (flash_fp8.py says where a device-side copy happens). A negative softmax_scale runs as -q
    (args.py: the one rule of every entry point).
    s_aux (alias learnable_sink): attention sinks (GPT-OSS), a (nheads,) logit per query head joining
    every softmax row's denominator (not scaled, not capped); softmax_lse includes it; it gets a
    gradient when it requires one (deterministic)."""
    key = None
    if (s_aux is None and learnable_sink is None and q_descale is None and k_descale is None and v_descale is None
            and (softmax_scale is None or type(softmax_scale) in (float, int) and softmax_scale > 0)):
        key, done = _replay_key("flash_attn_func", q, k, v, dropout_p, softmax_scale, causal,
                                tuple(window_size or ()), softcap, alibi_slopes is None, bool(return_attn_probs))
        if done is not None:      # a repeat of a known shape key: allocated and enqueued (replay.py)
            return (done[0], done[1], None) if return_attn_probs else done[0]
    q, softmax_scale = signed_scale(q, softmax_scale)     # q itself when the call was keyed (scale > 0)
    if q.dtype in FP8:
        if s_aux is not None or learnable_sink is not None:
            raise ValueError(f"s_aux is not allowed with q.dtype={q.dtype}: sinks run with float16 / bfloat16")
        _refuse(dropout_p=(dropout_p, 0.0), alibi_slopes=(alibi_slopes, None))
        scale = float(softmax_scale) if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
        check_tensors(q=q, k=k, v=v)
        out, lse = flash_attn_fp8(q, k, v, causal=causal, window=_window(window_size), scale=scale,
                                  softcap=check_softcap(softcap), q_descale=q_descale, k_descale=k_descale,
                                  v_descale=v_descale)
        return (out, lse, None) if return_attn_probs else out
    if any(x is not None for x in (q_descale, k_descale, v_descale)):
        raise ValueError(f"q_descale / k_descale / v_descale are not allowed for q.dtype={q.dtype}: fp8 tensors "
                         "(torch.float8_e4m3fn / float8_e5m2) only")
    sinks = check_sinks(s_aux, learnable_sink, q.shape[2] if q.dim() == 4 else -1, q)
    _refuse(dropout_p=(dropout_p, 0.0), alibi_slopes=(alibi_slopes, None))
    cap = check_softcap(softcap)
    check_tensors(q=q, k=k, v=v)
    d = _check(q, k, v, 4, "(batch, seqlen, nheads, headdim) as flash-attn takes")
    if _looks_like_bhsd(q, k):
        warnings.warn(f"flash_attn_func: q.shape={tuple(q.shape)}, k.shape={tuple(k.shape)} read as seqlen "
                      f"{q.shape[1]} / {k.shape[1]} < nheads {q.shape[2]} / {k.shape[2]}; flash-attn's layout is "
                      "(batch, seqlen, nheads, headdim) -- is this (batch, nheads, seqlen, headdim)? Use "
                      "scaled_dot_product_attention for that layout.", stacklevel=2)
    left, right = _window(window_size)
    scale = float(softmax_scale) if softmax_scale is not None else 1.0 / math.sqrt(d)
    out, lse = _attention(q, k, v, None, None, q.shape[1], k.shape[1], bool(causal), left, right, scale, "bshd",
                          cap, *([sinks] if sinks is not None else []), key=key, lse_seen=bool(return_attn_probs))
    return (out, lse, None) if return_attn_probs else out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None, fp8_wmma=False,
                           k_descale=None, v_descale=None, s_aux=None, learnable_sink=None, seqused_k=None,
                           out=None):
    """flash-attn 2's flash_attn_varlen_func: q (total_q, H, D), k/v (total_k, Hkv, D) packed;
    cu_seqlens_q/k int32 (batch + 1,) offsets on the tensors' device (GPU offsets are never
    read on the host: max_seqlen_q/k must be right); an empty sequence is allowed (its rows
    are absent). Returns out (total_q, H, D), or (out, softmax_lse (H, total_q) f32, None).
    Masks, softcap and conventions as flash_attn_func, per sequence. With block_table (flash-attn's
    paged varlen call) k / v are paged caches (num_blocks, page_block_size, nheads_k, headdim)
    and the call runs on the paged op (paged_varlen.py; softcap allowed there); fp8_wmma=True (a
    wmma_gen extension, gfx12, fp8 caches) multiplies them natively on fp8 WMMA, as
    flash_attn_with_kvcache's; k_descale / v_descale scale an fp8 cache (FA3's names). s_aux (alias
    learnable_sink): attention sinks as flash_attn_func's, paged or not. A negative softmax_scale runs
    as -q (args.py). vLLM's flash-attn fork's keywords: seqused_k (batch,) int32, the keys of each
    sequence, given instead of cu_seqlens_k (with block_table only); out (total_q, H, D) contiguous
    of q's dtype receives O (eager calls write it there, no copy)."""
    sinks = check_sinks(s_aux, learnable_sink, q.shape[1] if q.dim() == 3 else -1, q)
    q, softmax_scale = signed_scale(q, softmax_scale)
    max_seqlen_q, max_seqlen_k = check_max_seqlen("max_seqlen_q", max_seqlen_q), check_max_seqlen(
        "max_seqlen_k", max_seqlen_k)
    if block_table is not None:
        from .paged_varlen import paged_varlen
        _refuse(dropout_p=(dropout_p, 0.0), alibi_slopes=(alibi_slopes, None))
        scale = float(softmax_scale) if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
        out, lse = paged_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, block_table, causal=bool(causal),
                                window=_window(window_size), scale=scale, softcap=float(softcap or 0.0),
                                fp8_wmma=fp8_wmma, k_descale=k_descale, v_descale=v_descale, seqused_k=seqused_k,
                                out=out, **({"s_aux": sinks} if sinks is not None else {}))
        return (out, lse, None) if return_attn_probs else out
    if seqused_k is not None:
        raise NotImplementedError("seqused_k without block_table is not supported by wmma_gen's "
                                  "flash_attn_varlen_func: pass cu_seqlens_k for packed keys, or a paged cache with "
                                  "block_table and seqused_k")
    if k_descale is not None or v_descale is not None:
        raise ValueError("k_descale / v_descale are not allowed without block_table: they scale a paged fp8 cache")
    if fp8_wmma:
        raise ValueError(f"fp8_wmma={fp8_wmma!r} is not allowed without block_table: it multiplies a paged fp8 "
                         "cache natively (gfx12); fp8 q, k, v go to flash_attn_func")
    _refuse(dropout_p=(dropout_p, 0.0), alibi_slopes=(alibi_slopes, None))
    cap = check_softcap(softcap)
    check_tensors(q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k)
    d = _check(q, k, v, 3, "(total, nheads, headdim) packed sequences")
    for name, cu in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if cu.dtype != torch.int32 or cu.dim() != 1:
            raise ValueError(f"{name} ({cu.dtype}, shape {tuple(cu.shape)}) is not allowed: a 1-D torch.int32 "
                             "tensor of batch + 1 offsets")
    left, right = _window(window_size)
    scale = float(softmax_scale) if softmax_scale is not None else 1.0 / math.sqrt(d)
    check_out(out, q, q.dtype)
    args = (q, k, v, cu_seqlens_q.contiguous(), cu_seqlens_k.contiguous(), int(max_seqlen_q), int(max_seqlen_k),
            bool(causal), left, right, scale, "bshd", cap, *([sinks] if sinks is not None else []))
    if out is not None and direct(q, k, v, cu_seqlens_q, cu_seqlens_k, out, sinks):
        out, lse, _ = attention_ops.attention_call(*args, out=out)     # written in place, not replayable
    elif out is not None:
        out, lse = into(out, *_attention(*args))
    else:
        out, lse = _attention(*args, key=() if sinks is None and direct(q, k, v, cu_seqlens_q, cu_seqlens_k) else None)
    return (out, lse, None) if return_attn_probs else out


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False, fallback=False):
    """torch.nn.functional.scaled_dot_product_attention on wmma_gen kernels: query (B, H, Sq, D),
    key/value (B, Hkv, Sk, D), is_causal TOP-LEFT aligned as SDPA's (see the module doc),
    H != Hkv only with enable_gqa=True. attn_mask and dropout_p != 0 (or a dtype / head dim
    the kernels lack) raise NotImplementedError/ValueError -- unless fallback=True, which
    calls torch's own SDPA for exactly those calls (the caller's explicit choice)."""
    query, scale = signed_scale(query, scale)
    if attn_mask is None:
        rkey, done = _replay_key("sdpa", query, key, value, dropout_p, is_causal, scale, enable_gqa)
        if done is not None:      # a repeat of a known shape key: allocated and enqueued (replay.py)
            return done[0]
    else:
        rkey = None
    problem = _sdpa_unsupported(query, key, value, attn_mask, dropout_p)
    if problem is not None:
        if fallback:
            return torch.nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                enable_gqa=enable_gqa)
        raise problem
    check_tensors(query=query, key=key, value=value)
    h, hkv = query.shape[1], key.shape[1]
    if h != hkv and not enable_gqa:
        raise ValueError(f"key.shape[1]={hkv} heads differ from query's {h}: pass enable_gqa=True (as in torch SDPA)")
    sq, sk = query.shape[2], key.shape[2]
    causal, left, right = False, -1, -1
    if is_causal and sq >= sk:
        causal, right = sq == sk, (-1 if sq == sk else sq - sk)
    elif is_causal:
        key, value, causal = key[:, :, :sq], value[:, :, :sq], True
    d = query.shape[-1]
    s = float(scale) if scale is not None else 1.0 / math.sqrt(d)
    out, _ = _attention(query, key, value, None, None, sq, key.shape[2], causal, left, right, s, "bhsd", 0.0,
                        key=rkey, lse_seen=False)
    return out


def _sdpa_unsupported(query, key, value, attn_mask, dropout_p) -> Exception | None:
    """Why wmma_gen cannot run this SDPA call (an exception to raise), or None."""
    if attn_mask is not None:
        return NotImplementedError("attn_mask is not supported by wmma_gen attention (causal and windows are); "
                                   "pass fallback=True to run torch's SDPA for such calls")
    if dropout_p:
        return NotImplementedError(f"dropout_p={dropout_p} is not supported by wmma_gen attention (only 0.0); "
                                   "pass fallback=True to run torch's SDPA for such calls")
    try:
        _check(query, key, value, 4, "(batch, nheads, seqlen, headdim) as SDPA takes", ("query", "key", "value"))
    except ValueError as e:
        return ValueError(f"{e} (or pass fallback=True to run torch's SDPA for such calls)")
    return None
