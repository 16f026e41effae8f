"""What backend.py and impl.py share: the per-batch metadata the builder makes and each layer's
forward reads, and vLLM's fp8 cache dtype names."""
from __future__ import annotations

from dataclasses import dataclass

import torch

# vLLM's cache dtype names -> the torch fp8 dtype the cache bytes hold (OCP E4M3 / E5M2: what
# wmma_gen's paged kernel dequantises; "fp8" means E4M3 in vLLM, vllm/config/cache.py CacheDType)
FP8_CACHE = {"fp8": torch.float8_e4m3fn, "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}


@dataclass
class WmmaGenMetadata:
    """Per batch, shared by the layers of one KV cache group; tensors are vLLM's own (persistent
    buffers under graph capture), nothing is copied."""
    num_actual_tokens: int
    max_query_len: int
    query_start_loc: torch.Tensor   # (batch + 1,) int32: cu_seqlens_q
    max_seq_len: int
    seq_lens: torch.Tensor          # (batch,) int32: keys per sequence (cached + new) -> seqused_k
    block_table: torch.Tensor       # (batch, max_blocks) int32
    slot_mapping: torch.Tensor      # (num_tokens,) int64: where each new token's K/V go
    causal: bool = True
