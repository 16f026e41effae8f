"""Logit soft-capping (softcap=c: s = c * tanh(scale q.k / c) before masks and softmax) in the
attention forward and backward on the emulator, against the float64 reference
(attention_common/reference.py), gfx1100 and gfx1201.

Inputs are rounded to the kernel dtype once and the reference runs on the rounded values.
q and k are drawn with standard deviation 2, so |scale q.k| reaches several times the caps
used: the cap changes the result by far more than the tolerance (checked in every case, so a
kernel that ignored the cap would fail).
Tolerances, u = unit roundoff of the dtype (f16 2**-11, bf16 2**-8):
  O      3u * max|V|  (tests/emu/attention_fwd_helpers.py); LSE 1e-5 * (1 + |LSE| + c)
         (f32 scores; tanh from v_exp_f32 is within a few f32 ulps, times c)
  dQ/dK/dV   max|x - ref| / max|ref| <= 8u (f16), 6u (bf16) (tests/emu/attention_bwd_cases.py;
         the factor 1 - t^2 is computed in f32 before dS is rounded to the dtype)
"""
from __future__ import annotations

import numpy as np
import pytest

import wmma_gen
from wmma_gen import hostdata
from wmma_gen.errors import ScheduleError
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.attention_common.reference import attention_backward, attention_forward
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.ops.attention.signature import attention_signature
from wmma_gen.ops.attention_bwd.args import kernel_args
from wmma_gen.ops.attention_bwd.build import make_spec
from wmma_gen.ops.attention.device import attention_backward_into, attention_into

ARCHS = ("gfx1100", "gfx1201")
UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
GRAD_TOL = {"f16": 8 * UNIT["f16"], "bf16": 6 * UNIT["bf16"]}


def _problem(rng, dtype, *, heads, kv_heads, sq, sk, d, seqlens=None):
    """float64 values rounded to dtype: q, k (std 2), v, do; the varlen keywords if any."""
    def draw(rows, h, std=1.0):
        shape = (rows, h, d) if seqlens is not None else (1, rows, h, d)
        return hostdata.decode(hostdata.encode(std * rng.standard_normal(shape), dtype), dtype)
    kw = {}
    if seqlens is not None:
        lq, lk = zip(*seqlens, strict=True)
        kw = dict(cu_seqlens_q=np.concatenate([[0], np.cumsum(lq)]).astype(np.int32),
                  cu_seqlens_k=np.concatenate([[0], np.cumsum(lk)]).astype(np.int32))
        sq, sk = sum(lq), sum(lk)
    return dict(q=draw(sq, heads, 2.0), k=draw(sk, kv_heads, 2.0), v=draw(sk, kv_heads), do=draw(sq, heads)), kw


def _stored(x, dtype):
    return x.astype(np.float16) if dtype == "f16" else x


def _rel(a, r):
    return float(np.abs(a - r).max() / max(np.abs(r).max(), 1e-30))


def check_softcap(arch, dtype, cap, *, heads=2, kv_heads=1, sq=20, sk=36, d=32, causal=False, window=None,
                  seqlens=None, seed=0):
    rng = np.random.default_rng(seed)
    x, kw = _problem(rng, dtype, heads=heads, kv_heads=kv_heads, sq=sq, sk=sk, d=d, seqlens=seqlens)
    kw.update(causal=causal, window=window)
    q, k, v, do = (_stored(x[n], dtype) for n in ("q", "k", "v", "do"))
    dt = None if dtype == "f16" else "bf16"

    # forward: O and LSE of the capped logits
    o, lse = wmma_gen.attention(q, k, v, return_lse=True, softcap=cap, dtype=dt, arch=arch, **kw)
    ro, rlse = attention_forward(x["q"], x["k"], x["v"], softcap=cap, **kw)
    fin = np.isfinite(rlse)
    assert np.array_equal(np.isfinite(lse), fin), "rows that see no key must have LSE = -inf"
    o_err = np.abs(o.astype(np.float64) - ro).max()
    lse_err = np.abs(lse[fin] - rlse[fin]).max(initial=0.0)
    assert o_err <= 3 * UNIT[dtype] * np.abs(x["v"]).max(), (arch, dtype, o_err)
    assert lse_err <= 1e-5 * (1 + np.abs(rlse[fin]).max(initial=0.0) + cap), (arch, dtype, lse_err)
    uncapped, _ = attention_forward(x["q"], x["k"], x["v"], **kw)
    assert np.abs(o.astype(np.float64) - uncapped).max() > 30 * o_err + 0.05, "the cap must matter here"

    # backward from the reference's o (rounded as a forward stores it) and float32 lse
    o_r = hostdata.decode(hostdata.encode(ro, dtype), dtype)
    lse32 = rlse.astype(np.float32)
    grads = wmma_gen.attention_backward(q, k, v, _stored(o_r, dtype), do, lse32, softcap=cap, dtype=dt, arch=arch,
                                        **kw)
    ref = attention_backward(x["q"], x["k"], x["v"], o_r, x["do"], lse32.astype(np.float64), softcap=cap, **kw)
    errs = {n: _rel(g.astype(np.float64), r) for n, g, r in zip(("dq", "dk", "dv"), grads, ref, strict=True)}
    assert all(e <= GRAD_TOL[dtype] for e in errs.values()), (arch, dtype, errs)
    plain = attention_backward(x["q"], x["k"], x["v"], o_r, x["do"], lse32.astype(np.float64), **kw)
    assert _rel(grads[1].astype(np.float64), plain[1]) > 10 * GRAD_TOL[dtype], "dK must see the 1 - t^2 factor"
    return errs


@pytest.mark.parametrize("arch", ARCHS)
def test_causal_gqa_sq_ne_sk_f16(arch):
    check_softcap(arch, "f16", 2.0, heads=4, kv_heads=2, sq=20, sk=36, causal=True, seed=1)


@pytest.mark.parametrize("arch", ARCHS)
def test_window_sq_gt_sk_bf16(arch):
    check_softcap(arch, "bf16", 3.0, heads=2, kv_heads=1, sq=40, sk=30, window=(8, 4), seed=2)


@pytest.mark.parametrize("arch", ARCHS)
def test_varlen_causal_bf16(arch):
    check_softcap(arch, "bf16", 1.5, heads=2, kv_heads=1, d=32, causal=True, seqlens=[(17, 30), (9, 9), (0, 5)],
                  seed=3)


def test_dense_f16_hd64_gfx1100():
    check_softcap("gfx1100", "f16", 5.0, heads=1, kv_heads=1, sq=33, sk=33, d=64, seed=4)


def test_device_calls_softcap_keyword():
    """attention_into / attention_backward_into take softcap= and write what the API returns."""
    rng = np.random.default_rng(5)
    x, _ = _problem(rng, "f16", heads=2, kv_heads=1, sq=18, sk=24, d=32)
    q, k, v, do = (x[n].astype(np.float16) for n in ("q", "k", "v", "do"))
    o, lse = np.zeros_like(q), np.zeros((1, 2, 18), np.float32)
    attention_into(q, k, v, o, lse, causal=True, softcap=2.5, arch="gfx1100")
    ro, rlse = attention_forward(x["q"], x["k"], x["v"], causal=True, softcap=2.5)
    assert np.abs(o.astype(np.float64) - ro).max() <= 3 * UNIT["f16"] * np.abs(x["v"]).max()
    assert np.abs(lse - rlse).max() <= 1e-5 * (1 + np.abs(rlse).max() + 2.5)
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, causal=True, softcap=2.5, arch="gfx1100")
    ref = attention_backward(x["q"], x["k"], x["v"], o.astype(np.float64), x["do"], lse.astype(np.float64),
                             causal=True, softcap=2.5)
    for g, r in zip((dq, dk, dv), ref, strict=True):
        assert _rel(g.astype(np.float64), r) <= GRAD_TOL["f16"]


# --- no emulator: arguments and refusals ---------------------------------------------------------
def test_softcap_argument_only_when_on():
    s = AttentionSchedule()
    names = lambda d: [a.name for a in attention_signature(d, s, "k").args]   # noqa: E731
    assert "softcap" not in names(AttentionDirective("f16", 64))
    on = names(AttentionDirective("f16", 64, softcap=True))
    assert on[-1] == "softcap" and on[:-1] == names(AttentionDirective("f16", 64))
    for kernel in ("dkdv", "dq", "prepass"):
        off = [a.name for a in kernel_args(make_spec("gfx1100", "f16", 64), kernel)]
        with_cap = [a.name for a in kernel_args(make_spec("gfx1100", "f16", 64, softcap=True), kernel)]
        assert "softcap" not in off
        assert ("softcap" in with_cap) == (kernel != "prepass")


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "30", True, 1e39])
def test_bad_softcap_refused(bad):
    q = np.zeros((1, 16, 1, 32), np.float16)
    lse = np.zeros((1, 1, 16), np.float32)
    with pytest.raises(ScheduleError, match="softcap"):
        wmma_gen.attention(q, q, q, softcap=bad, arch="gfx1100")
    with pytest.raises(ScheduleError, match="softcap"):
        wmma_gen.attention_backward(q, q, q, q, q, lse, softcap=bad, arch="gfx1100")
    with pytest.raises(ScheduleError, match="softcap"):
        attention_into(q, q, q, np.zeros_like(q), softcap=bad, arch="gfx1100")


@pytest.mark.parametrize("off", [None, 0, 0.0])
def test_softcap_off_values(off):
    from wmma_gen.attention_common.inputs import forward_inputs
    q = np.zeros((1, 16, 1, 32), np.float16)
    inp = forward_inputs(q, q, q, softcap=off)
    assert inp.directive.softcap is False and inp.problem.softcap == 0.0
    assert forward_inputs(q, q, q, softcap=7).directive.softcap is True


@pytest.mark.parametrize("op", ["attention", "attention_bwd"])
def test_registry_gate_runs_softcap_directives(op):
    """spec.check (the sweep's correctness gate) feeds the cap to a softcap directive's set."""
    from wmma_gen.ops import registry
    from wmma_gen.ops.attention.spec import AttentionProblem
    from wmma_gen.ops.compile_op import compile_op
    spec = registry.get(op)
    d = AttentionDirective("f16", 32, causal=True, op=op, softcap=True)
    cs = compile_op(spec, d, spec.default_schedule(d, "gfx1100"), None, "gfx1100")
    r = spec.check(cs, d, AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=24, seq_k=40))
    assert r.passed, r


@pytest.mark.parametrize("arch", ARCHS)
def test_saturated_logits_stay_finite(arch):
    """|scale q.k| / c in the hundreds: 2**(2y log2 e) overflows to +inf or underflows to 0, and
    tanh must come out exactly +-1 (rcp(inf) = 0), never NaN, forward and backward."""
    rng = np.random.default_rng(6)
    q = (rng.standard_normal((1, 16, 1, 32)) * 30).astype(np.float16)
    k = (rng.standard_normal((1, 20, 1, 32)) * 30).astype(np.float16)
    v = rng.standard_normal((1, 20, 1, 32)).astype(np.float16)
    o, lse = wmma_gen.attention(q, k, v, return_lse=True, softcap=0.5, arch=arch)
    ro, rlse = attention_forward(q, k, v, softcap=0.5)
    assert np.isfinite(o).all() and np.isfinite(lse).all()
    assert np.abs(o.astype(np.float64) - ro).max() <= 3 * UNIT["f16"] * np.abs(v).max()
    assert np.abs(lse - rlse).max() <= 1e-5 * (1 + np.abs(rlse).max() + 0.5)
    do = rng.standard_normal(q.shape).astype(np.float16)
    grads = wmma_gen.attention_backward(q, k, v, o, do, lse, softcap=0.5, arch=arch)
    assert all(np.isfinite(g).all() for g in grads)
