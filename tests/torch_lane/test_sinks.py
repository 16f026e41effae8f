"""Attention sinks (GPT-OSS; flash-attn's s_aux / learnable_sink) through flash_attn_func and
flash_attn_varlen_func: forward, lse and the gradients of q, k, v and the sinks, on the emulator,
against a float64 torch reference written from the math and differentiated by autograd:

    logits = [scale q.k_j for visible j] ++ [s_h];  p = softmax(logits);  o = sum_j p_j v_j
    lse = logsumexp(logits)                          (a row with no visible key: o = 0, lse = s_h)

(GPT-OSS's eager attention: the sink is concatenated after scaling, neither scaled nor capped.)
Tolerance as tests/torch_lane/test_softcap.py: TOL * eps(dtype) * max|reference| for out, dq,
dk, dv and d s_aux (TOL = 4; eps f16 2^-11, bf16 2^-8), lse 1e-5 relative. The sinks are drawn
so they carry a large share of each row (checked: the sink-free result differs far beyond tol)."""
import pytest
import torch

import torch_ref as ref
from wmma_gen.torch import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache

TOL = 4.0
F16, BF16 = torch.float16, torch.bfloat16


def sink_attention(q, k, v, sinks, *, causal=False, window=(-1, -1), softcap=0.0):
    """float64 (o, lse) of bshd q (B, Sq, H, D), k/v (B, Sk, Hkv, D) with one sink logit per head."""
    scale = q.shape[-1] ** -0.5
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    s = (q @ k.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    s = torch.where(ref.visible(q.shape[2], k.shape[2], causal, window), s, float("-inf"))
    col = sinks.reshape(1, -1, 1, 1).expand(*s.shape[:-1], 1)
    logits = torch.cat([s, col], -1)
    lse = torch.logsumexp(logits, -1)
    p = torch.exp(logits - lse[..., None])[..., :-1]
    return (p @ v).transpose(1, 2), lse


def _leaves(dtype, *shapes, sink_shape):
    ts = [torch.randn(*sh, dtype=torch.float64).to(dtype) for sh in shapes]
    sinks = (torch.randn(sink_shape, dtype=torch.float64) + 1.0).float()
    return ref.leaves(*ts), ref.leaves(sinks)[0]


def _check(dtype, got, want, names):
    for name, g, w in zip(names, got, want, strict=True):
        err = ref.rel_err(g, w)
        assert err <= TOL * ref.EPS[dtype], f"{name}: {err / ref.EPS[dtype]:.2f} eps (limit {TOL})"


@pytest.mark.parametrize("dtype,causal,window,softcap", [(F16, True, (-1, -1), 0.0), (BF16, False, (7, 3), 5.0)])
def test_flash_attn_func_sinks_forward_backward(dtype, causal, window, softcap):
    # GQA 4 -> 2 heads, Sq=13 > Sk=11 so causal rows 0..1 see no key (o = 0, lse = sink); D = 48
    (q, k, v), sinks = _leaves(dtype, (2, 13, 4, 48), (2, 11, 2, 48), (2, 11, 2, 48), sink_shape=(4,))
    out, lse, _ = flash_attn_func(q, k, v, causal=causal, window_size=window, softcap=softcap, s_aux=sinks,
                                  return_attn_probs=True)
    q64, k64, v64, s64 = ref.leaves(q, k, v, sinks, dtype=torch.float64)
    ro, rl = sink_attention(q64, k64, v64, s64, causal=causal, window=window, softcap=softcap)
    plain, _ = sink_attention(q64, k64, v64, torch.full_like(s64, -1e4), causal=causal, window=window,
                              softcap=softcap)
    assert ref.rel_err(plain, ro) > 50 * TOL * ref.EPS[dtype]          # the sinks matter
    assert ref.rel_err(lse, rl) <= 1e-5
    do = torch.randn_like(ro)
    out.backward(do.to(dtype))
    ro.backward(do)
    _check(dtype, (out, q.grad, k.grad, v.grad, sinks.grad), (ro, q64.grad, k64.grad, v64.grad, s64.grad),
           ("out", "dq", "dk", "dv", "ds_aux"))
    assert sinks.grad.dtype == torch.float32


def test_flash_attn_varlen_func_sinks_and_alias():
    # two packed sequences (5 queries / 9 keys, 12 / 7 -> causal rows without keys), MQA, learnable_sink name
    dtype = F16
    cu_q, cu_k = torch.tensor([0, 5, 17], dtype=torch.int32), torch.tensor([0, 9, 16], dtype=torch.int32)
    (q, k, v), sinks = _leaves(dtype, (17, 3, 32), (16, 1, 32), (16, 1, 32), sink_shape=(3,))
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 12, 9, causal=True, learnable_sink=sinks)
    q64, k64, v64, s64 = ref.leaves(q, k, v, sinks, dtype=torch.float64)
    outs = []
    for b in range(2):
        qs, ks, vs = q64[cu_q[b]:cu_q[b + 1]], k64[cu_k[b]:cu_k[b + 1]], v64[cu_k[b]:cu_k[b + 1]]
        outs.append(sink_attention(qs[None], ks[None], vs[None], s64, causal=True)[0][0])
    ro = torch.cat(outs)
    do = torch.randn_like(ro)
    out.backward(do.to(dtype))
    ro.backward(do)
    _check(dtype, (out, q.grad, k.grad, v.grad, sinks.grad), (ro, q64.grad, k64.grad, v64.grad, s64.grad),
           ("out", "dq", "dk", "dv", "ds_aux"))


def test_sinks_bad_arguments():
    q = torch.randn(1, 4, 2, 16, dtype=F16)
    with pytest.raises(ValueError, match=r"s_aux=\(3,\) is not allowed: a floating tensor of shape \(2,\)"):
        flash_attn_func(q, q, q, s_aux=torch.zeros(3))
    with pytest.raises(ValueError, match="learnable_sink is not allowed together with s_aux"):
        flash_attn_func(q, q, q, s_aux=torch.zeros(2), learnable_sink=torch.zeros(2))
    with pytest.raises(ValueError, match="a floating tensor"):
        flash_attn_func(q, q, q, s_aux=torch.zeros(2, dtype=torch.int32))


def _gather(cache, table, b, n):
    """The first n keys of sequence b through its block table: (n, Hkv, D) float64."""
    bs = cache.shape[1]
    return torch.stack([cache[table[b, j // bs], j % bs] for j in range(n)]).double() if n else \
        cache.new_zeros((0,) + tuple(cache.shape[2:])).double()


@pytest.mark.parametrize("sq", [1, 3])
def test_flash_attn_with_kvcache_sinks(sq, monkeypatch):
    # paged decode (Sq = 1) and a 3-token step (causal bottom-right) with GQA 2, one empty cache (o = 0, lse = sink),
    # lengths not multiples of the 16-token block; the paged kernel's partials + the combine add the sink
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    k_cache, v_cache = torch.randn(9, 16, 2, 64).half(), torch.randn(9, 16, 2, 64).half()
    table = torch.randperm(9)[:9].reshape(3, 3).to(torch.int32)
    lens = torch.tensor([37, 0, 21], dtype=torch.int32)
    q = torch.randn(3, sq, 4, 64).half()
    sinks = torch.randn(4).to(torch.bfloat16)            # the input dtype is accepted too (flash-attn's convention)
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, block_table=table, causal=True,
                                       s_aux=sinks, return_softmax_lse=True)
    for b in range(3):
        n = int(lens[b])
        ks, vs = _gather(k_cache, table, b, n), _gather(v_cache, table, b, n)
        ro, rl = sink_attention(q[b:b + 1].double(), ks[None], vs[None], sinks.double(), causal=True)
        assert ref.rel_err(out[b:b + 1], ro) <= TOL * ref.EPS[F16], b
        assert ref.rel_err(lse[b:b + 1], rl) <= 1e-5, b


def test_paged_varlen_sinks():
    # flash_attn_varlen_func with block_table (chunked prefill): chunks of 2 and 5 tokens, window (4, 0)
    k_cache, v_cache = torch.randn(6, 16, 1, 32).half(), torch.randn(6, 16, 1, 32).half()
    table = torch.tensor([[4, 1, 0], [2, 5, 3]], dtype=torch.int32)
    cu_q, cu_k = torch.tensor([0, 2, 7], dtype=torch.int32), torch.tensor([0, 19, 40], dtype=torch.int32)
    q = torch.randn(7, 2, 32).half()
    sinks = torch.tensor([0.5, 2.0])
    out = flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k, 5, 21, causal=True, window_size=(4, 0),
                                 block_table=table, s_aux=sinks)
    for b in range(2):
        n = int(cu_k[b + 1] - cu_k[b])
        ks, vs = _gather(k_cache, table, b, n), _gather(v_cache, table, b, n)
        qs = q[cu_q[b]:cu_q[b + 1]].double()
        ro, _ = sink_attention(qs[None], ks[None], vs[None], sinks.double(), causal=True, window=(4, 0))
        assert ref.rel_err(out[cu_q[b]:cu_q[b + 1]], ro[0]) <= TOL * ref.EPS[F16], b


def test_torch_compile_traces_sinks_with_their_gradient():
    """fullgraph torch.compile (aot_eager) sees one opaque op with s_aux and the same autograd formula
    (the first test's kernels: f16 hd48 causal GQA; sizes are kernel arguments)."""
    (q, k, v), sinks = _leaves(F16, (1, 13, 4, 48), (1, 11, 2, 48), (1, 11, 2, 48), sink_shape=(4,))
    fn = lambda q, k, v, s: flash_attn_func(q, k, v, causal=True, s_aux=s).float().square().sum()
    fn(q, k, v, sinks).backward()
    eager = [t.grad.clone() for t in (q, k, v, sinks)]
    for t in (q, k, v, sinks):
        t.grad = None
    torch.compile(fn, backend="aot_eager", fullgraph=True)(q, k, v, sinks).backward()
    for a, b in zip(eager, (q.grad, k.grad, v.grad, sinks.grad), strict=True):
        assert torch.equal(a, b)
