"""One LLM.generate run of a tiny random-weight DeepSeek-V2 checkpoint (MLA: kv_lora_rank 512,
rope 64, so vLLM's own CPU_MLA decode kernel runs it too) in this process, printed as one JSON
line; test_mla_backend.py starts it once per backend (vLLM caches its choice per process).

    python serve_mla.py write DIR            the checkpoint (no download)
    python serve_mla.py run DIR wmma_gen|cpu

wmma_gen: WMMA_GEN_VLLM_CPU=1 makes the plugin replace CPU_MLA by WmmaGenMLABackend; every decode
call (forward_mqa) is checked here against ops/mla/reference.py in float64 on vLLM's own latent
cache, block table and lengths: (decode sequences, Sq, longest length, |O - O_ref| / max|V|).
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(path: str) -> None:
    sys.path.insert(0, HERE)
    from tiny_models import _save
    from transformers import DeepseekV2Config
    cfg = DeepseekV2Config(vocab_size=128, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=512,
                           q_lora_rank=None, qk_rope_head_dim=64, qk_nope_head_dim=32, v_head_dim=32,
                           first_k_dense_replace=2, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1,
                           max_position_embeddings=256, bos_token_id=1, eos_token_id=2)
    _save(cfg, path)     # dense MLP layers only (first_k_dense_replace = layers): no MoE on CPU


def _check_decodes(records: list) -> None:
    import numpy as np
    import torch

    from wmma_gen.integrations.vllm.mla_backend import WmmaGenMLAImpl
    from wmma_gen.ops.mla.reference import mla_decode_reference
    inner = WmmaGenMLAImpl.forward_mqa

    def checked(self, q, cache, meta, layer):
        out, lse = inner(self, q, cache, meta, layer)
        qq = torch.cat(q, dim=-1) if isinstance(q, tuple) else q
        B = meta.num_decodes
        q4 = qq.double().reshape(B, -1, qq.shape[1], qq.shape[2]).numpy()
        c = cache.double().unsqueeze(-2).numpy()
        lens = meta.decode.seq_lens.cpu().numpy()
        ro, _ = mla_decode_reference(q4, c, meta.decode.block_table.cpu().numpy(), lens,
                                     head_dim_v=self.kv_lora_rank, scale=self.scale, causal=True)
        got = out.double().reshape(ro.shape).numpy()
        vmax = max(float(np.abs(c[..., :self.kv_lora_rank]).max()), 1e-30)
        records.append([int(B), int(q4.shape[1]), int(lens.max()), float(np.abs(got - ro).max()) / vmax])
        return out, lse
    WmmaGenMLAImpl.forward_mqa = checked


def run(path: str, backend: str) -> None:
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["WMMA_GEN_VLLM_CPU"] = "1" if backend == "wmma_gen" else "0"
    sys.path.insert(0, HERE)
    from tiny_models import prompts
    from vllm import LLM, SamplingParams

    records: list = []
    if backend == "wmma_gen":
        _check_decodes(records)
    llm = LLM(model=path, dtype="float16", enforce_eager=True, max_model_len=64, max_num_seqs=4, block_size=16,
              max_num_batched_tokens=16, kv_cache_memory_bytes=1 << 22, seed=0, enable_prefix_caching=False)
    runner = llm.llm_engine.model_executor.driver_worker.worker.model_runner
    impls = sorted({type(m.impl).__name__ for m in runner.model.modules() if hasattr(m, "impl")})
    outs = llm.generate(prompts(), SamplingParams(max_tokens=5, temperature=0.0, ignore_eos=True))
    print("RESULT " + json.dumps({"tokens": [list(o.outputs[0].token_ids) for o in outs], "impls": impls,
                                  "calls": records}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        run(sys.argv[2], sys.argv[3])
