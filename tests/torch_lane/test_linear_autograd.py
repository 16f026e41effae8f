"""linear / matmul on the emulator against float64 torch: outputs and dx, dW, dbias; the
backward's GEMMs read the stored operands (no transpose is made); the fused epilogue's
activations are the ones torch names.

Tolerance: TOL * eps(dtype) * max|reference| for outputs rounded to f16/bf16 (f32
accumulation, one rounding of the output; the backward also rounds dZ to the input dtype
before its GEMMs): measured 0.5-1.5, TOL = 4. f32-output GEMMs: 1e-5 relative (f16/bf16
products are exact in f32; K <= 64 f32 additions and the epilogue's f32 erf/tanh/exp stay
far below the 5e-4 that separates gelu (erf) from gelu_tanh)."""
import pytest
import torch
import torch.nn.functional as F

import torch_ref as ref
import wmma_gen.torch.gemm_ops as gemm_ops
from wmma_gen.torch import linear, matmul

TOL = 4.0
ACT = {None: lambda z: z, "relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
       "silu": F.silu}
CASES = [(torch.float16, None, True, (40,)), (torch.float16, "relu", False, (2, 20)),
         (torch.bfloat16, "gelu", True, (40,)), (torch.float16, "gelu_tanh", True, (3, 16)),
         (torch.bfloat16, "silu", True, (40,))]


def _check(dtype, name, got, want):
    err = ref.rel_err(got, want)
    assert err <= TOL * ref.EPS[dtype], f"{name}: {err / ref.EPS[dtype]:.2f} eps (limit {TOL})"


@pytest.mark.parametrize("dtype,act,bias,lead", CASES, ids=[f"{d}-{a}-{b}" for d, a, b, _ in CASES])
def test_linear_matches_float64_reference(dtype, act, bias, lead):
    x = torch.randn(*lead, 64).to(dtype)
    w = (torch.randn(48, 64) / 8).to(dtype)
    b = torch.randn(48).to(dtype) if bias else None
    a = ref.leaves(*(t for t in (x, w, b) if t is not None))
    y = linear(a[0], a[1], a[2] if bias else None, activation=act)
    assert y.dtype == dtype and y.shape == (*lead, 48)
    dy = torch.randn_like(y)
    y.backward(dy)
    r = ref.leaves(*(t for t in (x, w, b) if t is not None), dtype=torch.float64)
    yr = ACT[act](F.linear(r[0], r[1], r[2] if bias else None))
    yr.backward(dy.double())
    _check(dtype, "y", y, yr)
    for name, g, gr in zip(("dx", "dW", "dbias"), a, r):
        assert g.grad.dtype == dtype
        _check(dtype, name, g.grad, gr.grad)


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh", "silu"])
def test_epilogue_activation_is_torchs(act):
    """f32 output: pre-activations spread over [-4, 4] where gelu and gelu_tanh differ by 5e-4."""
    a = torch.randn(32, 64).half()
    b = (torch.randn(48, 64) / 2).half()
    got = torch.ops.wmma_gen.gemm(a, b, None, "NT", act, "f32")
    want = ACT[act](a.double() @ b.double().T)
    assert ref.rel_err(got, want) <= 1e-5


def test_backward_reads_stored_operands(monkeypatch):
    """Y = X W^T: forward NT(X, W); backward dX = NN(dY, W), dW = TN(dY, X) on the same memory."""
    calls = []
    real = gemm_ops.gemm_into

    def spy(a, b, c, **kw):
        calls.append((kw["layout"], a.data_ptr(), b.data_ptr()))
        return real(a, b, c, **kw)
    monkeypatch.setattr(gemm_ops, "gemm_into", spy)
    x = torch.randn(32, 64).half().requires_grad_()
    w = torch.randn(48, 64).half().requires_grad_()
    y = linear(x, w)
    y.backward(torch.randn_like(y))
    by_layout = {lay: (pa, pb) for lay, pa, pb in calls}
    assert set(by_layout) == {"NT", "NN", "TN"}
    assert by_layout["NT"] == (x.data_ptr(), w.data_ptr())
    assert by_layout["NN"][1] == w.data_ptr() and by_layout["TN"][1] == x.data_ptr()
    assert by_layout["NN"][0] == by_layout["TN"][0]          # the one dY, read twice


@pytest.mark.parametrize("sa,sb", [((24, 64), (64, 40)), ((3, 16, 32), (32, 24)), ((16, 32), (3, 32, 24)),
                                   ((2, 16, 32), (2, 32, 24))])
def test_matmul_2d_3d_with_broadcast(sa, sb):
    a, b = torch.randn(*sa).half(), (torch.randn(*sb) / 4).half()
    x = ref.leaves(a, b)
    c = matmul(*x)
    dc = torch.randn_like(c)
    c.backward(dc)
    r = ref.leaves(a, b, dtype=torch.float64)
    cr = torch.matmul(*r)
    cr.backward(dc.double())
    assert c.dtype == torch.float16 and c.shape == cr.shape
    _check(torch.float16, "c", c, cr)
    for name, g, gr in zip(("da", "db"), x, r):
        assert g.grad.shape == gr.grad.shape
        _check(torch.float16, name, g.grad, gr.grad)


def test_int8_matmul_and_linear_are_exact_int32():
    a = torch.randint(-128, 128, (32, 64), dtype=torch.int8)
    b = torch.randint(-128, 128, (64, 48), dtype=torch.int8)
    want = a.long() @ b.long()
    got = matmul(a, b)
    assert got.dtype == torch.int32 and torch.equal(got.long(), want)
    assert torch.equal(linear(a, b.T.contiguous()).long(), want)
