"""flash-attn's flash_attn_with_kvcache on the paged decode kernel (ops/paged_attention):

    out = flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None,
                                  block_table=None, softmax_scale=None, causal=False,
                                  window_size=(-1, -1), softcap=0.0, return_softmax_lse=False)

Shapes and semantics are flash-attn's: q (batch, seqlen_q, nheads, hd) (seqlen_q above 16 runs
as chunked prefill, equal chunks);
k_cache / v_cache (num_blocks, page_block_size, nheads_k, hd) with block_table (batch,
max_blocks) int32, or without block_table a contiguous cache (batch, seqlen_cache, nheads_k,
hd); cache_seqlens (int or (batch,) int32) = tokens already in the cache. k / v (batch,
seqlen_new, nheads_k, hd), when given, are written into the cache IN PLACE at positions
cache_seqlens .. cache_seqlens + seqlen_new - 1 before attending (device-side torch indexing,
no host copy), and the attention then covers cache_seqlens + seqlen_new keys. causal is aligned
bottom-right (query i at position L - seqlen_q + i). Returns out, or (out, softmax_lse
(batch, nheads, seqlen_q) f32) with return_softmax_lse=True. s_aux (alias learnable_sink):
attention sinks (GPT-OSS), a (nheads,) logit per query head in every row's softmax denominator
(softmax_lse includes it), as flash_attn_func's.

FP8 caches (torch.float8_e4m3fn / float8_e5m2) are dequantised in registers with k_descale /
v_descale (flash-attn 3's names: a float, one per kv head, or (batch, nheads_k); default 1; rows
that differ per sequence run one call per sequence, vLLM's scale.expand(batch, nheads_k) runs as one,
as fp8 flash_attn_func does); new k / v must already
be in the cache's dtype. fp8_wmma=True (a wmma_gen extension, gfx12 only) multiplies an fp8 cache
natively on fp8 WMMA, Q and P quantised to E4M3 in the kernel (wmma_gen.paged_attention).
rotary_*, cache_batch_idx, cache_leftpad, alibi_slopes and num_splits are flash-attn arguments
this lane does not support (NotImplementedError when set).

The call is torch.ops.wmma_gen.paged_attention (a custom op with a fake implementation, so
torch.compile sees one opaque op); the cache append is plain torch ops before it. Inference
only: its autograd formula raises a NotImplementedError saying so (also for fp8 flash_attn_func,
which runs on this op).

Checked on the host before anything is written: cache_seqlens (an int or an int32 tensor), the
append's capacity (cache_seqlens + seqlen_new <= max_blocks * page_block_size) when the lengths
are host-visible (an int or a CPU tensor in eager mode; GPU lengths are not read -- a sync -- nor
traced ones, so there only seqlen_new <= capacity is checked) and, as host-visible, the block ids
each sequence reads (in [0, num_blocks); a GPU table is not read: there the kernel's 64-bit block
offsets make a bad id fault instead of wrapping into the cache), window_size, the descales
(fp8_scales.check_descale).
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from ..ops.paged_attention.directive import BLOCK_SIZES
from ..ops.paged_attention.inputs import MAX_SQ
from .args import check_sinks, check_window, signed_scale
from .fp8_scales import FP8, paged_kv_scales
from .out_arg import check_out, into
from . import kvcache_replay
from .runtime import check_tensors, direct, kernel_view, stream_of, torch_alloc


def _out_dtype(q: Tensor) -> torch.dtype:
    """O's dtype: q's, or bf16 for fp8 Q bytes (flash_fp8.py: FA3's fp8 forward returns bf16)."""
    return torch.bfloat16 if q.dtype in FP8 else q.dtype


def paged_call(q: Tensor, k_cache: Tensor, v_cache: Tensor, block_table: Tensor, seq_lens: Tensor,
               kv_scales: Optional[Tensor], causal: bool, window_left: int, window_right: int, scale: float,
               softcap: float, fp8_wmma: bool = False, s_aux: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """The op's body: new o and lse (a custom op returns no alias of its inputs)."""
    return _paged_body(q, k_cache, v_cache, block_table, seq_lens, kv_scales, causal, window_left, window_right,
                       scale, softcap, fp8_wmma, s_aux)[:2]


def _paged_body(q: Tensor, k_cache: Tensor, v_cache: Tensor, block_table: Tensor, seq_lens: Tensor,
                kv_scales: Optional[Tensor], causal: bool, window_left: int, window_right: int, scale: float,
                softcap: float, fp8_wmma: bool = False, s_aux: Optional[Tensor] = None,
                out: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Optional[tuple]]:
    """(o, lse (batch, nheads, seqlen_q), replay token or None), O written into `out` when given
    (contiguous, checked by the caller). The token (kvcache_replay.py records it) when q went to
    the kernel as it is and in one piece. More than MAX_SQ query tokens per sequence run as
    chunked prefill: q packed (batch * seqlen_q, nheads, hd) with equal chunks (a view when q is
    contiguous) and device-side offsets."""
    from ..ops.paged_attention.device import paged_attention_into   # MLIR loads on the first call, not import
    given, q = q, kernel_view(q)
    B, Sq, H, D = q.shape
    keep: list = []
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    kw = dict(causal=causal, scale=scale, window=window, softcap=softcap or None, kv_dtype=FP8.get(k_cache.dtype),
              kv_scales=kv_scales, stream=stream_of(q), alloc=torch_alloc(q.device, keep), fp8_wmma=fp8_wmma,
              sinks=None if s_aux is None else kernel_view(s_aux.to(torch.float32)))
    odt = _out_dtype(q)
    if Sq <= MAX_SQ:
        o = out if out is not None else torch.empty(q.shape, dtype=odt, device=q.device)
        lse = torch.empty((B, H, Sq), dtype=torch.float32, device=q.device)
        token = paged_attention_into(q, k_cache, v_cache, block_table, seq_lens, o, lse, **kw)
        return o, lse, (token if q is given else None)
    packed = q.reshape(B * Sq, H, D)
    o = out.view(packed.shape) if out is not None else torch.empty(packed.shape, dtype=odt, device=q.device)
    lse = torch.empty((H, B * Sq), dtype=torch.float32, device=q.device)
    cu = torch.arange(0, (B + 1) * Sq, Sq, dtype=torch.int32, device=q.device)
    paged_attention_into(packed, k_cache, v_cache, block_table, seq_lens, o, lse, cu_seqlens_q=cu, max_seqlen_q=Sq,
                         **kw)
    return (out if out is not None else o.reshape(B, Sq, H, D)), lse.reshape(H, B, Sq).permute(1, 0, 2).contiguous(), None


paged_attention = torch.library.custom_op("wmma_gen::paged_attention", paged_call, mutates_args=())


@paged_attention.register_fake
def _(q, k_cache, v_cache, block_table, seq_lens, kv_scales, causal, window_left, window_right, scale, softcap,
      fp8_wmma=False, s_aux=None):
    return (q.new_empty(q.shape, dtype=_out_dtype(q)),
            q.new_empty((q.shape[0], q.shape[2], q.shape[1]), dtype=torch.float32))


def _forward_only(ctx, *grads):
    raise NotImplementedError("wmma_gen's paged attention (flash_attn_with_kvcache, flash_attn_varlen_func with "
                              "block_table, fp8 flash_attn_func) is forward only: it has no backward; call it under "
                              "torch.no_grad() or detach its inputs (flash_attn_func on float16 / bfloat16 trains)")


paged_attention.register_autograd(_forward_only)


def _refuse(**unsupported) -> None:
    for name, value in unsupported.items():
        off = value is None or value is False or (isinstance(value, (int, float)) and value == 0)
        if not off:
            name = f"{name}=<{type(value).__name__}>" if isinstance(value, Tensor) else f"{name}={value!r}"
            raise NotImplementedError(f"{name} is not supported by wmma_gen's flash_attn_with_kvcache; "
                                      "use flash-attn for it")


def contiguous_pages(cache: Tensor, name: str) -> tuple[Tensor, int]:
    """A (batch, seqlen_cache, Hkv, D) cache as (batch * seqlen_cache / bs, bs, Hkv, D) pages (a
    view, no copy) with the largest supported block size bs dividing seqlen_cache; returns
    (pages, blocks per sequence)."""
    B, S = cache.shape[0], cache.shape[1]
    bs = next((b for b in sorted(BLOCK_SIZES, reverse=True) if S % b == 0), None)
    if bs is None or (B > 1 and cache.stride(0) != S * cache.stride(1)):
        raise ValueError(f"{name}.shape={tuple(cache.shape)} (strides {cache.stride()}) is not allowed without "
                         f"block_table: seqlen_cache a multiple of 16 and sequences stored back to back")
    pages = cache.as_strided((B * S // bs, bs) + tuple(cache.shape[2:]),
                             (bs * cache.stride(1),) + tuple(cache.stride()[1:]))
    return pages, S // bs


def host_visible(t: Tensor) -> bool:
    """Values readable without a device sync or a graph break: a CPU tensor in eager mode."""
    return t.device.type == "cpu" and not torch.compiler.is_compiling() and type(t) is torch.Tensor


def _seq_lens(cache_seqlens, B: int, device) -> Tensor:
    """cache_seqlens as a (B,) int32 tensor: an int >= 0 or a torch.int32 tensor of shape (B,)."""
    if cache_seqlens is None:
        cache_seqlens = 0
    if isinstance(cache_seqlens, int) and not isinstance(cache_seqlens, bool) and cache_seqlens >= 0:
        return torch.full((B,), cache_seqlens, dtype=torch.int32, device=device)
    if isinstance(cache_seqlens, Tensor) and cache_seqlens.dtype == torch.int32 and tuple(cache_seqlens.shape) == (B,):
        if host_visible(cache_seqlens) and B and int(cache_seqlens.min()) < 0:
            raise ValueError(f"cache_seqlens holds {int(cache_seqlens.min())}: tokens in the cache are >= 0")
        return cache_seqlens
    what = (f"{cache_seqlens.dtype} tensor of shape {tuple(cache_seqlens.shape)}" if isinstance(cache_seqlens, Tensor)
            else repr(cache_seqlens))
    raise ValueError(f"cache_seqlens={what} is not allowed: an int >= 0 or a torch.int32 tensor of shape ({B},)")


def _append(k_cache: Tensor, v_cache: Tensor, k: Tensor, v: Tensor, lens: Tensor, table: Tensor) -> None:
    """k / v at positions lens[b] + i of sequence b, through the (paged) block table, in place
    (after checking that they fit: module doc)."""
    for n, new, cache in (("k", k, k_cache), ("v", v, v_cache)):
        if (new.dim() != 4 or new.dtype != cache.dtype or new.shape[0] != lens.shape[0]
                or new.shape[2:] != cache.shape[2:]):
            raise ValueError(f"{n}.shape={tuple(new.shape)} {new.dtype} is not allowed: (batch, seqlen_new, "
                             f"{cache.shape[2]}, {cache.shape[3]}) of the cache's dtype {cache.dtype}")
    bs = k_cache.shape[1]
    capacity = table.shape[1] * bs
    ends = lens.long() + k.shape[1] if host_visible(lens) else torch.tensor([k.shape[1]])
    if ends.numel() and int(ends.max()) > capacity:
        b = int(ends.argmax())
        raise ValueError(f"cache_seqlens[{b}] + seqlen_new = {int(ends[b])} is not allowed: the appended tokens "
                         f"must fit the cache, at most max_blocks * page_block_size = {table.shape[1]} * {bs} = "
                         f"{capacity} per sequence")
    pos = lens.long()[:, None] + torch.arange(k.shape[1], device=k.device)[None, :]
    blk = table.long().gather(1, pos // bs)
    off = pos % bs
    k_cache[blk, off] = k
    v_cache[blk, off] = v


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None, cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0, return_softmax_lse=False,
                            k_descale=None, v_descale=None, fp8_wmma=False, s_aux=None, learnable_sink=None,
                            out=None):
    """See the module doc (flash-attn's argument names, order and semantics); out (vLLM's
    flash-attn fork's keyword): a contiguous tensor like q (bf16 for fp8 q) that receives O."""
    key = None
    if (rotary_cos is None and rotary_sin is None and cache_batch_idx is None and cache_leftpad is None
            and alibi_slopes is None and (num_splits is None or type(num_splits) is int and num_splits == 0)
            and k_descale is None and v_descale is None and s_aux is None and learnable_sink is None):
        key, done = kvcache_replay.keyed(q, k_cache, v_cache, k, v, cache_seqlens, block_table, out, softmax_scale,
                                         causal, tuple(window_size or ()), softcap, bool(fp8_wmma),
                                         bool(return_softmax_lse))
        if done is not None:      # a repeat of a known key: appended, allocated and enqueued
            return done if return_softmax_lse else done[0]
    _refuse(rotary_cos=rotary_cos, rotary_sin=rotary_sin, cache_batch_idx=cache_batch_idx,
            cache_leftpad=cache_leftpad, alibi_slopes=alibi_slopes, num_splits=num_splits)
    check_tensors(q=q, k_cache=k_cache, v_cache=v_cache, k=k, v=v, block_table=block_table,
                  cache_seqlens=cache_seqlens if isinstance(cache_seqlens, Tensor) else None, out=out)
    check_out(out, q, _out_dtype(q))
    if k_cache.dtype != v_cache.dtype:
        raise ValueError(f"v_cache.dtype={v_cache.dtype} is not allowed: {k_cache.dtype}, k_cache's dtype")
    if (k is None) != (v is None):
        raise ValueError("k and v are given together or not at all (the new tokens' keys and values)")
    for n, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        if t.dim() != 4:
            raise ValueError(f"{n}.shape={tuple(t.shape)} is not allowed: 4-D as flash-attn takes")
    sinks = check_sinks(s_aux, learnable_sink, q.shape[2], q)     # before the cache append below
    B = q.shape[0]
    lens = _seq_lens(cache_seqlens, B, q.device)
    q, softmax_scale = signed_scale(q, softmax_scale)
    left, right = check_window(window_size)
    if block_table is None:
        k_pages, per = contiguous_pages(k_cache, "k_cache")
        v_pages, _ = contiguous_pages(v_cache, "v_cache")
        table = torch.arange(k_pages.shape[0], dtype=torch.int32, device=q.device).reshape(B, per)
    else:
        if block_table.dtype != torch.int32 or block_table.dim() != 2:
            raise ValueError(f"block_table ({block_table.dtype}, shape {tuple(block_table.shape)}) is not allowed: "
                             "a 2-D torch.int32 tensor (batch, max_blocks)")
        k_pages, v_pages, table = k_cache, v_cache, block_table
    scales = paged_kv_scales(k_cache, k_descale, v_descale, B, per_sequence=True)   # FA3 (batch, nheads_k) too
    if k is not None:
        _append(k_pages, v_pages, k, v, lens, table)
        lens = (lens + k.shape[1]).to(torch.int32)
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    opts = (bool(causal), left, right, scale, float(softcap or 0.0), bool(fp8_wmma))
    opts += (sinks,) if sinks is not None else ()
    table, lens = table.contiguous(), lens.contiguous()
    if host_visible(table) and host_visible(lens):     # CPU tables cost no sync: ids checked as in numpy
        from ..ops.paged_attention.inputs import check_block_ids
        check_block_ids(table.numpy(), lens.numpy(), k_pages.shape[1], k_pages.shape[0])
    if (scales is None or scales.dim() == 2) and direct(q, out):
        o, lse, token = _paged_body(q, k_pages, v_pages, table, lens, scales, *opts, out=out)
        if scales is None and sinks is None:
            kvcache_replay.remember(key, token, table, out, o, lse, block_table is None, table.shape[1] * k_pages.shape[1],
                                    lse_seen=bool(return_softmax_lse))
        out = o
    elif scales is None or scales.dim() == 2:
        out, lse = into(out, *torch.ops.wmma_gen.paged_attention(q, k_pages, v_pages, table, lens, scales, *opts))
    else:     # FA3 descales that differ per sequence: one call per sequence (the kernel has one row)
        run = paged_call if direct(q) else torch.ops.wmma_gen.paged_attention
        outs = [run(q[b:b + 1], k_pages, v_pages, table[b:b + 1], lens[b:b + 1], scales[b], *opts) for b in range(B)]
        out, lse = into(out, torch.cat([o for o, _ in outs]), torch.cat([x for _, x in outs]))
    return (out, lse) if return_softmax_lse else out
