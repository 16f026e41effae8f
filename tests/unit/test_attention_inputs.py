"""Checking what a user passes to attention / attention_backward (wmma_gen/attention_common/inputs.py)
and the AttentionDirective it yields."""
import json
import math

import numpy as np
import pytest

from wmma_gen import hostdata
from wmma_gen.errors import ScheduleError
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.attention_common.inputs import backward_inputs, forward_inputs
from wmma_gen.attention_common.reference import attention_forward

F16 = np.float16
CU_Q, CU_K = np.array([0, 3, 3, 7], np.int32), np.array([0, 4, 5, 9], np.int32)


def dense(layout="bshd", B=2, Sq=5, Sk=6, H=4, Hkv=2, D=32, dtype=F16):
    rng = np.random.default_rng(0)
    shp = (lambda s, h: (B, s, h, D)) if layout == "bshd" else (lambda s, h: (B, h, s, D))
    return dict(q=rng.standard_normal(shp(Sq, H)).astype(dtype), k=rng.standard_normal(shp(Sk, Hkv)).astype(dtype),
                v=rng.standard_normal(shp(Sk, Hkv)).astype(dtype), layout=layout)


def varlen(H=4, Hkv=2, D=32):
    rng = np.random.default_rng(1)
    return dict(q=rng.standard_normal((7, H, D)).astype(F16), k=rng.standard_normal((9, Hkv, D)).astype(F16),
                v=rng.standard_normal((9, Hkv, D)).astype(F16), cu_seqlens_q=CU_Q, cu_seqlens_k=CU_K)


def with_grads(args, lse_shape=(2, 4, 5), lse_dtype=np.float32):
    return dict(args, o=np.zeros_like(args["q"]), do=np.ones_like(args["q"]), lse=np.zeros(lse_shape, lse_dtype))


z = np.zeros
FORWARD_BAD = [  # (case, arguments, field named in the message, given value named in the message)
    ("q 3-D without cu_seqlens", dict(dense(), q=z((5, 4, 32), F16)), "q.shape", "(5, 4, 32)"),
    ("k 5-D", dict(dense(), k=z((2, 6, 2, 32, 1), F16), v=z((2, 6, 2, 32, 1), F16)), "k.shape", "(2, 6, 2, 32, 1)"),
    ("v unlike k", dict(dense(), v=z((2, 7, 2, 32), F16)), "v.shape", "(2, 7, 2, 32)"),
    ("k batch unlike q", dict(dense(), k=z((3, 6, 2, 32), F16), v=z((3, 6, 2, 32), F16)), "k.shape", "(3, 6, 2, 32)"),
    ("k head_dim unlike q", dict(dense(), k=z((2, 6, 2, 64), F16), v=z((2, 6, 2, 64), F16)), "k.shape", "(2, 6, 2, 64)"),
    ("empty batch", dict(dense(), q=z((0, 5, 4, 32), F16), k=z((0, 6, 2, 32), F16), v=z((0, 6, 2, 32), F16)),
     "q.shape", "(0, 5, 4, 32)"),
    ("bshd arrays read as bhsd", dict(dense(), layout="bhsd"), "num_kv_heads", "6"),
    ("k float32, dtype inferred", dict(dense(), k=z((2, 6, 2, 32), np.float32)), "k.dtype", "float32"),
    ("q float32, dtype inferred", dense(dtype=np.float32), "q.dtype", "float32"),
    ("int arrays for bf16", dict(dense(), q=z((2, 5, 4, 32), np.int32), dtype="bf16"), "q.dtype", "int32"),
    ("dtype unknown", dict(dense(), dtype="f32"), "dtype", "'f32'"),
    ("head_dim 40", dense(D=40), "head_dim", "40"),            # not a multiple of 16
    ("head_dim 528", dense(D=528), "head_dim", "528"),         # past 512
    ("heads % kv_heads", dense(H=4, Hkv=3), "num_kv_heads", "3"),
    ("cu_seqlens float", dict(varlen(), cu_seqlens_q=CU_Q.astype(float)), "cu_seqlens_q.dtype", "float64"),
    ("cu_seqlens 2-D", dict(varlen(), cu_seqlens_q=np.array([[0, 3], [3, 7]])), "cu_seqlens_q.shape", "(2, 2)"),
    ("cu_seqlens length 1", dict(varlen(), cu_seqlens_q=np.array([0])), "cu_seqlens_q.shape", "(1,)"),
    ("cu_seqlens start 1", dict(varlen(), cu_seqlens_q=np.array([1, 3, 3, 7])), "cu_seqlens_q[0]", "1"),
    ("cu_seqlens decreasing", dict(varlen(), cu_seqlens_q=np.array([0, 4, 3, 7])), "cu_seqlens_q", "[0, 4, 3, 7]"),
    ("cu_seqlens_k last != total_k", dict(varlen(), cu_seqlens_k=np.array([0, 4, 5, 8])), "cu_seqlens_k[-1]", "8"),
    ("cu_seqlens_q last != total_q", dict(varlen(), cu_seqlens_q=[0, 3, 3, 9]), "cu_seqlens_q[-1]", "9"),
    ("cu_seqlens batch counts differ", dict(varlen(), cu_seqlens_k=np.array([0, 4, 9])), "cu_seqlens_k.shape", "(3,)"),
    ("only cu_seqlens_q", dict(varlen(), cu_seqlens_k=None), "cu_seqlens_k", "None"),
    ("only cu_seqlens_k", dict(varlen(), cu_seqlens_q=None), "cu_seqlens_q", "None"),
    ("varlen with bhsd", dict(varlen(), layout="bhsd"), "layout", "'bhsd'"),
    ("varlen q 4-D", dict(varlen(), q=z((1, 7, 4, 32), F16)), "q.shape", "(1, 7, 4, 32)"),
    ("varlen heads % kv_heads", varlen(H=4, Hkv=3), "num_kv_heads", "3"),
    ("window side -2", dict(dense(), window=(-2, 0)), "window", "(-2, 0)"),
    ("window int", dict(dense(), window=3), "window", "3"),
    ("window float side", dict(dense(), window=(1.5, 2)), "window", "(1.5, 2)"),
    ("window bool side", dict(dense(), window=(True, 1)), "window", "(True, 1)"),
    ("window triple", dict(dense(), window=(1, 2, 3)), "window", "(1, 2, 3)"),
    ("scale zero", dict(dense(), scale=0.0), "scale", "0.0"),
    ("scale negative", dict(dense(), scale=-0.5), "scale", "-0.5"),
    ("scale nan", dict(dense(), scale=float("nan")), "scale", "nan"),
    ("scale inf", dict(dense(), scale=float("inf")), "scale", "inf"),
    ("scale string", dict(dense(), scale="0.1"), "scale", "'0.1'"),
    ("scale bool", dict(dense(), scale=True), "scale", "True"),
    ("layout unknown", dict(dense(), layout="bsdh"), "layout", "'bsdh'"),
    ("causal not bool", dict(dense(), causal="yes"), "causal", "'yes'"),
    ("return_lse not bool", dict(dense(), return_lse=1), "return_lse", "1"),
]

BACKWARD_BAD = [
    ("o unlike q", dict(with_grads(dense()), o=z((2, 5, 4, 64), F16)), "o.shape", "(2, 5, 4, 64)"),
    ("do unlike q", dict(with_grads(dense()), do=z((2, 4, 5, 32), F16)), "do.shape", "(2, 4, 5, 32)"),
    ("do float32, dtype inferred", dict(with_grads(dense()), do=z((2, 5, 4, 32), np.float32)), "do.dtype", "float32"),
    ("lse float64", with_grads(dense(), lse_dtype=np.float64), "lse.dtype", "float64"),
    ("lse float16", with_grads(dense(), lse_dtype=F16), "lse.dtype", "float16"),
    ("lse (B, Sq, H)", with_grads(dense(), lse_shape=(2, 5, 4)), "lse.shape", "(2, 5, 4)"),
    ("lse bhsd (B, Sq, H)", with_grads(dense("bhsd"), lse_shape=(2, 5, 4)), "lse.shape", "(2, 5, 4)"),
    ("varlen lse dense-shaped", with_grads(varlen(), lse_shape=(3, 4, 4)), "lse.shape", "(3, 4, 4)"),
    ("varlen lse (total_q, H)", with_grads(varlen(), lse_shape=(7, 4)), "lse.shape", "(7, 4)"),
    ("backward head_dim", with_grads(dense(D=40)), "head_dim", "40"),
    ("backward window", dict(with_grads(dense()), window=(0, -3)), "window", "(0, -3)"),
    ("backward cu_seqlens", dict(with_grads(varlen(), lse_shape=(4, 7)), cu_seqlens_q=[0, 2, 1, 7]),
     "cu_seqlens_q", "[0, 2, 1, 7]"),
]


def _raises(fn, args, field, value):
    with pytest.raises(ScheduleError) as e:
        fn(**args)
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert msg.startswith(f"{field}="), msg
    assert value in msg.split(" is not allowed")[0], msg
    assert "is not allowed: " in msg and len(msg.split("is not allowed: ")[1]) > 3, msg


@pytest.mark.parametrize("case,args,field,value", FORWARD_BAD, ids=[c[0] for c in FORWARD_BAD])
def test_bad_forward_input_names_argument_and_value(case, args, field, value):
    _raises(forward_inputs, args, field, value)


@pytest.mark.parametrize("case,args,field,value", BACKWARD_BAD, ids=[c[0] for c in BACKWARD_BAD])
def test_bad_backward_input_names_argument_and_value(case, args, field, value):
    _raises(backward_inputs, args, field, value)


# --- what valid inputs become -------------------------------------------------------------------
def test_dense_f16_is_inferred_and_passed_through():
    a = dense()
    r = forward_inputs(**a, causal=True, return_lse=True)
    p, d = r.problem, r.directive
    assert (p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_k, p.head_dim) == (2, 4, 2, 5, 6, 32)
    assert (p.total_q, p.total_k, p.window, p.lse_shape) == (10, 12, None, (2, 4, 5))
    assert p.scale == 1 / math.sqrt(32)
    assert d == AttentionDirective("f16", 32, causal=True, return_lse=True)
    for name in "qkv":
        assert r.arrays[name] is a[name]                           # no host copy for float16
    assert p.sizes() == dict(batch=2, heads=4, kv_heads=2, seq_q=5, seq_k=6, head_dim=32, total_q=10,
                             total_k=12, window_left=-1, window_right=-1)
    assert all(type(x) is int for x in p.sizes().values())


def test_bhsd_sizes_and_window_flag():
    r = forward_inputs(**dense("bhsd", Sq=3, Sk=8, H=2, Hkv=1, D=128), window=(4, -1), scale=0.25)
    p = r.problem
    assert (p.heads, p.kv_heads, p.seq_q, p.seq_k, p.head_dim, p.scale) == (2, 1, 3, 8, 128, 0.25)
    assert (p.window_left, p.window_right, p.window) == (4, -1, (4, -1))
    assert r.directive.window and r.directive.layout == "bhsd" and not r.directive.return_lse
    assert not forward_inputs(**dense(), window=(-1, -1)).directive.window


def test_bf16_rounds_float32_on_the_host():
    a = dense(dtype=np.float32)
    a["q"] = a["q"] * np.float32(1 + 2**-9)                        # not representable in bf16
    r = forward_inputs(**a, dtype="bf16")
    assert r.directive.dtype == r.problem.dtype == "bf16"
    assert r.arrays["q"].dtype == np.uint16
    np.testing.assert_array_equal(r.arrays["q"], hostdata.encode(a["q"], "bf16"))
    assert not np.array_equal(r.values("q"), a["q"].astype(np.float64))
    np.testing.assert_array_equal(r.values("k"), hostdata.rounded(a["k"], "bf16"))


def test_f16_from_float32_is_rounded_and_strided_f16_is_made_contiguous():
    a = dense(dtype=np.float32)
    r = forward_inputs(**a, dtype="f16")
    assert r.arrays["q"].dtype == F16
    np.testing.assert_array_equal(r.arrays["q"], a["q"].astype(F16))
    b = dense(D=64)
    b["q"] = b["q"][..., ::2]                                        # head_dim axis stride 2 elements
    b["k"], b["v"] = b["k"][..., ::2], b["v"][..., ::2]
    r = forward_inputs(**b)
    assert r.arrays["q"].strides[-1] == 2 and np.array_equal(r.arrays["q"], b["q"])


def test_varlen_problem():
    r = forward_inputs(**varlen())
    p = r.problem
    assert (p.batch, p.seq_q, p.seq_k, p.total_q, p.total_k, p.lse_shape) == (3, 4, 4, 7, 9, (4, 7))
    assert p.varlen and r.directive.varlen
    assert r.arrays["cu_seqlens_q"].dtype == np.int32 and not r.arrays["cu_seqlens_q"].flags.writeable
    np.testing.assert_array_equal(r.arrays["cu_seqlens_k"], CU_K)
    r64 = forward_inputs(**dict(varlen(), cu_seqlens_q=[0, 3, 3, 7]))     # python ints are fine
    assert r64.problem.cu_seqlens_q.dtype == np.int32


def test_backward_inputs_and_reference_round_trip():
    a = dense(Sq=5, Sk=3)
    fwd = forward_inputs(**a, causal=True, return_lse=True)
    o, lse = attention_forward(*(fwd.values(n) for n in "qkv"), **fwd.problem.reference_kwargs())
    assert np.isneginf(lse[:, :, :2]).all()                             # bottom-right causal, Sq > Sk
    r = backward_inputs(**a, o=o.astype(F16), do=np.ones_like(a["q"]), lse=lse.astype(np.float32), causal=True)
    assert r.directive == AttentionDirective("f16", 32, causal=True, op="attention_bwd")
    assert set(r.arrays) == {"q", "k", "v", "o", "do", "lse"} and r.arrays["lse"].dtype == np.float32
    v = varlen()
    rv = backward_inputs(**with_grads(v, lse_shape=(4, 7)))
    assert set(rv.arrays) == {"q", "k", "v", "o", "do", "lse", "cu_seqlens_q", "cu_seqlens_k"}


# --- the directive ----------------------------------------------------------------------------------
def test_directive_round_trips_through_json():
    d = AttentionDirective("bf16", 80, causal=True, window=True, varlen=True, return_lse=True)
    assert AttentionDirective.from_dict(json.loads(d.to_json())) == d
    assert d.to_dict()["op"] == "attention"
    assert "seq" not in " ".join(d.to_dict())                           # never sizes


@pytest.mark.parametrize("kw,field", [
    (dict(dtype="f32"), "dtype"), (dict(head_dim=40), "head_dim"), (dict(head_dim=True), "head_dim"),
    (dict(head_dim=528), "head_dim"), (dict(causal=1), "causal"), (dict(window="no"), "window"),
    (dict(layout="bsd"), "layout"), (dict(varlen=True, layout="bhsd"), "layout"), (dict(op="gemm"), "op"),
    (dict(op="attention_bwd", return_lse=True), "return_lse"),
])
def test_directive_rejects_bad_fields(kw, field):
    base = dict(dtype="f16", head_dim=64)
    base.update(kw)
    with pytest.raises(ScheduleError) as e:
        AttentionDirective(**base)
    assert str(e.value).startswith(f"{field}=")
