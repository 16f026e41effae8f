"""Issue 37's torch-lane probes: every bad argument of flash_attn_func / flash_attn_varlen_func /
flash_attn_with_kvcache / fp8 flash_attn_func gives a ValueError or NotImplementedError naming the
argument, the value and what is allowed (before any launch, nothing written into a cache); a
negative softmax_scale computes softmax(s q.k) exactly (as -q with |s|) forward and backward;
gradients of gradients and backward through the forward-only paged / fp8 op say so."""
import numpy as np
import pytest
import torch

import torch_ref as ref
from wmma_gen.ops.paged_attention.reference import paged_attention_reference
from wmma_gen.torch import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache

U16 = 2.0 ** -11


def _cache(nb=4, Hkv=1, D=64, dtype=torch.float16):
    return torch.randn(nb, 16, Hkv, D).to(dtype), torch.randn(nb, 16, Hkv, D).to(dtype)


Q1 = lambda: torch.randn(1, 1, 2, 64).half()                       # noqa: E731
TABLE = lambda: torch.tensor([[0, 1]], dtype=torch.int32)           # noqa: E731


@pytest.mark.parametrize("window", [(1.5, 0), "40", (4,), (2, -3), (True, 0)])
def test_window_size_must_be_two_ints(window):
    qkv = [torch.randn(1, 16, 2, 32).half() for _ in range(3)]
    with pytest.raises(ValueError, match=r"window_size=.* is not allowed: None or \(left, right\), two ints >= -1"):
        flash_attn_func(*qkv, window_size=window)
    k, v = _cache()
    with pytest.raises(ValueError, match=r"window_size=.* is not allowed"):
        flash_attn_with_kvcache(Q1(), k, v, cache_seqlens=3, block_table=TABLE(), window_size=window)


@pytest.mark.parametrize("bad", [-1, 2.0, True])
def test_max_seqlen_must_be_a_non_negative_int(bad):
    q = torch.randn(16, 2, 32).half()
    cu = torch.tensor([0, 16], dtype=torch.int32)
    with pytest.raises(ValueError, match=rf"max_seqlen_q={bad!r} is not allowed: an int >= 0"):
        flash_attn_varlen_func(q, q, q, cu, cu, bad, 16)


def test_kvcache_arguments():
    k, v = _cache()
    with pytest.raises(NotImplementedError, match=r"rotary_cos=<Tensor> is not supported"):
        flash_attn_with_kvcache(Q1(), k, v, rotary_cos=torch.ones(3), rotary_sin=torch.ones(3))
    for lens in (3.0, torch.tensor([3.0]), True):
        with pytest.raises(ValueError, match=r"cache_seqlens=.* is not allowed: an int >= 0 or a torch.int32"):
            flash_attn_with_kvcache(Q1(), k, v, cache_seqlens=lens, block_table=TABLE())
    with pytest.raises(ValueError, match=r"cache_seqlens holds -2"):
        flash_attn_with_kvcache(Q1(), k, v, cache_seqlens=torch.tensor([-2], dtype=torch.int32), block_table=TABLE())
    with pytest.raises(ValueError, match=r"v_cache.dtype=torch.float32 is not allowed: torch.float16"):
        flash_attn_with_kvcache(Q1(), k, v.float(), cache_seqlens=3, block_table=TABLE())


@pytest.mark.parametrize("lens", [30, torch.tensor([30], dtype=torch.int32)])
def test_append_past_capacity_is_refused_and_writes_nothing(lens):
    k, v = _cache()
    k0, v0 = k.clone(), v.clone()
    new = torch.ones(1, 5, 1, 64).half()
    with pytest.raises(ValueError, match=r"cache_seqlens\[0\] \+ seqlen_new = 35 is not allowed: .* = 2 \* 16 = 32"):
        flash_attn_with_kvcache(Q1(), k, v, k=new, v=new, cache_seqlens=lens, block_table=TABLE())
    assert torch.equal(k, k0) and torch.equal(v, v0)


BAD_DESCALES = [float("nan"), 0.0, -0.5, 1e39, torch.tensor([[0.5, float("nan")]]), torch.tensor([[-1.0, 1.0]])]


@pytest.mark.parametrize("bad", BAD_DESCALES, ids=["nan", "zero", "neg", "1e39", "tensor_nan", "tensor_neg"])
def test_fp8_descales_must_be_positive_finite(bad, monkeypatch):
    k, v = (t.to(torch.float8_e4m3fn) for t in _cache(Hkv=2))
    match = r"_descale.* is not allowed: positive finite float32 values"
    with pytest.raises(ValueError, match="v" + match):
        flash_attn_with_kvcache(torch.randn(1, 1, 4, 64).half(), k, v, cache_seqlens=3, block_table=TABLE(),
                                v_descale=bad)
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    q8 = torch.randn(1, 16, 2, 64).to(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="k" + match):
        flash_attn_func(q8, q8, q8, k_descale=bad)


def test_descale_tensor_checked_once_per_key_and_again_after_an_in_place_change():
    from wmma_gen.torch import fp8_scales
    d = torch.tensor([[0.5, 0.25]])
    fp8_scales.check_descale("k_descale", d)
    key = next(k for k in fp8_scales._CHECKED if k[1] == d.data_ptr())
    assert key[2] == d._version
    d[0, 1] = float("nan")                                # bumps _version: a new key, read again
    with pytest.raises(ValueError, match=r"k_descale\[0, 1\]=nan"):
        fp8_scales.check_descale("k_descale", d)


def test_kvcache_takes_per_sequence_fp8_descales_like_flash_attn_func():
    """FA3's (batch, nheads_k) descales with different rows: one call per sequence, each matching
    the float64 reference with that sequence's scales."""
    kc, vc = (torch.randn(6, 16, 1, 64) * 3 for _ in "kv")
    k8, v8 = kc.to(torch.float8_e4m3fn), vc.to(torch.float8_e4m3fn)
    table = torch.tensor([[0, 1], [2, 3]], dtype=torch.int32)
    lens = torch.tensor([20, 9], dtype=torch.int32)
    q = torch.randn(2, 1, 2, 64).half()
    dk, dv = torch.tensor([[0.5], [0.25]]), torch.tensor([[0.125], [1.0]])
    out = flash_attn_with_kvcache(q, k8, v8, cache_seqlens=lens, block_table=table, k_descale=dk, v_descale=dv,
                                  causal=True)
    f = lambda t: t.to(torch.float64).numpy()          # noqa: E731
    for b in range(2):
        ro, _ = paged_attention_reference(f(q[b:b + 1]), f(k8), f(v8), table[b:b + 1].numpy(), lens[b:b + 1].numpy(),
                                          causal=True, k_scale=float(dk[b, 0]), v_scale=float(dv[b, 0]))
        vmax = float(dv[b, 0]) * v8.to(torch.float64).abs().max().item()
        assert np.abs(out[b:b + 1].double().numpy() - ro).max() <= 3 * U16 * vmax


def test_negative_softmax_scale_is_exact_math_forward_and_backward():
    """The one rule (wmma_gen/torch/args.py): scale -0.3 gives softmax(-0.3 q.k) V and its gradients."""
    q, k, v = (torch.randn(1, 32, 2, 32).half() for _ in range(3))
    a = ref.leaves(q, k, v)
    out = flash_attn_func(*a, softmax_scale=-0.3, causal=True)
    do = torch.randn_like(out)
    out.backward(do)
    r = ref.leaves(q, k, v, dtype=torch.float64)
    ro, _ = ref.attention(*r, causal=True, scale=-0.3)
    ro.backward(do.double())
    for name, got, want in [("out", out, ro), ("dq", a[0].grad, r[0].grad), ("dk", a[1].grad, r[1].grad),
                            ("dv", a[2].grad, r[2].grad)]:
        assert ref.rel_err(got, want) <= 4 * ref.EPS[torch.float16], name
    with pytest.raises(ValueError, match=r"softmax_scale=0.0 is not allowed: a finite non-zero real number"):
        flash_attn_func(q, k, v, softmax_scale=0.0)


def test_negative_scale_paged_decode_matches_reference():
    k, v = _cache()
    q = Q1()
    lens = torch.tensor([20], dtype=torch.int32)
    out = flash_attn_with_kvcache(q, k, v, cache_seqlens=lens, block_table=TABLE(), softmax_scale=-0.2)
    f = lambda t: t.to(torch.float64).numpy()          # noqa: E731
    ro, _ = paged_attention_reference(f(q), f(k), f(v), TABLE().numpy(), lens.numpy(), causal=False, scale=-0.2)
    assert np.abs(out.double().numpy() - ro).max() <= 3 * U16 * v.abs().max().item()


def test_double_backward_says_it_is_not_implemented():
    q, k, v = (torch.randn(1, 32, 2, 32).half().requires_grad_() for _ in range(3))
    out = flash_attn_func(q, k, v, causal=True)
    (dq,) = torch.autograd.grad(out.float().square().sum(), q, create_graph=True)
    with pytest.raises(NotImplementedError, match="wmma_gen attention has no double backward"):
        dq.float().sum().backward()


def test_backward_through_the_forward_only_paged_op_says_so():
    k, v = _cache()
    q = Q1().requires_grad_()
    out = flash_attn_with_kvcache(q, k, v, cache_seqlens=20, block_table=TABLE())
    with pytest.raises(NotImplementedError, match="paged attention .* is forward only"):
        out.float().sum().backward()


def test_backward_through_the_fp8_forward_says_so(monkeypatch):
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    q8, k8, v8 = (torch.randn(1, 16, 2, 64).to(torch.float8_e4m3fn).requires_grad_() for _ in range(3))
    out = flash_attn_func(q8, k8, v8, causal=True)
    with pytest.raises(NotImplementedError, match="fp8 flash_attn_func\\) is forward only"):
        out.float().sum().backward()


def test_a_cpu_block_table_is_checked_like_numpys():
    k, v = _cache()
    with pytest.raises(ValueError, match=r"block_table\[0, 1\]=4 is not allowed: a block id in \[0, num_blocks=4\)"):
        flash_attn_with_kvcache(Q1(), k, v, cache_seqlens=20, block_table=torch.tensor([[0, 4]], dtype=torch.int32))


@pytest.mark.parametrize("lengths", ["seqused_k", "cu_seqlens_k"])
@pytest.mark.parametrize("bad_id", [4, -1, 2 ** 27])
def test_a_cpu_block_table_is_checked_in_the_paged_varlen_call(lengths, bad_id):
    """flash_attn_varlen_func(block_table=...) checks the ids each sequence reads as
    flash_attn_with_kvcache does (sequence 1 reads blocks 0..1 of its 20 keys; the id past its
    length is never read, so any value is allowed there); nothing is written into `out`."""
    k, v = _cache()
    q = torch.randn(3, 2, 64).half()
    cu_q = torch.tensor([0, 1, 3], dtype=torch.int32)
    table = torch.tensor([[0, 2, 3], [1, bad_id, 123]], dtype=torch.int32)
    lens = torch.tensor([33, 20], dtype=torch.int32)
    kw = (dict(seqused_k=lens) if lengths == "seqused_k"
          else dict(cu_seqlens_k=torch.cat([torch.zeros(1, dtype=torch.int32), lens.cumsum(0).to(torch.int32)])))
    out = torch.full_like(q, 7.0)
    with pytest.raises(ValueError, match=rf"block_table\[1, 1\]={bad_id} is not allowed: a block id in "
                                         r"\[0, num_blocks=4\) \(sequence 1 reads block 1 of its seq_len=20\)"):
        flash_attn_varlen_func(q, k, v, cu_q, kw.get("cu_seqlens_k"), 2, 33, block_table=table,
                               seqused_k=kw.get("seqused_k"), out=out)
    assert bool((out == 7.0).all())
    table[1, 1] = 3                                       # the same call with legal ids runs
    got = flash_attn_varlen_func(q, k, v, cu_q, kw.get("cu_seqlens_k"), 2, 33, block_table=table,
                                 seqused_k=kw.get("seqused_k"))
    assert got.shape == q.shape and bool(torch.isfinite(got).all())
