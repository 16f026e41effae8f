"""flash_attn_with_kvcache(..., fp8_wmma=True) on CPU tensors (the gfx1201 emulator runs the paged
kernel): an E4M3 cache with descales multiplied natively on fp8 WMMA, through the direct call and
the torch.ops.wmma_gen.paged_attention custom op; refused on gfx11 naming the argument.
Tolerance as tests/emu/test_paged_attention_fp8_wmma.py: against the float64 reference of Q as the
kernel quantises it, |O - O_ref| <= (2**-4 + n 2**-18 + 3u) max|V_eff| (P's E4M3 rounding)."""
import numpy as np
import pytest
import torch

from wmma_gen.ops.paged_attention.reference import paged_attention_reference, quantized_queries
from wmma_gen.torch import flash_attn_with_kvcache

U16 = 2.0 ** -11


def _case():
    torch.manual_seed(0)
    k8, v8 = ((torch.randn(8, 16, 1, 64) * 3).to(torch.float8_e4m3fn) for _ in range(2))
    table = torch.randperm(8)[:4].reshape(2, 2).to(torch.int32)
    return torch.randn(2, 1, 2, 64).half(), k8, v8, table, torch.tensor([30, 11], dtype=torch.int32)


def test_fp8_wmma_direct_and_custom_op(monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    q, k8, v8, table, lens = _case()
    kw = dict(cache_seqlens=lens, block_table=table, k_descale=0.5, v_descale=0.25, causal=True, fp8_wmma=True)
    out = flash_attn_with_kvcache(q, k8, v8, **kw)
    via_op = flash_attn_with_kvcache(q.clone().requires_grad_(), k8, v8, **kw)
    assert torch.equal(out, via_op.detach())
    f = lambda t: t.to(torch.float64).numpy()
    ro, _ = paged_attention_reference(quantized_queries(q.numpy()), f(k8), f(v8), table.numpy(), lens.numpy(),
                                      causal=True, k_scale=0.5, v_scale=0.25)
    vmax = 0.25 * v8.to(torch.float64).abs().max().item()
    assert np.abs(out.double().numpy() - ro).max() <= (2.0 ** -4 + 30 * 2.0 ** -18 + 3 * U16) * vmax


def test_fp8_wmma_refused_on_gfx11(monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1100")
    q, k8, v8, table, lens = _case()
    with pytest.raises(ValueError, match="fp8_wmma"):
        flash_attn_with_kvcache(q, k8, v8, cache_seqlens=lens, block_table=table, causal=True, fp8_wmma=True)
