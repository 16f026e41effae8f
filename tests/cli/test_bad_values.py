"""Values a user passes to the Python API (issue 24 item 2 and the API tracebacks): each is
computed right or refused with a ScheduleError naming the argument -- never a wrong result,
an inf made silently or an AttributeError.

A negative attention scale runs as |scale| on -q (ops/attention/inputs.public_scale): the
kernels' online softmax is right only for scale > 0."""
from __future__ import annotations

import numpy as np
import pytest

import wmma_gen
from wmma_gen.errors import ScheduleError
from wmma_gen.attention_common.reference import attention_forward

rng = np.random.default_rng(0)


def test_gemm_refuses_a_float_conversion_that_overflows():
    a = np.ones((16, 16), np.float32)
    a[3, 4], a[5, 6] = 1e6, -7e4
    with pytest.raises(ScheduleError, match=r"^a: 2 of 256 finite values are beyond the range of f16"):
        wmma_gen.gemm(a, np.ones((16, 16), np.float32), dtype="f16", device="emu")


def test_gemm_refuses_fp8_values_that_would_saturate():
    b = np.full((16, 16), 500.0, np.float32)
    with pytest.raises(ScheduleError, match=r"^b: 256 of 256 finite values .* fp8 .* would saturate to \+-448"):
        wmma_gen.gemm(np.ones((16, 16), np.float32), b, dtype="fp8", arch="gfx1201", device="emu")


def test_gemm_converts_float64_for_every_stored_format():
    """api._stored compares x.dtype with _AS_STORED.get(dtype): None for bf16/fp8/bf8/i4, and
    numpy's float64 == None is True, so float64 arrays reach the launcher unconverted."""
    a, b = rng.standard_normal((16, 32)), rng.standard_normal((32, 16))
    out = wmma_gen.gemm(a, b, dtype="bf16", device="emu")
    from wmma_gen import hostdata
    ref = hostdata.rounded(a, "bf16") @ hostdata.rounded(b, "bf16")
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_attention_refuses_a_float_conversion_that_overflows():
    q = rng.standard_normal((1, 16, 1, 64))          # float64: 1e39 is finite there
    k = q.copy()
    k[0, 2, 0, 5] = 1e39
    with pytest.raises(ScheduleError, match=r"^k: 1 of 1024 finite values are beyond the range of bf16"):
        wmma_gen.attention(q, k, q, dtype="bf16", device="emu")


def test_gemm_unsigned_refuses_negative_int8():
    a = rng.integers(-5, 5, (16, 16)).astype(np.int8)
    with pytest.raises(ScheduleError, match=r"^a: \d+ of 256 values lie outside \[0, 255\].*negative"):
        wmma_gen.gemm(a, np.abs(a), unsigned=True, device="emu")


def test_gemm_unsigned_int8_without_negatives_is_exact():
    a = rng.integers(0, 100, (16, 32)).astype(np.int8)
    b = rng.integers(0, 100, (32, 16)).astype(np.int8)
    out = wmma_gen.gemm(a, b, unsigned=True, device="emu")
    np.testing.assert_array_equal(out, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("schedule", ["block_m=64", [64, 64], 3])
def test_gemm_schedule_of_a_wrong_type_names_the_argument(schedule):
    x = np.ones((16, 16), np.float16)
    with pytest.raises(ScheduleError, match=r"^schedule=.* is not allowed: a Schedule, a dict of its fields"):
        wmma_gen.gemm(x, x, schedule=schedule, device="emu")


@pytest.mark.parametrize("schedule", ["block_m=64", [64], {"block_q": 16}])
def test_attention_schedule_of_a_wrong_type_names_the_argument(schedule):
    q = rng.standard_normal((1, 16, 1, 64)).astype(np.float16)
    with pytest.raises(ScheduleError, match=r"^schedule="):
        wmma_gen.attention(q, q, q, schedule=schedule, device="emu")


def test_attention_schedule_as_a_dict_runs():
    q = rng.standard_normal((1, 20, 1, 64)).astype(np.float16)
    o = wmma_gen.attention(q, q, q, schedule={"block_m": 16, "block_n": 16, "waves": 1}, device="emu")
    ref, _ = attention_forward(*(q.astype(np.float64),) * 3)
    np.testing.assert_allclose(o, ref, atol=3 * 2.0**-11 * np.abs(q).max())


@pytest.mark.parametrize("scale", [-0.125, -1.0])
def test_attention_negative_scale_is_legal_math(scale):
    q, k, v = (rng.standard_normal((1, 24, 2, 64)).astype(np.float16) for _ in range(3))
    o = wmma_gen.attention(q, k, v, scale=scale, device="emu")
    ref, _ = attention_forward(*(x.astype(np.float64) for x in (q, k, v)), scale=scale)
    np.testing.assert_allclose(o, ref, atol=3 * 2.0**-11 * np.abs(v).max())


@pytest.mark.parametrize("scale", [1e39, -1e39, 0.0, 1e-50, float("nan"), float("inf"), "0.1", True])
def test_attention_scale_f32_cannot_hold_names_scale(scale):
    q = rng.standard_normal((1, 16, 1, 64)).astype(np.float16)
    with pytest.raises(ScheduleError, match=r"^scale=.* is not allowed: a finite non-zero real number within "
                                            r"the f32 range"):
        wmma_gen.attention(q, q, q, scale=scale, device="emu")


@pytest.mark.parametrize("scale", [-0.125, -1.0])
def test_attention_backward_negative_scale(scale):
    q, k, v, do = (rng.standard_normal((1, 24, 2, 64)).astype(np.float16) for _ in range(4))
    o, lse = wmma_gen.attention(q, k, v, scale=scale, causal=True, return_lse=True, device="emu")
    got = wmma_gen.attention_backward(q, k, v, o, do, lse, scale=scale, causal=True, device="emu")
    from wmma_gen.attention_common.reference import attention_backward
    want = attention_backward(*(x.astype(np.float64) for x in (q, k, v, o, do)), lse.astype(np.float64),
                              scale=scale, causal=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=8 * 2.0**-11 * np.abs(w).max() + 1e-3)


def test_device_path_refuses_negative_scale_with_the_way_out():
    from wmma_gen.ops.device_calls import attention_into
    q = rng.standard_normal((1, 16, 1, 64)).astype(np.float16)
    with pytest.raises(ScheduleError, match="negate q and pass -scale"):
        attention_into(q, q, q, np.zeros_like(q), scale=-0.5)
