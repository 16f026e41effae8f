"""wmma_gen.compare: op-agnostic output-vs-reference comparison (issue #13 item 3)."""
import math

import numpy as np
import pytest

from wmma_gen.compare import Comparison, compare, round_to_dtype

INF, NAN = np.inf, np.nan


def cmp(out, ref, *, tol=1e-3, exact=False, out_dtype="f32"):
    return compare(np.asarray(out, np.float64), np.asarray(ref, np.float64), tol=tol, exact=exact,
                   out_dtype=out_dtype)


def test_result_is_a_frozen_record():
    c = cmp([1.0, 2.0], [1.0, 2.0])
    assert c == Comparison(True, 0.0, 0.0, 1e-3, (0,))
    with pytest.raises(AttributeError):
        c.passed = False
    assert c.to_dict()["max_rel"] == 0.0


@pytest.mark.parametrize("out,ref", [
    ([INF, -INF, 1.0], [INF, -INF, 1.0]),          # equal infinities agree (|inf - inf| is nan)
    ([NAN, 2.0], [NAN, 2.0]),                       # NaN where the math says NaN
    ([INF, INF], [INF, INF]),                       # every element inf: no finite scale, still a pass
    ([NAN, INF, -INF], [NAN, INF, -INF]),
    ([-0.0, 0.0], [0.0, -0.0]),                     # signed zeros are equal values
])
def test_same_specials_agree(out, ref):
    c = cmp(out, ref)
    assert c.passed and c.max_abs == 0.0 and c.max_rel == 0.0


@pytest.mark.parametrize("out,ref,worst", [
    ([1.0, NAN], [1.0, 2.0], (1,)),                 # NaN where the math has a number
    ([1.0, 2.0], [1.0, NAN], (1,)),                 # a number where the math has NaN
    ([INF, 1.0], [-INF, 1.0], (0,)),                # opposite infinities
    ([1.0, INF], [1.0, 2.0], (1,)),                 # spurious overflow
    ([1.0, 5.0], [1.0, INF], (1,)),                 # missed overflow of the exact value
])
def test_mismatched_specials_fail_with_infinite_error(out, ref, worst):
    c = cmp(out, ref)
    assert not c.passed and c.max_abs == math.inf and c.worst == worst


def test_f16_overflow_of_the_rounded_reference_passes():
    # 70000 does not fit f16: a correct kernel writes inf; the exact reference is finite
    ref = np.array([70000.0, 1.0])
    out = np.array([np.float16(np.inf), 1.0])
    assert cmp(out, ref, out_dtype="f16").passed
    assert not cmp(out, ref, out_dtype="f32").passed          # in f32 70000 is finite: inf is wrong


def test_rounding_to_the_output_dtype_removes_the_cast_error():
    ref = np.array([1.0 + 2.0 ** -12, 3.0])                    # not an f16 value
    out = ref.astype(np.float16)
    assert cmp(out, ref, tol=0.0, out_dtype="f16").max_abs == 0.0
    assert cmp(out, ref, tol=0.0, out_dtype="f32").max_abs > 0.0


def test_finite_output_just_under_a_rounded_overflow_is_measured_against_the_exact_value():
    ref = np.array([65520.0, 1.0])                             # rounds to inf in f16 (tie past max)
    out = np.array([65504.0, 1.0])                             # the kernel's sum came out a hair lower
    c = cmp(out, ref, tol=1e-3, out_dtype="f16")
    assert c.passed and c.max_abs == 16.0


def test_normwise_relative_error_and_worst_index():
    ref = np.array([[0.0, 10.0], [1e-9, -4.0]])
    out = ref + np.array([[0.0, 0.0], [0.01, 0.0]])
    c = cmp(out, ref, tol=1e-2)
    assert c.worst == (1, 0) and c.max_abs == pytest.approx(0.01) and c.max_rel == pytest.approx(1e-3)
    assert c.passed
    assert not cmp(out, ref, tol=1e-4).passed


def test_exact_means_bit_equal_values():
    ref = np.array([1, -7, 2**30], np.int64)
    assert compare(ref.astype(np.int32), ref, tol=0.0, exact=True, out_dtype="i32").passed
    c = compare(ref.astype(np.int32) + 1, ref, tol=0.5, exact=True, out_dtype="i32")
    assert not c.passed and c.max_abs == 1.0


def test_all_zero_reference_only_zero_output_passes():
    assert cmp([0.0, 0.0], [0.0, 0.0]).passed
    c = cmp([0.0, 1e-30], [0.0, 0.0])
    assert not c.passed and c.max_rel == math.inf


def test_empty_arrays_pass():
    c = cmp(np.zeros((0, 3)), np.zeros((0, 3)))
    assert c.passed and c.worst == ()


@pytest.mark.parametrize("kw,field", [({"out_dtype": "f12"}, "out_dtype"), ({"tol": -1.0}, "tol"),
                                      ({"tol": "0.1"}, "tol")])
def test_bad_arguments_name_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        cmp([1.0], [1.0], **kw)


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"out.shape=\(2,\).*ref.shape=\(3,\)"):
        cmp([1.0, 2.0], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("dtype,x,want", [
    ("f16", 65519.0, 65504.0), ("f16", 65520.0, INF), ("f16", -1e6, -INF),
    ("bf16", 1.0 + 2.0 ** -8, 1.0), ("bf16", 3.5e38, INF),
    ("f32", 1.0 + 2.0 ** -24, 1.0), ("f32", 1e39, INF), ("i32", 123.0, 123.0),
])
def test_round_to_dtype_is_rne_with_overflow_to_inf(dtype, x, want):
    assert round_to_dtype(np.array([x]), dtype)[0] == want


def test_check_compare_delegates_with_the_gemm_tolerance():
    from wmma_gen.ops.gemm.check import compare as check_compare, tolerance
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    d, p = GemmDirective("f16", out_dtype="f16", alpha=float("inf")), GemmProblem(16, 16, 16)
    ref = np.full((1, 16, 16), np.inf)
    ok, max_abs, max_rel, tol, worst = check_compare(d, ref.astype(np.float16), ref, p)
    assert ok and max_abs == 0.0 and tol == tolerance(d, p)
