"""The float64 attention reference (wmma_gen/attention_common/reference.py) against a deliberately
naive per-element implementation, central finite differences, and closed-form FLOP counts."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from wmma_gen.attention_common.reference import (attention_backward, attention_flops, attention_forward,
                                              visible_mask)


# --- a naive implementation written straight from the docstring conventions ------------------
def naive_visible(i, j, sq, sk, causal, left, right):
    a = i + sk - sq                               # bottom-right aligned diagonal
    if causal and j > a:
        return False
    if left != -1 and j < a - left:
        return False
    if right != -1 and j > a + right:
        return False
    return True


def naive_attention(q, k, v, *, scale, causal, left, right, layout, cu_q=None, cu_k=None):
    """Triple loop over (sequence, head, query); python scalars only."""
    if cu_q is None:                              # dense: index functions per layout
        B = q.shape[0]
        H, Hkv = (q.shape[2], k.shape[2]) if layout == "bshd" else (q.shape[1], k.shape[1])
        Sq, Sk = (q.shape[1], k.shape[1]) if layout == "bshd" else (q.shape[2], k.shape[2])
        lens = [(Sq, Sk)] * B
        if layout == "bshd":
            def at(x, b, s, h):
                return x[b, s, h]
        else:
            def at(x, b, s, h):
                return x[b, h, s]
        o, lse = np.zeros(q.shape), np.zeros((B, H, Sq))

        def put(b, i, h, row, lv):
            if layout == "bshd":
                o[b, i, h] = row
            else:
                o[b, h, i] = row
            lse[b, h, i] = lv
    else:
        B, H, Hkv = len(cu_q) - 1, q.shape[1], k.shape[1]
        lens = [(cu_q[b + 1] - cu_q[b], cu_k[b + 1] - cu_k[b]) for b in range(B)]
        o, lse = np.zeros(q.shape), np.zeros((H, q.shape[0]))

        def at(x, b, s, h):
            return x[(cu_q if x is q else cu_k)[b] + s, h]

        def put(b, i, h, row, lv):
            o[cu_q[b] + i, h] = row
            lse[h, cu_q[b] + i] = lv
    D = q.shape[-1]
    for b in range(B):
        sq, sk = lens[b]
        for h in range(H):
            g = h // (H // Hkv)
            for i in range(sq):
                keys = [j for j in range(sk) if naive_visible(i, j, sq, sk, causal, left, right)]
                if not keys:
                    put(b, i, h, [0.0] * D, -math.inf)
                    continue
                qi = at(q, b, i, h)
                s = {j: scale * sum(qi[d] * at(k, b, j, g)[d] for d in range(D)) for j in keys}
                m = max(s.values())
                den = sum(math.exp(s[j] - m) for j in keys)
                row = [sum(math.exp(s[j] - m) / den * at(v, b, j, g)[d] for j in keys) for d in range(D)]
                put(b, i, h, row, m + math.log(den))
    return o, lse


# --- hypothesis strategies ------------------------------------------------------------------
heads_st = st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (4, 4)])
side_st = st.integers(-1, 4)


@st.composite
def dense_problem(draw):
    B, (H, Hkv) = draw(st.integers(1, 2)), draw(heads_st)
    Sq, Sk, D = draw(st.integers(0, 9)), draw(st.integers(0, 9)), draw(st.sampled_from([16, 32]))
    layout = draw(st.sampled_from(["bshd", "bhsd"]))
    shape = (lambda s, h: (B, s, h, D)) if layout == "bshd" else (lambda s, h: (B, h, s, D))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    q, k, v = (rng.standard_normal(shape(Sq, H)), rng.standard_normal(shape(Sk, Hkv)),
               rng.standard_normal(shape(Sk, Hkv)))
    return dict(q=q, k=k, v=v, layout=layout, causal=draw(st.booleans()),
                window=draw(st.none() | st.tuples(side_st, side_st)), scale=draw(st.none() | st.just(0.3)))


@st.composite
def varlen_problem(draw):
    B, (H, Hkv) = draw(st.integers(1, 3)), draw(heads_st)
    lens = st.lists(st.sampled_from([0, 1, 2, 3, 5, 9]), min_size=B, max_size=B)
    lq, lk = draw(lens), draw(lens)
    D = draw(st.sampled_from([16, 32]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    cu_q = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lk)]).astype(np.int32)
    return dict(q=rng.standard_normal((cu_q[-1], H, D)), k=rng.standard_normal((cu_k[-1], Hkv, D)),
                v=rng.standard_normal((cu_k[-1], Hkv, D)), cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                causal=draw(st.booleans()), window=draw(st.none() | st.tuples(side_st, side_st)), scale=None)


def check_against_naive(p):
    o, lse = attention_forward(**p)
    left, right = p["window"] or (-1, -1)
    scale = p["scale"] or 1.0 / math.sqrt(p["q"].shape[-1])
    o_ref, lse_ref = naive_attention(p["q"], p["k"], p["v"], scale=scale, causal=p["causal"], left=left,
                                     right=right, layout=p.get("layout", "bshd"),
                                     cu_q=p.get("cu_seqlens_q"), cu_k=p.get("cu_seqlens_k"))
    assert o.dtype == lse.dtype == np.float64
    assert o.shape == o_ref.shape and lse.shape == lse_ref.shape
    assert not np.isnan(o).any() and not np.isnan(lse).any()
    np.testing.assert_allclose(o, o_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.isneginf(lse), np.isneginf(lse_ref))
    np.testing.assert_allclose(lse[np.isfinite(lse)], lse_ref[np.isfinite(lse_ref)], rtol=1e-12, atol=1e-12)


@settings(max_examples=120, deadline=None)
@given(dense_problem())
def test_forward_matches_naive_dense(p):
    check_against_naive(p)


@settings(max_examples=80, deadline=None)
@given(varlen_problem())
def test_forward_matches_naive_varlen(p):
    check_against_naive(p)


# --- masks ----------------------------------------------------------------------------------
def test_causal_mask_is_bottom_right_aligned():
    np.testing.assert_array_equal(visible_mask(2, 5, True), [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(visible_mask(4, 2, True), [[0, 0], [0, 0], [1, 0], [1, 1]])
    np.testing.assert_array_equal(visible_mask(3, 3, True), np.tril(np.ones((3, 3), bool)))


def test_window_mask_bounds_and_unbounded_sides():
    # square, (1, 0): the diagonal and one key to the left
    np.testing.assert_array_equal(visible_mask(4, 4, False, 1, 0), np.tril(np.triu(np.ones((4, 4)), -1)))
    # (-1, 1): unbounded left, one key to the right of the (bottom-right) diagonal
    np.testing.assert_array_equal(visible_mask(2, 4, False, -1, 1), [[1, 1, 1, 1], [1, 1, 1, 1]])
    np.testing.assert_array_equal(visible_mask(2, 4, False, -1, 0), [[1, 1, 1, 0], [1, 1, 1, 1]])
    # causal + window (2, 5): causal wins on the right
    np.testing.assert_array_equal(visible_mask(3, 3, True, 1, 5), visible_mask(3, 3, False, 1, 0))
    assert visible_mask(3, 3, False, -1, -1).all()


def test_fully_masked_rows_give_zero_and_minus_inf():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((1, 5, 2, 16)), rng.standard_normal((1, 2, 1, 16)), rng.standard_normal((1, 2, 1, 16))
    o, lse = attention_forward(q, k, v, causal=True)             # Sq > Sk: rows 0..2 see nothing
    assert (o[0, :3] == 0).all() and np.isneginf(lse[0, :, :3]).all()
    assert np.isfinite(lse[0, :, 3:]).all() and np.abs(o[0, 3:]).sum() > 0
    o, lse = attention_forward(q, k[:, :0], v[:, :0])              # Sk = 0
    assert (o == 0).all() and np.isneginf(lse).all()
    o, lse = attention_forward(q, k, v, window=(0, 0))             # off = -3: rows 0..2 miss the keys
    assert (o[0, :3] == 0).all() and np.isneginf(lse[0, :, :3]).all() and not np.isnan(o).any()


def test_layouts_agree():
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((2, 6, 4, 16)), rng.standard_normal((2, 7, 2, 16)), rng.standard_normal((2, 7, 2, 16))
    o1, l1 = attention_forward(q, k, v, causal=True, window=(3, -1))
    t = (0, 2, 1, 3)
    o2, l2 = attention_forward(q.transpose(t), k.transpose(t), v.transpose(t), causal=True, window=(3, -1),
                               layout="bhsd")
    np.testing.assert_allclose(o2.transpose(t), o1, rtol=1e-14)
    np.testing.assert_allclose(l2, l1, rtol=1e-14)


def test_cu_seqlens_must_come_in_pairs():
    q = np.zeros((3, 1, 16))
    with pytest.raises(ValueError, match="cu_seqlens"):
        attention_forward(q, q, q, cu_seqlens_q=np.array([0, 3], np.int32))


# --- backward vs central finite differences ---------------------------------------------------
def finite_difference_grads(kw, q, k, v, G, eps=1e-6):
    def loss(q_, k_, v_):
        return float((attention_forward(q_, k_, v_, **kw)[0] * G).sum())
    grads = []
    for which in range(3):
        xs = [q.copy(), k.copy(), v.copy()]
        g = np.zeros_like(xs[which])
        for idx in np.ndindex(g.shape):
            x0 = xs[which][idx]
            xs[which][idx] = x0 + eps
            up = loss(*xs)
            xs[which][idx] = x0 - eps
            g[idx] = (up - loss(*xs)) / (2 * eps)
            xs[which][idx] = x0
        grads.append(g)
    return grads


BACKWARD_CASES = {
    "plain": dict(shape=((2, 3, 2, 4), (2, 4, 2, 4)), kw=dict()),
    "causal_sq_gt_sk_gqa": dict(shape=((1, 5, 4, 4), (1, 3, 2, 4)), kw=dict(causal=True)),
    "causal_sq_lt_sk_mqa_bhsd": dict(shape=((1, 2, 3, 4), (1, 1, 5, 4)), kw=dict(causal=True, layout="bhsd")),
    "window": dict(shape=((1, 5, 2, 3), (1, 6, 1, 3)), kw=dict(window=(1, 2), scale=0.7)),
    "window_causal": dict(shape=((2, 4, 2, 3), (2, 4, 2, 3)), kw=dict(window=(1, -1), causal=True)),
    "varlen": dict(shape=((6, 4, 3), (7, 2, 3)),
                   kw=dict(cu_seqlens_q=np.array([0, 2, 2, 3, 6], np.int32),
                           cu_seqlens_k=np.array([0, 3, 4, 4, 7], np.int32), causal=True)),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_CASES))
def test_backward_matches_finite_differences(name):
    case = BACKWARD_CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    q_shape, kv_shape = case["shape"]
    q, k, v = rng.standard_normal(q_shape), rng.standard_normal(kv_shape), rng.standard_normal(kv_shape)
    o, lse = attention_forward(q, k, v, **case["kw"])
    G = rng.standard_normal(o.shape)
    dq, dk, dv = attention_backward(q, k, v, o, G, lse, **case["kw"])
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    for got, want in zip((dq, dk, dv), finite_difference_grads(case["kw"], q, k, v, G)):
        assert not np.isnan(got).any()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)
    assert np.abs(dk).sum() > 0 and np.abs(dv).sum() > 0


def test_backward_fully_masked_rows_contribute_nothing():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((1, 5, 2, 4)), rng.standard_normal((1, 2, 2, 4)), rng.standard_normal((1, 2, 2, 4))
    o, lse = attention_forward(q, k, v, causal=True)              # rows 0..2 fully masked
    do = rng.standard_normal(o.shape)
    dq, dk, dv = attention_backward(q, k, v, o, do, lse, causal=True)
    assert (dq[0, :3] == 0).all() and not np.isnan(dq).any()
    do2 = do.copy()
    do2[0, :3] = 1e3                                               # gradients into masked rows are ignored
    for a, b in zip((dq, dk, dv), attention_backward(q, k, v, o, do2, lse, causal=True)):
        np.testing.assert_array_equal(a, b)


# --- FLOP counts ----------------------------------------------------------------------------
def test_flops_closed_forms():
    B, H, S, Sk, D = 2, 3, 7, 11, 64
    assert attention_flops(B, H, S, Sk, D) == 4 * B * H * S * Sk * D
    assert attention_flops(B, H, S, S, D, causal=True) == 4 * B * H * D * S * (S + 1) // 2
    assert attention_flops(B, H, S, S, D, causal=True, backward=True) == 10 * B * H * D * S * (S + 1) // 2
    assert attention_flops(1, 1, 4096, 4096, 128) == 4 * 4096 * 4096 * 128
    assert attention_flops(2, 1, [3, 0], [5, 2], 32) == 4 * 32 * 15
    assert attention_flops(1, 1, 5, 2, 32, causal=True) == 4 * 32 * 3       # bottom-right: rows 3, 4 only


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.booleans(), st.none() | st.tuples(side_st, side_st), st.booleans())
def test_flops_count_the_visible_mask(sq, sk, causal, window, backward):
    left, right = window or (-1, -1)
    pairs = int(visible_mask(sq, sk, causal, left, right).sum())
    assert attention_flops(1, 2, sq, sk, 16, causal, window, backward) == (10 if backward else 4) * 16 * 2 * pairs
