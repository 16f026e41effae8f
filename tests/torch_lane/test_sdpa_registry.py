"""wmma_gen.torch.sdpa: wmma_gen as torch's flash SDPA implementation through
torch.nn.attention's registry. On CPU tensors (cpu=True) F.scaled_dot_product_attention lands on
aten::_scaled_dot_product_flash_attention_for_cpu, which the impl overrides: f16/bf16 calls run
wmma_gen's ops (the profiler sees them) and match float64; every other call is torch's own
kernel, bit for bit, and WMMA_GEN_LOG=sdpa names it once."""
import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import current_flash_attention_impl, list_flash_attention_impls
from torch.profiler import profile

from wmma_gen.torch import sdpa


def _ops(fn) -> set[str]:
    with profile() as prof:
        fn()
    return {e.name for e in prof.events() if e.name.startswith("wmma_gen::")}


def _ref(q, k, v, is_causal, scale=None):
    """float64 attention from the math: softmax(q k^T * scale + top-left causal mask) v, GQA by repeat."""
    q, k, v = (t.double() for t in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = (q @ k.transpose(-1, -2)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if is_causal:
        sq, sk = s.shape[-2:]
        s = s.masked_fill(torch.ones(sq, sk, dtype=torch.bool).tril().logical_not(), float("-inf"))
    return torch.softmax(s, -1) @ v


def _leaf(shape, dtype):
    return torch.randn(shape, dtype=torch.float64).to(dtype).requires_grad_()


@pytest.mark.parametrize("dtype,sq,sk,causal,scale", [(torch.float16, 37, 37, True, None),
                                                      (torch.bfloat16, 19, 45, True, 0.3),
                                                      (torch.float16, 45, 19, True, None),
                                                      (torch.bfloat16, 23, 30, False, None)])
def test_sdpa_runs_on_wmma_gen_forward_and_backward(dtype, sq, sk, causal, scale):
    """GQA (4 query heads over 2 kv heads, un-expanded), SDPA's top-left causal for Sq = Sk,
    Sq < Sk (keys no query sees get zero gradient) and Sq > Sk; outputs and all three
    gradients within f16/bf16 rounding of a float64 autograd of the math."""
    q, k, v = _leaf((1, 4, sq, 16), dtype), _leaf((1, 2, sk, 16), dtype), _leaf((1, 2, sk, 16), dtype)
    go = torch.randn(1, 4, sq, 16, dtype=torch.float64)
    with sdpa.enabled(cpu=True):
        assert sdpa.enabled_keys() == ("CUDA", "CPU")
        out = {}

        def run():
            out["o"] = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=True)
            out["o"].backward(go.to(dtype))
        assert _ops(run) == {"wmma_gen::attention", "wmma_gen::attention_backward"}
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    ref = _ref(*leaves, causal, scale)
    ref.backward(go)
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(out["o"].double(), ref, atol=tol, rtol=tol)
    for name, got, want in zip("qkv", (q.grad, k.grad, v.grad), leaves):
        torch.testing.assert_close(got.double(), want.grad, atol=2 * tol, rtol=2 * tol, msg=f"d{name}")
    if causal and sq < sk:
        assert not k.grad[:, :, sq:].any() and not v.grad[:, :, sq:].any()


@pytest.mark.parametrize("case,reason", [("f32", "dtypes q=torch.float32"), ("mask", "attn_mask is set"),
                                         ("dropout", "dropout_p=0.5"), ("head_dim", "head dims q=40")])
def test_unsupported_calls_fall_back_to_torch_exactly_and_are_logged_once(case, reason, monkeypatch, capfd):
    monkeypatch.setenv("WMMA_GEN_LOG", "sdpa")
    sdpa.forget_logged()
    dtype, d = (torch.float32, 32) if case == "f32" else (torch.float16, 40 if case == "head_dim" else 32)
    q, k, v = (torch.randn(1, 2, 9, d).to(dtype) for _ in range(3))
    kw = {"attn_mask": torch.randn(9, 9).to(dtype)} if case == "mask" else {}

    def call():
        if case == "dropout":     # F.sdpa sends CPU dropout to the math kernel; the flash op itself refuses it
            try:
                torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.5)
            except RuntimeError as e:
                return str(e)
        return F.scaled_dot_product_attention(q, k, v, **kw)
    want = call()
    with sdpa.enabled(cpu=True):
        got = {}
        assert _ops(lambda: got.setdefault("o", call())) == set()
        call()
    if case == "dropout":
        assert "dropout" in want and got["o"] == want   # torch's own kernel answered, with its own error
    else:
        assert torch.equal(got["o"], want)
    lines = [x for x in capfd.readouterr().err.splitlines() if x.startswith("wmma_gen sdpa:")]
    assert len(lines) == 1 and reason in lines[0] and "_scaled_dot_product_flash_attention_for_cpu" in lines[0]


def test_enable_disable_and_the_context_restore_torch_kernels():
    q, k, v = (torch.randn(1, 2, 8, 16).half() for _ in range(3))
    assert "wmma_gen" in list_flash_attention_impls()
    assert current_flash_attention_impl() is None
    sdpa.enable()                                   # default: the CUDA key only -> CPU tensors stay torch's
    try:
        assert sdpa.enabled_keys() == ("CUDA",)
        assert _ops(lambda: F.scaled_dot_product_attention(q, k, v)) == set()
        with sdpa.enabled(cpu=True):
            assert _ops(lambda: F.scaled_dot_product_attention(q, k, v)) == {"wmma_gen::attention"}
        assert sdpa.enabled_keys() == ("CUDA",)     # the outer activation is back
    finally:
        sdpa.disable()
    assert current_flash_attention_impl() is None and sdpa.enabled_keys() == ()
    assert _ops(lambda: F.scaled_dot_product_attention(q, k, v)) == set()


def test_bad_device_types_are_refused_before_registering():
    with pytest.raises(ValueError, match=r"device_types=\('xpu',\) is not allowed"):
        sdpa.enable(device_types=("xpu",))
    assert current_flash_attention_impl() is None


def test_cuda_kernels_outputs_and_fallback_without_an_original():
    """The CUDA-key overrides (what ROCm torch dispatches to) called as functions on CPU tensors
    (no GPU here): flash's 9 outputs, the backward's gradients, and a call wmma_gen hands back
    raising clearly when torch has no kernel to hand it to (this CPU build has no CUDA flash)."""
    keyset = torch._C._dispatch_keyset_full()
    q, k, v = (_leaf((1, 2, 11, 16), torch.float16) for _ in range(3))
    fwd, bwd = sdpa._cuda_forward(None), sdpa._cuda_backward(None)
    o, lse, cq, ck, mq, mk, rng, unused, dbg = fwd(keyset, q.detach(), k.detach(), v.detach(), 0.0, True)
    assert (cq, ck, mq, mk, lse.shape, rng.dtype) == (None, None, 11, 11, (1, 2, 11), torch.uint64)
    torch.testing.assert_close(o.double(), _ref(q, k, v, True).detach(), atol=4e-3, rtol=4e-3)
    go = torch.randn_like(o)
    dq, dk, dv = bwd(keyset, go, q.detach(), k.detach(), v.detach(), o, lse, None, None, 11, 11, 0.0, True, rng,
                     unused)
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    _ref(*leaves, True).backward(go.double())
    torch.testing.assert_close(dv.double(), leaves[2].grad, atol=8e-3, rtol=8e-3)
    with pytest.raises(NotImplementedError, match="_scaled_dot_product_flash_attention has no kernel"):
        fwd(keyset, q.detach().float(), k.detach().float(), v.detach().float())
