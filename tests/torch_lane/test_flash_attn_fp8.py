"""flash_attn_func on fp8 tensors (FlashAttention-3's fp8 forward: q/k/v_descale (batch, nheads_k),
O bf16) on CPU tensors, run by the gfx1201 emulator through the paged kernel's native fp8 path;
the straight call and the torch.ops.wmma_gen.paged_attention custom op agree; the zero-copy path
through the emulator-backed HIP stand-in (a gfx1201 runtime) is launches only; gfx11 is refused
naming the arch and the dtype.
Tolerance as tests/emu/test_attention_fp8_dense.py: Q, K, V exact, P E4M3 (x 2**8), so
|O - O_ref| <= (2**-4 + Sk 2**-18 + 3u) max|V_eff| (u = 2**-8, bf16 O); LSE within 1e-5."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> `import hipstub`

from wmma_gen.attention_common.reference import attention_forward  # noqa: E402
from stub_repeat import repeat_on_a_stream  # noqa: E402
from wmma_gen.torch import flash_attn_func  # noqa: E402

U_BF16 = 2.0 ** -8


class _Dispatcher(TorchFunctionMode):
    """Any torch function mode makes runtime.direct False: the custom op path is taken."""
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _fp8(shape, dtype):
    return (torch.randn(shape) * 8).to(dtype)


def _check(out, lse, q, k, v, dq, dk, dv, **kw):
    """dq/dk/dv (batch, kv_heads) float64 arrays; the reference per sequence."""
    f = lambda t: t.to(torch.float64).numpy()
    H, Hkv = q.shape[2], k.shape[2]
    g = np.repeat(np.arange(Hkv), H // Hkv)
    for b in range(q.shape[0]):
        q64 = f(q[b:b + 1]) * dq[b][g][None, None, :, None]
        k64, v64 = f(k[b:b + 1]) * dk[b][None, None, :, None], f(v[b:b + 1]) * dv[b][None, None, :, None]
        ro, rl = attention_forward(q64, k64, v64, **kw)
        tol = (2.0 ** -4 + k.shape[1] * 2.0 ** -18 + 3 * U_BF16) * np.abs(v64).max()
        err = np.abs(out[b:b + 1].double().numpy() - ro).max()
        assert err <= tol, f"sequence {b}: O error {err} > {tol}"
        assert np.allclose(lse[b:b + 1].numpy(), rl, rtol=1e-5, atol=1e-5)


def test_fp8_e4m3_vllm_expanded_descales_direct_and_custom_op(monkeypatch):
    """Sk 37 (no multiple of 16: K/V padded on the device), GQA 2, causal bottom-right; the
    descales are vLLM's scalar.expand(batch, nheads_k) (one call)."""
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    q, k, v = _fp8((2, 3, 4, 64), torch.float8_e4m3fn), *(_fp8((2, 37, 2, 64), torch.float8_e4m3fn) for _ in "kv")
    ds = [torch.tensor(x).expand(2, 2) for x in (0.125, 0.25, 0.5)]
    kw = dict(causal=True, q_descale=ds[0], k_descale=ds[1], v_descale=ds[2], return_attn_probs=True)
    out, lse, _ = flash_attn_func(q, k, v, **kw)
    assert out.dtype == torch.bfloat16 and out.shape == q.shape and lse.shape == (2, 4, 3)
    with _Dispatcher():
        out_op, lse_op, _ = flash_attn_func(q, k, v, **kw)
    assert torch.equal(out, out_op) and torch.equal(lse, lse_op)
    _check(out, lse, q, k, v, *(np.broadcast_to(x, (2, 2)) for x in (0.125, 0.25, 0.5)), causal=True)


def test_fp8_e5m2_per_sequence_descales_and_prefill_chunk(monkeypatch):
    """Descales that differ per sequence (one call each), Sq 20 > 16 (a chunked prefill),
    Sk 32 (K/V viewed as pages in place), E5M2, MQA."""
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    q, k, v = _fp8((2, 20, 2, 32), torch.float8_e5m2), *(_fp8((2, 32, 1, 32), torch.float8_e5m2) for _ in "kv")
    dq, dk, dv = (torch.tensor([[a], [b]], dtype=torch.float32) for a, b in ((0.25, 0.125), (0.5, 1.0), (1.0, 0.25)))
    out, lse, _ = flash_attn_func(q, k, v, causal=False, q_descale=dq, k_descale=dk, v_descale=dv,
                                  return_attn_probs=True)
    assert lse.shape == (2, 2, 20)
    _check(out, lse, q, k, v, dq.double().numpy(), dk.double().numpy(), dv.double().numpy(), causal=False)


def test_torch_compile_fullgraph_matches_eager(monkeypatch):
    """The page padding (Sk 37), descale arithmetic and the custom op trace with no graph break."""
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    torch._dynamo.reset()
    q, k = _fp8((1, 2, 2, 32), torch.float8_e4m3fn), _fp8((1, 37, 1, 32), torch.float8_e4m3fn)
    d = torch.tensor(0.5).expand(1, 1)

    def step(q, k, v):
        return flash_attn_func(q, k, v, causal=True, k_descale=d)
    assert torch.equal(step(q, k, k), torch.compile(step, backend="aot_eager", fullgraph=True)(q, k, k))


def test_refusals_name_arch_dtype_and_argument(monkeypatch):
    q = torch.zeros(1, 2, 2, 32).to(torch.float8_e4m3fn)
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1100")
    with pytest.raises(ValueError, match=r"q.dtype=torch.float8_e4m3fn is not allowed on arch=gfx1100"):
        flash_attn_func(q, q, q)
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    with pytest.raises(ValueError, match=r"k_descale.shape=\(3,\) is not allowed: \(batch, nheads_k\) = \(1, 2\)"):
        flash_attn_func(q, q, q, k_descale=torch.ones(3))
    with pytest.raises(ValueError, match=r"k.dtype=torch.float8_e5m2 is not allowed"):
        flash_attn_func(q, q.to(torch.float8_e5m2), q)
    h = torch.zeros(1, 2, 2, 32).half()
    with pytest.raises(ValueError, match="q_descale / k_descale / v_descale are not allowed for q.dtype=torch.float16"):
        flash_attn_func(h, h, h, q_descale=torch.ones(1, 2))


@pytest.mark.parametrize("stub", ["gfx1201"], indirect=True)      # fp8 WMMA
def test_zero_copy_through_hip_stand_in(stub):
    """Routed to HipDevice over the HIP stand-in: a repeat call is 2 launches (paged kernel +
    combine) on the caller's stream with q's and k's own addresses (Sk 32: no page copy)."""
    q, k, v = _fp8((1, 1, 2, 64), torch.float8_e4m3fn), *(_fp8((1, 32, 1, 64), torch.float8_e4m3fn) for _ in "kv")
    r = repeat_on_a_stream(stub, lambda: flash_attn_func(q, k, v, k_descale=torch.full((1, 1), 0.5),
                                                         return_attn_probs=True),
                           first=lambda: flash_attn_func(q, k, v, k_descale=torch.full((1, 1), 0.5)))
    out, lse, _ = r.out
    assert r.calls == {"hipModuleLaunchKernel": 2}, r.calls
    assert all(x.stream == r.stream for x in r.launches)
    assert q.data_ptr() in r.launches[0].explicit and k.data_ptr() in r.launches[0].explicit
    assert not stub.faults, stub.faults
    _check(out, lse, q, k, v, np.ones((1, 1)), np.full((1, 1), 0.5), np.ones((1, 1)))
