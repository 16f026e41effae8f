"""wmma_gen.torch.flash_attn_with_kvcache on CPU tensors (the emulator runs the paged decode
kernel) against the float64 reference (ops/paged_attention/reference.py): the in-place append
of new k / v through a random block table, a contiguous cache, fp8 caches with descales, the
custom-op path, and the zero-copy path through the emulator-backed HIP stand-in.
Tolerances as tests/emu/test_paged_attention.py: |O - O_ref| <= 3u max|V| (u = 2**-11 f16)."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> `import hipstub`

from wmma_gen.ops.paged_attention.reference import paged_attention_reference  # noqa: E402
from stub_repeat import repeat_on_a_stream  # noqa: E402
from wmma_gen.torch import flash_attn_with_kvcache  # noqa: E402

U16 = 2.0 ** -11


def _paged(B=3, bs=16, nb=12, Hkv=2, D=64, width=3, dtype=torch.float16):
    k_cache = torch.randn(nb, bs, Hkv, D).to(dtype)
    v_cache = torch.randn(nb, bs, Hkv, D).to(dtype)
    table = torch.randperm(nb)[:B * width].reshape(B, width).to(torch.int32)
    return k_cache, v_cache, table


def _ref(q, k_cache, v_cache, table, lens, **kw):
    f = lambda t: t.to(torch.float64).numpy()
    return paged_attention_reference(f(q), f(k_cache), f(v_cache), table.numpy(), lens.numpy(), **kw)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_append_then_attend_paged(arch, monkeypatch):
    """New k/v (2 tokens) land at cache_seqlens through the block table, in place; the
    attention covers cache_seqlens + 2 keys (causal bottom-right), GQA 2, one empty cache."""
    monkeypatch.setenv("WMMA_GEN_ARCH", arch)
    k_cache, v_cache, table = _paged()
    lens = torch.tensor([20, 0, 45], dtype=torch.int32)
    q = torch.randn(3, 2, 4, 64).half()
    k, v = torch.randn(3, 2, 2, 64).half(), torch.randn(3, 2, 2, 64).half()
    before = k_cache.clone()
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, block_table=table,
                                       causal=True, return_softmax_lse=True)
    for b in range(3):
        for i in range(2):
            pos = int(lens[b]) + i
            assert torch.equal(k_cache[table[b, pos // 16], pos % 16], k[b, i])
            assert torch.equal(v_cache[table[b, pos // 16], pos % 16], v[b, i])
    changed = (k_cache != before).any(dim=(2, 3)).sum().item()
    assert changed == 6, f"only the 6 appended rows change, {changed} did"
    ro, rlse = _ref(q, k_cache, v_cache, table, lens + 2, causal=True)
    assert (out.double().numpy() - ro).__abs__().max() <= 3 * U16 * v_cache.abs().max().item()
    assert np.allclose(lse.numpy(), rlse, rtol=1e-5, atol=1e-5)


def test_contiguous_cache_no_table_window_softcap():
    B, S, Hkv, D = 2, 48, 1, 32
    k_cache, v_cache = torch.randn(B, S, Hkv, D).half(), torch.randn(B, S, Hkv, D).half()
    q = torch.randn(B, 1, 2, D).half()
    out = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=torch.tensor([40, 7], dtype=torch.int32),
                                  window_size=(8, 0), softcap=3.0)
    pages = k_cache.reshape(B * 3, 16, Hkv, D), v_cache.reshape(B * 3, 16, Hkv, D)
    table = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    ro, _ = _ref(q, *pages, table, torch.tensor([40, 7], dtype=torch.int32), causal=False, window=(8, 0),
                 softcap=3.0)
    assert (out.double().numpy() - ro).__abs__().max() <= 3 * U16 * v_cache.abs().max().item()


def test_fp8_cache_with_descale():
    k_cache, v_cache, table = _paged(B=2, nb=8, Hkv=1, width=2)
    k8, v8 = (k_cache * 3).to(torch.float8_e4m3fn), (v_cache * 3).to(torch.float8_e4m3fn)
    lens = torch.tensor([30, 11], dtype=torch.int32)
    q = torch.randn(2, 1, 2, 64).half()
    out = flash_attn_with_kvcache(q, k8, v8, cache_seqlens=lens, block_table=table, k_descale=0.5, v_descale=0.25,
                                  causal=True)
    ro, _ = _ref(q, k8, v8, table, lens, causal=True, k_scale=0.5, v_scale=0.25)
    vmax = 0.25 * v8.to(torch.float64).abs().max().item()
    assert (out.double().numpy() - ro).__abs__().max() <= 3 * U16 * vmax


def test_custom_op_path_matches_direct():
    """q requiring grad takes torch.ops.wmma_gen.paged_attention (the dispatcher path)."""
    k_cache, v_cache, table = _paged(B=1, nb=4, width=2)
    lens = torch.tensor([25], dtype=torch.int32)
    q = torch.randn(1, 1, 2, 64).half()
    direct = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, block_table=table, causal=True)
    via_op = flash_attn_with_kvcache(q.clone().requires_grad_(), k_cache, v_cache, cache_seqlens=lens,
                                     block_table=table, causal=True)
    assert torch.equal(direct, via_op.detach())


def test_refusals():
    k_cache, v_cache, table = _paged(B=1, nb=4, width=2)
    q = torch.randn(1, 1, 2, 64).half()
    with pytest.raises(NotImplementedError, match="rotary_cos"):
        flash_attn_with_kvcache(q, k_cache, v_cache, rotary_cos=torch.ones(1), block_table=table)
    with pytest.raises(ValueError, match=r"seq_lens.*40.*max_blocks \* block_size = 32"):
        flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=40, block_table=table)
    with pytest.raises(ValueError, match="cache_seqlens"):
        flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=torch.tensor([3], dtype=torch.int64),
                                block_table=table)


def test_zero_copy_through_hip_stand_in(stub):
    """Routed to HipDevice over the emulator-backed HIP stand-in: the call is launches only
    (paged kernel + combine) on the caller's stream, with the tensors' own addresses."""
    k_cache, v_cache, table = _paged(B=2, nb=8, width=2)
    lens = torch.tensor([17, 30], dtype=torch.int32)
    q = torch.randn(2, 1, 4, 64).half()
    r = repeat_on_a_stream(stub, lambda: flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens,
                                                                 block_table=table, causal=True))
    out = r.out
    assert r.calls == {"hipModuleLaunchKernel": 2}, r.calls
    assert all(x.stream == r.stream for x in r.launches)
    assert k_cache.data_ptr() in r.launches[0].explicit and table.data_ptr() in r.launches[0].explicit
    assert not stub.faults, stub.faults
    ro, _ = _ref(q, k_cache, v_cache, table, lens, causal=True)
    assert (out.double().numpy() - ro).__abs__().max() <= 3 * U16 * v_cache.abs().max().item()


def test_torch_compile_fullgraph_matches_eager():
    """torch.compile(fullgraph=True) traces the append (torch indexing) and the opaque custom op
    (its fake gives the shapes) with no graph break; same output and same cache as eager."""
    torch._dynamo.reset()
    k_cache, v_cache, table = _paged(B=2, nb=6, Hkv=1, width=3)
    lens = torch.tensor([20, 7], dtype=torch.int32)
    q, k, v = torch.randn(2, 1, 2, 64).half(), torch.randn(2, 1, 1, 64).half(), torch.randn(2, 1, 1, 64).half()

    def step(q, kc, vc, k, v):
        return flash_attn_with_kvcache(q, kc, vc, k, v, cache_seqlens=lens, block_table=table, causal=True)
    kc2, vc2 = k_cache.clone(), v_cache.clone()
    eager = step(q, k_cache, v_cache, k, v)
    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)(q, kc2, vc2, k, v)
    assert torch.equal(eager, compiled) and torch.equal(k_cache, kc2) and torch.equal(v_cache, vc2)


def test_long_query_chunk_runs_as_chunked_prefill():
    """seqlen_q 20 > 16: the packed (varlen) path with equal chunks; appended k/v of 20 tokens."""
    k_cache, v_cache, table = _paged(B=2, nb=10, Hkv=1, width=4, D=32)
    lens = torch.tensor([9, 0], dtype=torch.int32)
    q = torch.randn(2, 20, 2, 32).half()
    k, v = torch.randn(2, 20, 1, 32).half(), torch.randn(2, 20, 1, 32).half()
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens, block_table=table, causal=True,
                                       return_softmax_lse=True)
    ro, rlse = _ref(q, k_cache, v_cache, table, lens + 20, causal=True)
    assert out.shape == q.shape and lse.shape == (2, 2, 20)
    assert (out.double().numpy() - ro).__abs__().max() <= 3 * U16 * v_cache.abs().max().item()
    assert np.allclose(lse.numpy(), rlse, rtol=1e-5, atol=1e-5)


def test_varlen_func_with_block_table_runs_the_paged_op():
    """flash_attn_varlen_func(..., block_table=...): flash-attn's paged varlen call. Chunks of
    3, 0 and 18 query tokens (cu_seqlens_q) against 20, 5 and 40 cached keys (cu_seqlens_k)
    through a shuffled table; causal bottom-right per sequence, GQA 2."""
    from wmma_gen.torch import flash_attn_varlen_func
    k_cache, v_cache, table = _paged(B=3, Hkv=2, D=64)
    cu_q = torch.tensor([0, 3, 3, 21], dtype=torch.int32)
    cu_k = torch.tensor([0, 20, 25, 65], dtype=torch.int32)
    q = torch.randn(21, 4, 64).half()
    out, lse, _ = flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k, 18, 40, causal=True, block_table=table,
                                         return_attn_probs=True)
    lens = (cu_k[1:] - cu_k[:-1]).to(torch.int32)
    f = lambda t: t.to(torch.float64).numpy()
    ro, rlse = paged_attention_reference(f(q), f(k_cache), f(v_cache), table.numpy(), lens.numpy(), causal=True,
                                         cu_seqlens_q=cu_q.numpy())
    assert out.shape == q.shape and lse.shape == (4, 21)
    assert (out.double().numpy() - ro).__abs__().max() <= 3 * U16 * v_cache.abs().max().item()
    assert np.allclose(lse.numpy(), rlse, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"cu_seqlens_k.shape=\(3,\) is not allowed: \(batch \+ 1,\) = \(4,\)"):
        flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k[:3], 18, 40, block_table=table)
