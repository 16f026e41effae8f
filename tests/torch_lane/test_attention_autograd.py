"""Autograd parity of wmma_gen.torch attention (flash-attn and SDPA front ends, run on the
emulator) against float64 torch math references: out, lse, dq, dk, dv.

Tolerance: TOL * eps(dtype) * max|reference| (eps = unit roundoff: f16 2^-11, bf16 2^-8). The
kernels round P to the input dtype before P V and round every output once, so errors near one
ulp of the largest value are expected (measured 0.6-1.3); TOL = 4 leaves room for other seeds.
lse is f32 end to end: 1e-5 relative."""
import pytest
import torch

import torch_ref as ref
from wmma_gen.torch import flash_attn_func, flash_attn_varlen_func, scaled_dot_product_attention

TOL = 4.0
F16, BF16 = torch.float16, torch.bfloat16


def _check(dtype, pairs, lse=None):
    for name, got, want in pairs:
        err = ref.rel_err(got, want)
        assert err <= TOL * ref.EPS[dtype], f"{name}: {err / ref.EPS[dtype]:.2f} eps (limit {TOL})"
    if lse is not None:
        assert ref.rel_err(*lse) <= 1e-5


def _grads(a, r):
    return [(n, x.grad, y.grad) for n, x, y in zip(("dq", "dk", "dv"), a, r)]


CASES = {   # B, Sq, Sk, H, Hkv, D, dtype, causal, window
    "gqa_causal_f16": (1, 32, 32, 4, 2, 32, F16, True, (-1, -1)),
    "bf16_dense": (2, 24, 24, 2, 2, 32, BF16, False, (-1, -1)),
    "causal_sq_lt_sk": (1, 16, 40, 2, 1, 32, F16, True, (-1, -1)),
    "causal_sq_gt_sk_empty_rows": (1, 40, 16, 2, 2, 32, F16, True, (-1, -1)),
    "window": (1, 48, 48, 2, 2, 32, F16, False, (8, 4)),
    "window_causal_bf16": (1, 32, 48, 2, 1, 32, BF16, True, (6, -1)),
}


@pytest.mark.parametrize("case", CASES)
def test_flash_attn_func_matches_float64_reference(case):
    B, Sq, Sk, H, Hkv, D, dt, causal, window = CASES[case]
    q, k, v = (torch.randn(B, s, h, D).to(dt) for s, h in ((Sq, H), (Sk, Hkv), (Sk, Hkv)))
    a = ref.leaves(q, k, v)
    out, lse, probs = flash_attn_func(*a, causal=causal, window_size=window, return_attn_probs=True)
    assert out.dtype == dt and out.shape == q.shape and lse.shape == (B, H, Sq) and probs is None
    do = torch.randn_like(out)
    out.backward(do)
    r = ref.leaves(q, k, v, dtype=torch.float64)
    ro, rlse = ref.attention(*r, causal=causal, window=window)
    ro.backward(do.double())
    _check(dt, [("out", out, ro)] + _grads(a, r), lse=(lse, rlse))
    if case == "causal_sq_gt_sk_empty_rows":    # queries 0..23 see no key: out 0, lse -inf, no gradient
        assert out[:, :Sq - Sk].abs().max() == 0 and torch.isinf(lse[..., :Sq - Sk]).all()
        assert a[0].grad[:, :Sq - Sk].abs().max() == 0


def test_varlen_with_an_empty_sequence_gqa_causal():
    H, Hkv, D = 4, 2, 32
    lq, lk = [9, 0, 23], [9, 0, 30]          # the middle sequence is empty; the last has Sq < Sk
    cu_q = torch.tensor([0, 9, 9, 32], dtype=torch.int32)
    cu_k = torch.tensor([0, 9, 9, 39], dtype=torch.int32)
    q, k, v = torch.randn(32, H, D).half(), torch.randn(39, Hkv, D).half(), torch.randn(39, Hkv, D).half()
    a = ref.leaves(q, k, v)
    out, lse, _ = flash_attn_varlen_func(*a, cu_q, cu_k, max(lq), max(lk), causal=True, return_attn_probs=True)
    assert out.shape == q.shape and lse.shape == (H, 32)
    do = torch.randn_like(out)
    out.backward(do)
    r = ref.leaves(q, k, v, dtype=torch.float64)
    ro, rlse = ref.attention_varlen(*r, cu_q.tolist(), cu_k.tolist(), causal=True)
    ro.backward(do.double())
    _check(F16, [("out", out, ro)] + _grads(a, r), lse=(lse, rlse))


def test_bhsd_through_sdpa_equals_bshd_through_flash_attn():
    """The same data in both layouts: the kernels read strides, the results are the same bits."""
    q, k, v = (torch.randn(2, 24, 2, 32).half() for _ in range(3))
    a = ref.leaves(q, k, v)
    out = flash_attn_func(*a)
    b = ref.leaves(*(t.transpose(1, 2).contiguous() for t in (q, k, v)))
    out_t = scaled_dot_product_attention(*b)
    do = torch.randn_like(out)
    out.backward(do)
    out_t.backward(do.transpose(1, 2).contiguous())
    assert torch.equal(out, out_t.transpose(1, 2))
    for x, y in zip(a, b):
        assert torch.equal(x.grad, y.grad.transpose(1, 2))


SDPA = {   # Sq, Sk, H, Hkv, is_causal: SDPA's top-left causal in all three Sq/Sk relations
    "causal_square": (32, 32, 2, 2, True),
    "causal_sq_lt_sk": (16, 40, 4, 2, True),
    "causal_sq_gt_sk": (40, 16, 2, 1, True),
    "gqa_dense": (24, 40, 4, 1, False),
}


@pytest.mark.parametrize("case", SDPA)
def test_sdpa_matches_torch_sdpa_top_left_causal(case):
    Sq, Sk, H, Hkv, causal = SDPA[case]
    q, k, v = torch.randn(2, H, Sq, 32).bfloat16(), torch.randn(2, Hkv, Sk, 32).bfloat16(), \
        torch.randn(2, Hkv, Sk, 32).bfloat16()
    a = ref.leaves(q, k, v)
    out = scaled_dot_product_attention(*a, is_causal=causal, enable_gqa=H != Hkv)
    do = torch.randn_like(out)
    out.backward(do)
    r = ref.leaves(q, k, v, dtype=torch.float64)
    ro = torch.nn.functional.scaled_dot_product_attention(*r, is_causal=causal, enable_gqa=H != Hkv)
    ro.backward(do.double())
    _check(BF16, [("out", out, ro)] + _grads(a, r))
