"""Attention sinks (GPT-OSS; s_aux) in the numpy APIs on the emulator: the dense forward (its
epilogue), the split-KV combine, the backward (dq, dk, dv from the sink-including LSE, and
d s_aux) and paged decode (its combine), on gfx1100 and gfx1201, against float64 references
written here from the math:

    logits_i = [S_ij for visible j] ++ [s_h]      S = scale q.k (then softcap c tanh(S / c))
    LSE_i = logsumexp(logits_i);  O_i = sum_j exp(S_ij - LSE_i) V_j
    dS_ij = P_ij (dO_i.V_j - D_i), D_i = dO_i.O_i;  d s_h = -sum_{b,i} exp(s_h - LSE_i) D_i

(a row that sees no key: O = 0 and LSE = s_h). Inputs are rounded to the dtype once and the
reference runs on the rounded values. Tolerances, u = unit roundoff (f16 2^-11, bf16 2^-8):
O 3u max|V| (tests/emu/attention_fwd_helpers.py: P and O are each rounded once, weights sum
to <= 1), LSE 1e-5 (1 + |LSE|) (f32), dq/dk/dv 8u max|ref| (P and dS rounded before their
WMMAs), d s_h within sum_{b,i} exp(s_h - LSE_i) sum_d |dO_id| 3u max|V| (D_i is taken from the
kernel's stored O, which is within the forward's 3u max|V| of the reference O; the f32 sums add
~1e-5 relative).
Shapes end inside every tile (Sq 13/19, Sk 11/37, D 48) and the sinks carry a large share of
each row (the sink-free result differs far beyond tolerance: checked)."""
from __future__ import annotations

import numpy as np
import pytest

import wmma_gen
from wmma_gen import hostdata
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.targets import get_target

UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def visible(sq, sk, causal, window):
    i = np.arange(sq)[:, None] + (sk - sq)
    j = np.arange(sk)[None, :]
    vis = np.ones((sq, sk), bool)
    if causal:
        vis &= j <= i
    left, right = window or (-1, -1)
    if left >= 0:
        vis &= j >= i - left
    if right >= 0:
        vis &= j <= i + right
    return vis


def sink_reference(q, k, v, sinks, do=None, *, causal=False, window=None, softcap=None):
    """float64 (o, lse[, dq, dk, dv, ds]) for one sequence batch in bshd (B, S, H, D)."""
    B, sq, H, D = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    g = H // hkv
    scale = D ** -0.5
    o, lse = np.zeros_like(q), np.zeros((B, H, sq))
    dq, dk, dv, ds = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v), np.zeros(H)
    vis = visible(sq, sk, causal, window)
    for b in range(B):
        for h in range(H):
            kh, vh = k[b, :, h // g], v[b, :, h // g]
            raw = scale * q[b, :, h] @ kh.T
            t = np.tanh(raw / softcap) if softcap else None
            s = np.where(vis, softcap * t if softcap else raw, -np.inf)
            m = np.maximum(s.max(1, initial=-np.inf), sinks[h])
            l = np.exp(s - m[:, None]).sum(1) + np.exp(sinks[h] - m)
            lse[b, h] = m + np.log(l)
            p = np.exp(s - lse[b, h][:, None])
            o[b, :, h] = p @ vh
            if do is None:
                continue
            d_i = (do[b, :, h] * o[b, :, h]).sum(1)
            dsc = p * (do[b, :, h] @ vh.T - d_i[:, None])
            if softcap:
                dsc = dsc * (1 - t ** 2)
            dq[b, :, h] = scale * dsc @ kh
            dk[b, :, h // g] += scale * dsc.T @ q[b, :, h]
            dv[b, :, h // g] += p.T @ do[b, :, h]
            ds[h] -= (np.exp(sinks[h] - lse[b, h]) * d_i).sum()
    return (o, lse) if do is None else (o, lse, dq, dk, dv, ds)


def _draw(rng, shape, dtype, std=1.0):
    return hostdata.decode(hostdata.encode(std * rng.standard_normal(shape), dtype), dtype)


def _stored(x, dtype):
    return x.astype(np.float16) if dtype == "f16" else x


def _inputs(seed, dtype, b, sq, sk, h, hkv, d):
    rng = np.random.default_rng(seed)
    q, k, v = (_draw(rng, s, dtype) for s in ((b, sq, h, d), (b, sk, hkv, d), (b, sk, hkv, d)))
    sinks = (rng.standard_normal(h) + 2.0).astype(np.float32)   # ~ the row's own logsumexp: a large share
    return q, k, v, sinks, _draw(rng, (b, sq, h, d), dtype)


def _assert_o(o, ro, v, dtype):
    tol = 3 * UNIT[dtype] * max(np.abs(v).max(), 1.0)
    assert np.abs(np.asarray(o, np.float64) - ro).max(initial=0.0) <= tol


def _assert_lse(lse, rl):
    assert np.abs(lse - rl).max() <= 1e-5 * (1 + np.abs(rl).max())


@pytest.mark.parametrize("arch,dtype,causal,window,softcap", [
    ("gfx1100", "f16", True, None, None),          # Sq > Sk: causal rows 0..1 see no key (o = 0, lse = sink)
    ("gfx1201", "bf16", False, (6, 2), 4.0),
    ("gfx1100", "bf16", True, (5, -1), None),
])
def test_forward_and_backward(arch, dtype, causal, window, softcap):
    q, k, v, sinks, do = _inputs(1, dtype, 2, 13, 11, 4, 2, 48)
    kw = dict(causal=causal, window=window, softcap=softcap)
    dt = None if dtype == "f16" else dtype
    o, lse = wmma_gen.attention(*(_stored(x, dtype) for x in (q, k, v)), return_lse=True, dtype=dt, arch=arch,
                                s_aux=sinks, **kw)
    ro, rl, rdq, rdk, rdv, rds = sink_reference(q, k, v, sinks.astype(np.float64), do, **kw)
    plain, _ = sink_reference(q, k, v, np.full(4, -1e4), **kw)
    assert np.abs(plain - ro).max() > 20 * 3 * UNIT[dtype]                 # the sinks matter
    _assert_o(o, ro, v, dtype)
    _assert_lse(lse, rl)
    dq, dk, dv, ds = wmma_gen.attention_backward(*(_stored(x, dtype) for x in (q, k, v)), _stored(o, dtype),
                                                 _stored(do, dtype), lse, dtype=dt, arch=arch, s_aux=sinks, **kw)
    for name, g, r in (("dq", dq, rdq), ("dk", dk, rdk), ("dv", dv, rdv)):
        err = np.abs(np.asarray(g, np.float64) - r).max()
        assert err <= 8 * UNIT[dtype] * np.abs(r).max(), name
    # D_i comes from the kernel's stored O (within the forward's 3u max|V| of the reference's): that bounds d s_h
    weight = np.exp(sinks[None, :, None] - rl) * np.abs(do).sum(-1).transpose(0, 2, 1)    # (B, H, Sq)
    ds_tol = 3 * UNIT[dtype] * max(np.abs(v).max(), 1.0) * weight.sum((0, 2)) + 1e-5 * np.abs(rds).max()
    assert ds.shape == (4,) and (np.abs(ds - rds) <= ds_tol).all(), (ds - rds, ds_tol)
    again = wmma_gen.attention_backward(*(_stored(x, dtype) for x in (q, k, v)), _stored(o, dtype),
                                        _stored(do, dtype), lse, dtype=dt, arch=arch, learnable_sink=sinks, **kw)
    assert all(np.array_equal(a, b) for a, b in zip((dq, dk, dv, ds), again))   # deterministic, bit for bit


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_split_kv_combine_and_varlen(arch):
    """split_kv = 4 (the combine adds the sink) on a decode-like problem, and varlen (three packed
    sequences, one without keys) in the forward's own epilogue, MQA, bhsd for the dense call."""
    q, k, v, sinks, _ = _inputs(2, "f16", 1, 3, 37, 3, 1, 48)
    d = AttentionDirective("f16", 48, return_lse=True, layout="bhsd", sinks=True)
    s = default_schedule(get_target(arch), d, split_kv=4)
    t = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3)).astype(np.float16)   # bshd -> bhsd
    o, lse = wmma_gen.attention(t(q), t(k), t(v), return_lse=True, layout="bhsd", arch=arch, schedule=s,
                                s_aux=sinks)
    ro, rl = sink_reference(q, k, v, sinks.astype(np.float64))
    _assert_o(o.transpose(0, 2, 1, 3), ro, v, "f16")
    _assert_lse(lse, rl)
    lens_q, lens_k = (5, 3, 9), (7, 0, 4)          # sequence 1 has no keys, 2 has causal rows without any
    cu_q = np.concatenate([[0], np.cumsum(lens_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lens_k)]).astype(np.int32)
    q, k, v, _, _ = _inputs(3, "f16", 1, sum(lens_q), sum(lens_k), 3, 1, 48)
    o, lse = wmma_gen.attention(q[0].astype(np.float16), k[0].astype(np.float16), v[0].astype(np.float16),
                                cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, causal=True, return_lse=True, arch=arch,
                                s_aux=sinks)
    for b in range(3):
        qs, ks, vs = (x[0, c[b]:c[b + 1]][None] for x, c in ((q, cu_q), (k, cu_k), (v, cu_k)))
        ro, rl = sink_reference(qs, ks, vs, sinks.astype(np.float64), causal=True)
        _assert_o(o[cu_q[b]:cu_q[b + 1]], ro[0], v, "f16")
        _assert_lse(lse[:, cu_q[b]:cu_q[b + 1]], rl[0])


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_paged_decode(arch):
    """Paged decode, Sq = 2, GQA 2, random block table, one empty sequence, softcap."""
    rng = np.random.default_rng(4)
    nb, bs, hkv, h, d = 7, 16, 2, 4, 48
    kc, vc = _draw(rng, (nb, bs, hkv, d), "f16"), _draw(rng, (nb, bs, hkv, d), "f16")
    table = rng.permutation(nb)[:6].reshape(2, 3).astype(np.int32)
    lens = np.array([41, 0], np.int32)
    q = _draw(rng, (2, 2, h, d), "f16")
    sinks = (rng.standard_normal(h) + 2.0).astype(np.float32)
    o, lse = wmma_gen.paged_attention(q.astype(np.float16), kc.astype(np.float16), vc.astype(np.float16), table,
                                      lens, causal=True, softcap=6.0, return_lse=True, arch=arch, s_aux=sinks)
    for b in range(2):
        pos = np.arange(lens[b])
        ks = kc[table[b, pos // bs], pos % bs][None]
        vs = vc[table[b, pos // bs], pos % bs][None]
        ro, rl = sink_reference(q[b:b + 1], ks, vs, sinks.astype(np.float64), causal=True, softcap=6.0)
        _assert_o(o[b:b + 1], ro, vc, "f16")
        _assert_lse(lse[b:b + 1], rl)


def test_bad_sinks():
    q = np.zeros((1, 4, 2, 16), np.float16)
    with pytest.raises(ValueError, match=r"s_aux.shape=\(3,\) is not allowed: \(2,\)"):
        wmma_gen.attention(q, q, q, s_aux=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="s_aux"):
        wmma_gen.attention(q, q, q, s_aux=np.array([0.0, np.inf], np.float32))
    with pytest.raises(ValueError, match="learnable_sink"):
        wmma_gen.attention(q, q, q, s_aux=np.zeros(2), learnable_sink=np.zeros(2))
