"""The vLLM attention backend class and the metadata builder (vLLM 0.32's
v1/attention/backend.py contract; the kernels' calls are in impl.py, the metadata in metadata.py).

vLLM hands each layer its cache in the logical order (num_blocks, kv_heads, block_size,
2 * head_size) (K in the first head_size of the last axis, V in the second), laid out in memory as
the backend's first supported KVCacheLayout (LBNHC: token-major blocks, what flash-attn's paged
call reads; LBHNC also works: the kernels take any outer strides).
"""
from __future__ import annotations

from typing import ClassVar

import torch
from vllm.v1.attention.backend import (AttentionBackend, AttentionCGSupport, AttentionMetadataBuilder,
                                       AttentionType, CommonAttentionMetadata)
from vllm.v1.kv_cache_layout import KVCacheLayout

from ...ops.paged_attention.directive import BLOCK_SIZES, HEAD_DIMS
from .metadata import FP8_CACHE, WmmaGenMetadata


class WmmaGenMetadataBuilder(AttentionMetadataBuilder[WmmaGenMetadata]):
    # Decode batches only (query length 1): what a HIP graph may replay. Capture safety is by
    # construction (no host read, no sync in impl.py; docs/integrations.md), not yet run on a GPU.
    _cudagraph_support: ClassVar[AttentionCGSupport] = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE

    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):
        from . import check_version
        check_version()
        super().__init__(kv_cache_spec, layer_names, vllm_config, device)

    def build(self, common_prefix_len: int, common_attn_metadata: CommonAttentionMetadata,
              fast_build: bool = False) -> WmmaGenMetadata:
        m = common_attn_metadata
        if isinstance(m.causal, torch.Tensor):
            raise NotImplementedError("a per-request causal tensor (CommonAttentionMetadata.causal) is not supported "
                                      "by wmma_gen's vLLM backend: causal True or False for the batch")
        return WmmaGenMetadata(num_actual_tokens=m.num_actual_tokens, max_query_len=m.max_query_len,
                               query_start_loc=m.query_start_loc, max_seq_len=m.max_seq_len, seq_lens=m.seq_lens,
                               block_table=m.block_table_tensor, slot_mapping=m.slot_mapping, causal=bool(m.causal))


class WmmaGenAttentionBackend(AttentionBackend):
    """wmma_gen's paged attention for vLLM: decoder layers, f16/bf16 activations, 16-bit or fp8
    (E4M3/E5M2) KV cache, GQA, sliding window, softcap, attention sinks, head sizes 16..256
    (multiples of 16), kernel block sizes 16/32/64/128."""
    forward_includes_kv_cache_update: bool = False
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
    supported_kv_cache_dtypes: ClassVar[list] = ["auto", "float16", "bfloat16", *FP8_CACHE]

    @staticmethod
    def get_name() -> str:
        return "CUSTOM"

    @staticmethod
    def get_impl_cls():
        from .impl import WmmaGenAttentionImpl
        return WmmaGenAttentionImpl

    @staticmethod
    def get_builder_cls():
        return WmmaGenMetadataBuilder

    @staticmethod
    def get_supported_kernel_block_sizes(kv_cache_spec=None) -> list:
        return list(BLOCK_SIZES)

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return list(HEAD_DIMS)

    @classmethod
    def supported_kv_cache_layouts(cls):
        return (KVCacheLayout.LBNHC, KVCacheLayout.LBHNC)

    @classmethod
    def supports_sink(cls) -> bool:
        return True

    @classmethod
    def supports_sliding_window(cls) -> bool:
        return True

    @classmethod
    def supports_non_causal(cls) -> bool:
        return True

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type == AttentionType.DECODER
