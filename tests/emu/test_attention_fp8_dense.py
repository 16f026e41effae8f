"""Dense fp8 forward attention (paged_attention/dense_fp8.py; wmma_gen.attention(dtype="fp8e4m3" |
"fp8e5m2")) on the gfx1201 emulator against the float64 dense reference (attention_common/reference.py)
of the descaled fp8 inputs.

Q, K and V are used exactly as given (no quantisation in the kernel), so the scores are exact
products summed in f32: LSE within 1e-5 * (1 + |LSE|). O: P is E4M3 of P * 2**8 (relative
error <= 2**-4, absolute <= 2**-18 below 2**-14) against l, the f32 sum of the unquantised P
(>= 1), so |O - O_ref| <= (2**-4 + Sk 2**-18) max|V_eff| plus bf16 output rounding and f32
sums (3u, u = 2**-8) -- the bound tests/emu/test_paged_attention_fp8_wmma.py derives.
"""
import numpy as np
import pytest

from wmma_gen import attention, hostdata
from wmma_gen.attention_common.reference import attention_forward
from wmma_gen.ops.paged_attention.dense_fp8 import attention_fp8

STORE = {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}
U_BF16 = 2.0 ** -8


def _inputs(rng, B, Sq, Sk, H, Hkv, D, qd, kd):
    q8 = hostdata.encode(rng.standard_normal((B, Sq, H, D)) * 8, STORE[qd])
    k8, v8 = (hostdata.encode(rng.standard_normal((B, Sk, Hkv, D)) * 8, STORE[kd]) for _ in range(2))
    return q8, k8, v8


def _check(o, lse, q64, k64, v64, **kw):
    ro, rl = attention_forward(q64, k64, v64, **kw)
    vmax = np.abs(v64).max()
    err = np.abs(o - ro).max()
    tol = (2.0 ** -4 + k64.shape[1] * 2.0 ** -18 + 3 * U_BF16) * vmax
    assert err <= tol, f"O error {err} > {tol}"
    live = np.isfinite(rl)
    assert (lse[~live] == -np.inf).all() and (o.transpose(0, 2, 1, 3)[~live] == 0).all()
    lerr = np.abs(lse[live] - rl[live])
    assert (lerr <= 1e-5 * (1 + np.abs(rl[live]))).all(), f"LSE error {lerr.max()}"


@pytest.mark.parametrize("B, Sq, Sk, H, Hkv, D, causal, qd, kd", [
    (2, 3, 37, 4, 2, 64, True, "fp8e4m3", "fp8e4m3"),      # decode rows, GQA, Sk no multiple of 16
    (1, 40, 29, 2, 1, 32, True, "fp8e5m2", "fp8e4m3"),     # Sq > 16: a prefill chunk; Sq > Sk: empty rows
    (2, 20, 50, 2, 2, 48, False, "fp8e4m3", "fp8e5m2"),    # E5M2 K/V (bf8 forms), hd 48
])
def test_fp8_forward_descales(B, Sq, Sk, H, Hkv, D, causal, qd, kd):
    rng = np.random.default_rng(Sq)
    q8, k8, v8 = _inputs(rng, B, Sq, Sk, H, Hkv, D, qd, kd)
    dq, dk, dv = 0.125, np.array([0.25, 0.5][:Hkv]), 0.5
    o, lse = attention_fp8(q8, k8, v8, causal=causal, descale_q=dq, descale_k=dk, descale_v=dv, q_dtype=qd,
                           kv_dtype=kd, return_lse=True, arch="gfx1201", device="emu")
    _check(o, lse, hostdata.decode(q8, STORE[qd]) * dq, hostdata.decode(k8, STORE[kd]) * dk[None, None, :, None],
           hostdata.decode(v8, STORE[kd]) * dv, causal=causal)


def test_through_wmma_gen_attention_window():
    rng = np.random.default_rng(3)
    q8, k8, v8 = _inputs(rng, 1, 5, 33, 2, 2, 32, "fp8e5m2", "fp8e5m2")
    o, lse = attention(q8, k8, v8, dtype="fp8e5m2", causal=True, window=(8, 0), descale_k=0.5, return_lse=True,
                       arch="gfx1201", device="emu")
    _check(o, lse, hostdata.decode(q8, "bf8"), hostdata.decode(k8, "bf8") * 0.5, hostdata.decode(v8, "bf8"),
           causal=True, window=(8, 0))


def test_refusals_name_the_argument():
    q = np.zeros((1, 2, 2, 32), np.uint8)
    with pytest.raises(ValueError, match="arch"):
        attention(q, q, q, dtype="fp8e4m3", arch="gfx1100", device="emu")
    with pytest.raises(ValueError, match="layout"):
        attention(q, q, q, dtype="fp8e4m3", layout="bhsd", arch="gfx1201", device="emu")
    with pytest.raises(ValueError, match="descale_k"):
        attention(q, q, q, dtype="fp8e4m3", descale_k=[1.0, 2.0, 3.0], arch="gfx1201", device="emu")
