"""wmma_gen's MLA decode as vLLM's MLA backend on the CPU platform (WMMA_GEN_VLLM_CPU=1 /
use_on_cpu(): it replaces CPU_MLA, as the standard backend replaces CPU_ATTN; the emulator runs
the kernels -- a test lane for DeepSeek-V2/V3-style models).

vLLM 0.32 selects MLA backends apart from the standard ones (models with use_mla): each is an
MLACommonBackend whose impl's `forward_mqa` runs the weight-absorbed decode while prefill runs
the shared non-absorbed path (vllm/model_executor/layers/attention/mla_attention.py). This one
is vLLM's CPU MLA backend (v1/attention/backends/mla/cpu_mla.py: its SDPA prefill, cache write
and metadata) with `forward_mqa` on wmma_gen.torch.flash_mla_with_kvcache, called as vLLM's
FlashMLA backend calls FlashMLA (causal=True: speculative tokens see the keys up to their own
position). Head sizes: the latent widths wmma_gen's kernel builds (multiples of 64 up to 576),
not only CPU_MLA's 576. On ROCm no MLA backend is registered (vLLM's ROCm MLA backends would be
the base there: not built).
"""
from __future__ import annotations

import torch
from vllm.v1.attention.backends.mla.cpu_mla import CPUMLABackend, CPUMLAImpl
from vllm.v1.attention.backends.utils import reshape_attn_output_for_spec_decode, reshape_query_for_spec_decode


class WmmaGenMLABackend(CPUMLABackend):
    """CPU_MLA with wmma_gen's decode kernel (module doc)."""

    supported_dtypes = [torch.float16, torch.bfloat16]

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        from ...ops.mla.directive import HEAD_DIMS
        return list(HEAD_DIMS)

    @staticmethod
    def get_impl_cls() -> type["WmmaGenMLAImpl"]:
        return WmmaGenMLAImpl


class WmmaGenMLAImpl(CPUMLAImpl):
    """CPUMLAImpl whose decode (forward_mqa) is wmma_gen's MLA kernel on vLLM's latent cache."""

    def forward_mqa(self, q, kv_c_and_k_pe_cache: torch.Tensor, attn_metadata, layer):
        from ...torch import flash_mla_with_kvcache
        assert attn_metadata.decode is not None
        if isinstance(q, tuple):
            q = torch.cat(q, dim=-1)
        q = reshape_query_for_spec_decode(q, attn_metadata.num_decodes)       # (B, Sq, H, 576)
        o, _ = flash_mla_with_kvcache(q, kv_c_and_k_pe_cache.unsqueeze(-2),
                                      attn_metadata.decode.block_table.to(torch.int32),
                                      attn_metadata.decode.seq_lens.to(torch.int32), head_dim_v=self.kv_lora_rank,
                                      softmax_scale=self.scale, causal=True)
        return reshape_attn_output_for_spec_decode(o), None
