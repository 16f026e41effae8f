"""flash_attn_func / flash_attn_varlen_func with softcap (flash-attn's meaning: logits
s = softcap * tanh(scale q.k / softcap) before masks and softmax; 0.0 = off) through the custom
ops and autograd, on the emulator, against a float64 torch reference differentiated by
autograd (itself checked with torch.autograd.gradcheck).

Tolerance as tests/torch_lane/test_attention_autograd.py: TOL * eps(dtype) * max|reference| for out,
dq, dk, dv (TOL = 4; eps f16 2^-11, bf16 2^-8), lse 1e-5 relative. q and k are drawn with
standard deviation 2 so the cap is far from the identity (checked: the uncapped reference
differs by much more than the tolerance)."""
import pytest
import torch

import torch_ref as ref
from wmma_gen.torch import flash_attn_func, flash_attn_varlen_func

TOL = 4.0
F16, BF16 = torch.float16, torch.bfloat16


def capped_attention(q, k, v, cap, *, causal=False, window=(-1, -1)):
    """float64 (o, lse) of bshd q/k/v with capped logits; rows that see no key: o = 0, lse = -inf."""
    scale = q.shape[-1] ** -0.5
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    s = cap * torch.tanh((q @ k.transpose(-1, -2)) * scale / cap)
    vis = ref.visible(q.shape[2], k.shape[2], causal, window)
    any_key = vis.any(-1, keepdim=True)
    s = torch.where(vis, s, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(torch.where(any_key, s, 0.0), -1) * any_key
    return (p @ v).transpose(1, 2), lse


def _check(dtype, pairs, lse):
    for name, got, want in pairs:
        err = ref.rel_err(got, want)
        assert err <= TOL * ref.EPS[dtype], f"{name}: {err / ref.EPS[dtype]:.2f} eps (limit {TOL})"
    assert ref.rel_err(*lse) <= 1e-5


def _grads(a, r):
    return [(n, x.grad, y.grad) for n, x, y in zip(("dq", "dk", "dv"), a, r)]


def test_reference_gradcheck():
    """The float64 reference's autograd gradient is the true one (finite differences)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, n, 2, 8, generator=g, dtype=torch.float64) * 2 for n in (5, 7, 7))
    args = ref.leaves(q, k, v)
    assert torch.autograd.gradcheck(lambda *t: capped_attention(*t, 1.5, causal=True)[0], args)


CASES = {   # B, Sq, Sk, H, Hkv, D, dtype, causal, window, softcap
    "gqa_causal_f16": (1, 24, 40, 4, 2, 32, F16, True, (-1, -1), 2.0),
    "window_bf16_sq_gt_sk": (1, 40, 24, 2, 1, 32, BF16, False, (6, 3), 3.0),
}


@pytest.mark.parametrize("case", CASES)
def test_flash_attn_func_softcap_autograd(case):
    B, Sq, Sk, H, Hkv, D, dt, causal, window, cap = CASES[case]
    torch.manual_seed(1)
    q, k, v = (torch.randn(B, s, h, D) * std for s, h, std in ((Sq, H, 2), (Sk, Hkv, 2), (Sk, Hkv, 1)))
    q, k, v = (t.to(dt) for t in (q, k, v))
    a = ref.leaves(q, k, v)
    out, lse, _ = flash_attn_func(*a, causal=causal, window_size=window, softcap=cap, return_attn_probs=True)
    do = torch.randn_like(out)
    out.backward(do)
    r = ref.leaves(q, k, v, dtype=torch.float64)
    ro, rlse = capped_attention(*r, cap, causal=causal, window=window)
    ro.backward(do.double())
    _check(dt, [("out", out, ro)] + _grads(a, r), (lse, rlse))
    plain, _ = ref.attention(*(t.detach().double() for t in (q, k, v)), causal=causal, window=window)
    assert ref.rel_err(out, plain) > 10 * TOL * ref.EPS[dt], "the cap must matter in this case"


def test_varlen_softcap_autograd():
    H, Hkv, D, cap = 2, 1, 32, 2.5
    cu_q = torch.tensor([0, 9, 9, 32], dtype=torch.int32)
    cu_k = torch.tensor([0, 12, 12, 40], dtype=torch.int32)
    torch.manual_seed(2)
    q, k, v = (torch.randn(32, H, D) * 2).half(), (torch.randn(40, Hkv, D) * 2).half(), torch.randn(40, Hkv, D).half()
    a = ref.leaves(q, k, v)
    out, lse, _ = flash_attn_varlen_func(*a, cu_q, cu_k, 23, 28, causal=True, softcap=cap, return_attn_probs=True)
    do = torch.randn_like(out)
    out.backward(do)
    r = ref.leaves(q, k, v, dtype=torch.float64)
    outs, lses = [], []
    for b in range(3):
        sq, sk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        o, l = capped_attention(r[0][None, sq], r[1][None, sk], r[2][None, sk], cap, causal=True)
        outs.append(o[0])
        lses.append(l[0])
    ro, rlse = torch.cat(outs), torch.cat(lses, dim=1)
    ro.backward(do.double())
    _check(F16, [("out", out, ro)] + _grads(a, r), (lse, rlse))


@pytest.mark.parametrize("bad", [-2.0, float("nan"), float("inf")])
def test_bad_softcap_names_the_argument(bad):
    q, k, v = (torch.randn(1, 16, 2, 32).half() for _ in range(3))
    with pytest.raises(ValueError, match="softcap"):
        flash_attn_func(q, k, v, softcap=bad)
    cu = torch.tensor([0, 16], dtype=torch.int32)
    with pytest.raises(ValueError, match="softcap"):
        flash_attn_varlen_func(q[0], k[0], v[0], cu, cu, 16, 16, softcap=bad)
