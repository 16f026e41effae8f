"""Continuous batching's decode fast path (on CUDA/ROCm: block tables + flash_attn_with_kvcache)
cannot switch on here (transformers gates it on torch.cuda.is_available()), so this drives the
very call it makes -- transformers' _flash_attention_forward with block_table / k_cache /
v_cache / cu_seq_lens_k, resolved for our flash-named alias -- on CPU tensors: the new tokens
are appended to the paged cache in place and the output matches float64 from the math."""
import torch
from transformers.modeling_flash_attention_utils import _flash_attention_forward

import tiny_models as tm


def test_paged_decode_appends_and_matches_float64(names):
    H, HKV, D, PAGE = 4, 2, 16, 16
    lens = [5, 18]                                           # cached tokens per sequence (not page multiples)
    k_cache = torch.randn(4, PAGE, HKV, D).half()
    v_cache = torch.randn(4, PAGE, HKV, D).half()
    table = torch.tensor([[3, 0], [1, 2]], dtype=torch.int32)
    q = torch.randn(1, 2, H, D).half()                       # CB: (1, total_q, heads, dim), one token per sequence
    k, v = torch.randn(1, 2, HKV, D).half(), torch.randn(1, 2, HKV, D).half()
    cu_k = torch.tensor([0, lens[0] + 1, lens[0] + lens[1] + 2], dtype=torch.int32)
    before_k, before_v = k_cache.clone(), v_cache.clone()
    out, ops = tm.wmma_ops(lambda: _flash_attention_forward(
        q, k, v, None, query_length=2, is_causal=True, softmax_scale=D ** -0.5, attn_implementation=names[1],
        block_table=table, k_cache=k_cache, v_cache=v_cache, cu_seq_lens_q=torch.tensor([0, 1, 2], dtype=torch.int32),
        cu_seq_lens_k=cu_k, max_length_q=1, max_length_k=lens[1] + 1))
    assert ops and all(o.startswith("wmma_gen::paged") for o in ops)
    for b, n in enumerate(lens):
        pages = before_k[table[b]].reshape(-1, HKV, D), before_v[table[b]].reshape(-1, HKV, D)
        keys = torch.cat([pages[0][:n], k[0, b:b + 1]]).double()
        vals = torch.cat([pages[1][:n], v[0, b:b + 1]]).double()
        written = k_cache[table[b, n // PAGE], n % PAGE]
        assert torch.equal(written, k[0, b]) and torch.equal(v_cache[table[b, n // PAGE], n % PAGE], v[0, b])
        keys, vals = keys.repeat_interleave(H // HKV, 1), vals.repeat_interleave(H // HKV, 1)
        p = torch.softmax(torch.einsum("hd,khd->hk", q[0, b].double(), keys) * D ** -0.5, -1)
        want = torch.einsum("hk,khd->hd", p, vals)
        torch.testing.assert_close(out[0, b].double(), want, atol=4e-3, rtol=4e-3)
