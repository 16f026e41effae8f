"""FlashMLA's flash_mla_with_kvcache on the MLA decode kernel (ops/mla):

    out, lse = flash_mla_with_kvcache(q, kv_cache, block_table, cache_seqlens, head_dim_v=512,
                                      softmax_scale=None, causal=False)

q (batch, seq_q, heads, 576) with seq_q 1..16 (speculative decode); kv_cache (num_blocks,
block_size, 1, 576): one latent row per token (DeepSeek-V2/V3, Kimi K2: kv_lora_rank 512 +
rope 64), V its first head_dim_v values; block_table (batch, max_blocks) int32; cache_seqlens
(batch,) int32 (query i at position L - seq_q + i; causal is bottom-right). Returns out (batch,
seq_q, heads, head_dim_v) in q's dtype and lse (batch, heads, seq_q) float32 (natural log).
float16 / bfloat16 caches, or float8_e4m3fn / float8_e5m2 latent caches dequantised in registers
with descale_k (a float or a (1,) float32 tensor; default 1). tile_scheduler_metadata and
num_splits (FlashMLA's get_mla_metadata results) are accepted and unused: this kernel picks its
split count itself (ops/mla/lookup.py, defaults.py). FlashMLA's keyword names k_cache (for
kv_cache) and is_fp8_kvcache are accepted as vLLM's FlashMLA backend passes them; descale_q
(fp8 queries) is not supported here.

The call is torch.ops.wmma_gen.flash_mla (a custom op with a fake implementation, so
torch.compile sees one opaque op). Inference only: its autograd formula raises a
NotImplementedError saying so.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from .fp8_scales import FP8
from .runtime import check_tensors, kernel_view, stream_of, torch_alloc


def mla_call(q: Tensor, kv_cache: Tensor, block_table: Tensor, cache_seqlens: Tensor, kv_scale: Optional[Tensor],
             head_dim_v: int, scale: float, causal: bool) -> tuple[Tensor, Tensor]:
    """The op's body: new out and lse."""
    from ..ops.mla.device import mla_decode_into   # MLIR loads on the first call, not import
    q, kv_cache = kernel_view(q), kernel_view(kv_cache)
    B, Sq, H, _ = q.shape
    out = torch.empty((B, Sq, H, head_dim_v), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, Sq), dtype=torch.float32, device=q.device)
    keep: list = []
    mla_decode_into(q, kv_cache, kernel_view(block_table), kernel_view(cache_seqlens), out, lse,
                    head_dim_v=head_dim_v, softmax_scale=scale, causal=causal, kv_dtype=FP8.get(kv_cache.dtype),
                    kv_scale=kv_scale, stream=stream_of(q), alloc=torch_alloc(q.device, keep))
    return out, lse


flash_mla = torch.library.custom_op("wmma_gen::flash_mla", mla_call, mutates_args=())


@flash_mla.register_fake
def _(q, kv_cache, block_table, cache_seqlens, kv_scale, head_dim_v, scale, causal):
    return (q.new_empty((q.shape[0], q.shape[1], q.shape[2], head_dim_v)),
            q.new_empty((q.shape[0], q.shape[2], q.shape[1]), dtype=torch.float32))


def _forward_only(ctx, *grads):
    raise NotImplementedError("wmma_gen's flash_mla_with_kvcache is forward only (decode): it has no backward; call "
                              "it under torch.no_grad() or detach its inputs")


flash_mla.register_autograd(_forward_only)


def _descale(descale_k, kv_cache: Tensor) -> Optional[Tensor]:
    if kv_cache.dtype not in FP8:
        if descale_k is not None:
            raise ValueError(f"descale_k={descale_k!r} is not allowed: None for a {kv_cache.dtype} cache "
                             "(float8_e4m3fn / float8_e5m2 caches only)")
        return None
    if descale_k is None:
        descale_k = 1.0
    t = torch.as_tensor(descale_k, dtype=torch.float32, device=kv_cache.device).reshape(-1)
    if t.numel() != 1:
        raise ValueError(f"descale_k of shape {tuple(t.shape)} is not allowed: a float or a 1-element tensor "
                         "(one scale for the latent cache)")
    return t.contiguous()


def flash_mla_with_kvcache(q: Tensor, kv_cache: Optional[Tensor] = None, block_table: Optional[Tensor] = None,
                           cache_seqlens: Optional[Tensor] = None, head_dim_v: int = 512, tile_scheduler_metadata=None,
                           num_splits=None, softmax_scale: Optional[float] = None, causal: bool = False,
                           descale_q=None, descale_k=None, *, k_cache: Optional[Tensor] = None,
                           is_fp8_kvcache: Optional[bool] = None) -> tuple[Tensor, Tensor]:
    """MLA decode on a paged latent cache (see the module doc) -> (out, lse). k_cache is FlashMLA's
    name of kv_cache (vLLM's FlashMLA backend passes it by keyword); is_fp8_kvcache, when given,
    must agree with the cache's dtype."""
    if (kv_cache is None) == (k_cache is None):
        raise ValueError("pass the latent cache once: kv_cache (positional) or k_cache (FlashMLA's keyword)")
    kv_cache = kv_cache if kv_cache is not None else k_cache
    if block_table is None or cache_seqlens is None:
        raise ValueError("block_table and cache_seqlens are required (int32 tensors)")
    if is_fp8_kvcache is not None and bool(is_fp8_kvcache) != (kv_cache.dtype in FP8):
        raise ValueError(f"is_fp8_kvcache={is_fp8_kvcache!r} is not allowed for a {kv_cache.dtype} cache: it must "
                         "say whether the cache is float8_e4m3fn / float8_e5m2")
    check_tensors(q=q, kv_cache=kv_cache, block_table=block_table, cache_seqlens=cache_seqlens)
    if descale_q is not None:
        raise NotImplementedError("descale_q (FlashMLA's fp8 queries) is not supported by wmma_gen's "
                                  "flash_mla_with_kvcache: pass float16 / bfloat16 q")
    if q.dim() != 4:
        raise ValueError(f"q of shape {tuple(q.shape)} is not allowed: (batch, seq_q, heads, head_dim)")
    if not isinstance(head_dim_v, int) or isinstance(head_dim_v, bool):
        raise ValueError(f"head_dim_v={head_dim_v!r} is not allowed: an int (512 for DeepSeek-V2/V3)")
    if block_table.dtype != torch.int32 or cache_seqlens.dtype != torch.int32:
        raise ValueError(f"block_table.dtype={block_table.dtype}, cache_seqlens.dtype={cache_seqlens.dtype}: "
                         "both must be torch.int32")
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[-1])
    if not float(softmax_scale) > 0:
        raise ValueError(f"softmax_scale={softmax_scale!r} is not allowed: None or a positive float")
    return flash_mla(q, kv_cache, block_table, cache_seqlens, _descale(descale_k, kv_cache), head_dim_v,
                     float(softmax_scale), bool(causal))
