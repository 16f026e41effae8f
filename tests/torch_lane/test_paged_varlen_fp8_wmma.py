"""flash_attn_varlen_func(..., block_table=..., fp8_wmma=True) on CPU tensors (the gfx1201 emulator
runs the paged kernel): an fp8 paged cache with FA3's k/v_descale multiplied natively on fp8 WMMA, through the straight
call and the torch.ops.wmma_gen.paged_varlen custom op (also under torch.compile fullgraph);
refused on gfx11 naming the argument. Tolerance as tests/torch_lane/test_kvcache_fp8_wmma.py: against
the float64 reference of Q as the kernel quantises it, |O - O_ref| <= (2**-4 + n 2**-18 + 3u)
max|V| (P's E4M3 rounding; u = 2**-11, f16 O)."""
import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from wmma_gen.ops.paged_attention.reference import paged_attention_reference, quantized_queries
from wmma_gen.torch import flash_attn_varlen_func

U16 = 2.0 ** -11


class _Dispatcher(TorchFunctionMode):
    """Any torch function mode makes runtime.direct False: the custom op path is taken."""
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _case(dtype):
    """Chunks of 3, 0 and 5 query tokens against 20, 5 and 40 cached keys, shuffled table, GQA 2."""
    k8, v8 = ((torch.randn(12, 16, 1, 64) * 3).to(dtype) for _ in range(2))
    table = torch.randperm(12)[:9].reshape(3, 3).to(torch.int32)
    cu_q = torch.tensor([0, 3, 3, 8], dtype=torch.int32)
    cu_k = torch.tensor([0, 20, 25, 65], dtype=torch.int32)
    return torch.randn(8, 2, 64).half(), k8, v8, table, cu_q, cu_k


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_fp8_wmma_varlen_direct_and_custom_op(dtype, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    q, k8, v8, table, cu_q, cu_k = _case(dtype)
    kw = dict(causal=True, block_table=table, fp8_wmma=True, return_attn_probs=True,
              k_descale=torch.tensor(0.5).expand(3, 1), v_descale=0.25)      # FA3 (batch, nheads_k), vLLM's expand
    out, lse, _ = flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, **kw)
    with _Dispatcher():
        out_op, lse_op, _ = flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, **kw)
    assert torch.equal(out, out_op) and torch.equal(lse, lse_op)
    widened = flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, causal=True, block_table=table,
                                     k_descale=0.5, v_descale=0.25)
    assert not torch.equal(out, widened), "fp8_wmma=True gave the dequantising path's bits: not passed through"
    f = lambda t: t.to(torch.float64).numpy()
    lens = (cu_k[1:] - cu_k[:-1]).numpy().astype(np.int32)
    ro, _ = paged_attention_reference(quantized_queries(q.numpy()), f(k8), f(v8), table.numpy(), lens, causal=True,
                                      cu_seqlens_q=cu_q.numpy(), k_scale=0.5, v_scale=0.25)
    vmax = 0.25 * v8.to(torch.float64).abs().max().item()
    assert out.shape == q.shape and lse.shape == (2, 8)
    assert np.abs(out.double().numpy() - ro).max() <= (2.0 ** -4 + 40 * 2.0 ** -18 + 3 * U16) * vmax


def test_fp8_wmma_varlen_torch_compile_fullgraph(monkeypatch):
    """The custom op's fake gives the shapes: no graph break, same output as eager."""
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    torch._dynamo.reset()
    q, k8, v8, table, cu_q, cu_k = _case(torch.float8_e4m3fn)

    def step(q):
        return flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, causal=True, block_table=table, fp8_wmma=True)
    assert torch.equal(step(q), torch.compile(step, backend="aot_eager", fullgraph=True)(q))


def test_fp8_wmma_varlen_refusals(monkeypatch):
    q, k8, v8, table, cu_q, cu_k = _case(torch.float8_e4m3fn)
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1100")
    with pytest.raises(ValueError, match="fp8_wmma"):
        flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, block_table=table, fp8_wmma=True)
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    with pytest.raises(ValueError, match="fp8_wmma=1 is not allowed: True or False"):
        flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, block_table=table, fp8_wmma=1)
    with pytest.raises(ValueError, match="fp8_wmma=True is not allowed without block_table"):
        flash_attn_varlen_func(q, q, q, cu_q, cu_q, 5, 5, fp8_wmma=True)
    with pytest.raises(ValueError, match=r"k_descale with batch stride 1 is not allowed: the paged kernel has one"):
        flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, block_table=table, k_descale=torch.rand(3, 1) + 0.5)
    with pytest.raises(ValueError, match=r"k_descale.shape=\(2,\) is not allowed"):
        flash_attn_varlen_func(q, k8, v8, cu_q, cu_k, 5, 40, block_table=table, k_descale=torch.ones(2))
    h = k8.half()
    with pytest.raises(ValueError, match="fp8_wmma"):       # 16-bit caches: the directive refuses it
        flash_attn_varlen_func(q, h, h, cu_q, cu_k, 5, 40, block_table=table, fp8_wmma=True)


def test_kvcache_takes_fa3_descale_shape(monkeypatch):
    """flash_attn_with_kvcache: FA3's (batch, nheads_k) descales (vLLM's expand of one value) give
    the same bits as the float; per-sequence values run one call per sequence, bit for bit."""
    from wmma_gen.torch import flash_attn_with_kvcache
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    _, k8, v8, table, _, cu_k = _case(torch.float8_e4m3fn)
    q, lens = torch.randn(3, 1, 2, 64).half(), (cu_k[1:] - cu_k[:-1]).to(torch.int32)
    kw = dict(cache_seqlens=lens, block_table=table, causal=True, fp8_wmma=True)
    by_float = flash_attn_with_kvcache(q, k8, v8, k_descale=0.5, v_descale=0.25, **kw)
    by_fa3 = flash_attn_with_kvcache(q, k8, v8, k_descale=torch.tensor(0.5).expand(3, 1),
                                     v_descale=torch.tensor([[0.25]]).expand(3, 1), **kw)
    assert torch.equal(by_float, by_fa3)
    per_seq = torch.tensor([[0.75], [0.5], [1.25]])     # rows that differ: one call per sequence (issue 37)
    got = flash_attn_with_kvcache(q, k8, v8, v_descale=per_seq, **kw)
    for b in range(3):
        one = dict(kw, cache_seqlens=lens[b:b + 1], block_table=table[b:b + 1])
        assert torch.equal(got[b:b + 1], flash_attn_with_kvcache(q[b:b + 1], k8, v8, v_descale=float(per_seq[b]), **one))
