"""Gradcheck-style: the analytic backward against central finite differences in a random
direction u, compared as  |FD - <grad, u>| <= TOL * eps(f16) * sum_i |grad_i u_i|.

What is meaningful with f16 inputs: a finite difference of an f16-output op measures its
output rounding (0.5 ulp / h), not its derivative. So
  * GEMM: differentiate the op itself on its f32-output path, on inputs that are multiples
    of h = 2^-5 below 64 in magnitude, so x +- h is exact in f16 (11 significant bits): the
    only forward error left is f32
    accumulation (~1e-7 relative), so FD is the derivative of the kernel that runs, to
    O(h^2) for the smooth activation.
  * attention: the kernel writes o in f16 only, so FD is taken in float64 on the reference
    function at the same f16 input values, and the kernel's dq, dk, dv must match it.
The analytic gradients are rounded to f16 (and dZ before the backward GEMMs): ~1 eps per
element, TOL = 4."""
import pytest
import torch

import torch_ref as ref
from wmma_gen.torch import flash_attn_func

TOL = 4.0
EPS16 = 2.0 ** -11


def _compare(fd: float, grads, dirs):
    ad = sum((g.double() * u).sum().item() for g, u in zip(grads, dirs))
    scale = sum((g.double() * u).abs().sum().item() for g, u in zip(grads, dirs))
    assert abs(fd - ad) <= TOL * EPS16 * scale, (fd, ad, scale)


@pytest.mark.parametrize("act", ["", "silu"])
def test_gemm_f32_path_matches_finite_differences(act):
    h = 2.0 ** -5
    a, b = (torch.round(torch.randn(n, 32) * s / h) * h for n, s in ((16, 2.0), (24, 1.0)))
    a, b = a.half(), b.half()
    bias = torch.randn(24)
    g = torch.randn(16, 24, dtype=torch.float64)
    x = ref.leaves(a, b, bias)
    y = torch.ops.wmma_gen.gemm(*x, "NT", act, "f32")
    y.backward(g.float())
    dirs = [torch.randint(0, 2, t.shape).double() * 2 - 1 for t in (a, b, bias)]

    def loss(sign):
        pa, pb, pbias = (t.double() + sign * h * u for t, u in zip((a, b, bias), dirs))
        assert torch.equal(pa.half().double(), pa) and torch.equal(pb.half().double(), pb)   # exact steps
        out = torch.ops.wmma_gen.gemm(pa.half(), pb.half(), pbias.float(), "NT", act, "f32")
        return (out.double() * g).sum().item()
    fd = (loss(1) - loss(-1)) / (2 * h)
    _compare(fd, [t.grad for t in x], dirs)


def test_attention_backward_matches_float64_finite_differences():
    h = 1e-6
    q, k, v = torch.randn(1, 24, 2, 32).half(), torch.randn(1, 40, 1, 32).half(), torch.randn(1, 40, 1, 32).half()
    g = torch.randn(1, 24, 2, 32, dtype=torch.float64)
    x = ref.leaves(q, k, v)
    out = flash_attn_func(*x, causal=True, window_size=(12, -1))
    out.backward(g.half())
    dirs = [torch.randn(t.shape, dtype=torch.float64) for t in (q, k, v)]

    def loss(sign):
        pq, pk, pv = (t.double() + sign * h * u for t, u in zip((q, k, v), dirs))
        o, _ = ref.attention(pq, pk, pv, causal=True, window=(12, -1))
        return (o * g.half().double()).sum().item()
    fd = (loss(1) - loss(-1)) / (2 * h)
    _compare(fd, [t.grad for t in x], dirs)
