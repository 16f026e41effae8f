"""Host values <-> stored operand bytes, and the values the device sees."""
import numpy as np
import pytest

from wmma_gen import hostdata
from wmma_gen.errors import ScheduleError


def test_f16_from_float32_rounds_like_numpy():
    x = np.random.default_rng(0).normal(size=1000).astype(np.float32)
    assert np.array_equal(hostdata.encode(x, "f16"), x.astype(np.float16))
    assert hostdata.encode(x, "f16").dtype == np.float16


def test_bf16_round_to_nearest_even():
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.0], dtype=np.float32)   # tie -> even, tie -> up(even)
    assert hostdata.encode(x, "bf16").tolist() == [0x3F80, 0x3F82, 0xC000]
    assert hostdata.rounded(x, "bf16").tolist() == [1.0, 1 + 2**-6, -2.0]


def test_fp8_and_bf8_round_in_range_and_keep_specials():
    assert hostdata.rounded(np.array([463.0, -448.0, 0.3]), "fp8").tolist() == [448.0, -448.0, 0.3125]
    assert hostdata.rounded(np.array([-np.inf]), "fp8").tolist() == [-448.0]      # E4M3 FN has no inf
    assert np.isinf(hostdata.rounded(np.array([np.inf]), "bf8"))[0]
    assert hostdata.rounded(np.array([65519.0]), "f16").tolist() == [65504.0]     # rounds down: in range


@pytest.mark.parametrize("values, dtype, bad", [
    (np.array([1e6, 1.0, -2e6], np.float32), "f16", 2),        # issue 24: 1e6 silently became inf
    (np.array([65520.0]), "f16", 1),                             # the first value that rounds to inf
    (np.array([1e39, 0.0]), "bf16", 1),
    (np.array([465.0, -500.0, 3.0]), "fp8", 2),                  # would saturate to +-448
    (np.array([61440.0]), "bf8", 1),
    (np.array([1e39]), "f32", 1),
])
def test_float_overflow_is_refused_with_the_count(values, dtype, bad):
    with pytest.raises(ScheduleError) as e:
        hostdata.encode(values, dtype, field="a")
    assert e.value.field == "a values"
    assert str(e.value).startswith(f"a: {bad} of {values.size} finite values are beyond the range of {dtype}")


def test_unsigned_refuses_negative_values_also_without_a_copy():
    x = np.array([[-3, 4], [5, -1]], np.int8)
    for f in (hostdata.encode, hostdata.as_stored):
        with pytest.raises(ScheduleError, match=r"^b: 2 of 4 values lie outside \[0, 255\].*negative"):
            f(x, "i8", unsigned=True, field="b")
    ok = np.array([[3, 4]], np.int8)[:, ::-1]
    assert hostdata.as_stored(ok, "i8", unsigned=True) is ok        # a view: strides kept, no copy
    h = np.ones((2, 3), np.float16)
    assert hostdata.as_stored(h, "f16") is h
    assert hostdata.as_stored(h, "bf16").dtype == np.uint16
    for dtype, stored in (("bf16", np.uint16), ("fp8", np.uint8), ("bf8", np.uint8)):   # float64 is converted
        assert hostdata.as_stored(np.ones(4), dtype).dtype == stored


def test_i32_refuses_values_beyond_its_range():
    with pytest.raises(ScheduleError, match="1 of 2 values lie outside"):
        hostdata.encode(np.array([2**31, 0]), "i32", field="c")
    assert hostdata.encode(np.array([2.5, -2.5]), "i32").tolist() == [2, -2]


@pytest.mark.parametrize("value, rounded", [(0.125, 0.125), (-2.0, -2.0), (0.1, float(np.float32(0.1))),
                                            (np.float16(3), 3.0), (7, 7.0)])
def test_f32_scalar_rounds_and_allows_negative(value, rounded):
    assert hostdata.f32_scalar("scale", value, nonzero=True) == rounded


@pytest.mark.parametrize("value", [0, 0.0, 1e-50, 1e39, -1e39, float("nan"), float("inf"), True, "1", None, 2**2000])
def test_f32_scalar_refuses_what_f32_cannot_hold(value):
    with pytest.raises(ScheduleError, match=r"^scale=.* is not allowed: a finite non-zero real number"):
        hostdata.f32_scalar("scale", value, nonzero=True)
    assert hostdata.f32_scalar("beta", 0.0) == 0.0


def test_i4_packs_low_nibble_first_and_roundtrips():
    v = np.array([[1, -2, 3, 4]])
    packed = hostdata.encode(v, "i4")
    assert packed.tolist() == [[0xE1, 0x43]]
    assert hostdata.decode(packed, "i4").tolist() == [[1, -2, 3, 4]]
    u = np.array([15, 0])
    assert hostdata.encode(u, "i4", unsigned=True).tolist() == [0x0F]
    assert hostdata.decode(np.array([0x0F], np.uint8), "i4", unsigned=True).tolist() == [15, 0]


@pytest.mark.parametrize("x, dtype, unsigned, field", [
    (np.array([8, 0]), "i4", False, "a values"),
    (np.array([-1, 0]), "i4", True, "a values"),
    (np.array([1, 2, 3]), "i4", False, "a.shape"),
    (np.array([1.0, 2.0]), "i8", False, "a.dtype"),
    (np.array([128]), "i8", False, "a values"),
    (np.array([True]), "f16", False, "a.dtype"),
])
def test_bad_inputs_name_the_field(x, dtype, unsigned, field):
    with pytest.raises(ScheduleError) as e:
        hostdata.encode(x, dtype, unsigned=unsigned, field="a")
    assert e.value.field == field


def test_unsigned_i8_keeps_255():
    assert hostdata.rounded(np.array([255, 0], np.uint8), "i8", unsigned=True).tolist() == [255, 0]
    assert hostdata.encode(np.array([255]), "i8", unsigned=True).dtype == np.uint8


def test_infer_dtype():
    f16, i8 = np.zeros(2, np.float16), np.zeros(2, np.int8)
    assert hostdata.infer_dtype(f16, f16) == "f16"
    assert hostdata.infer_dtype(i8, i8) == "i8"
    assert hostdata.infer_dtype(np.zeros(2, np.uint8), i8, unsigned=True) == "i8"
    with pytest.raises(ScheduleError, match="explicit dtype="):
        hostdata.infer_dtype(np.zeros(2, np.float32), f16)


def test_output_array_types_and_values():
    bf = np.array([0x3F80, 0xC040], np.uint16).tobytes()
    out = hostdata.output_array(bf, "bf16", (2,))
    assert out.dtype == np.float32 and out.tolist() == [1.0, -3.0]
    assert hostdata.output_array(np.array([7, -1], np.int32).tobytes(), "i32", (1, 2)).tolist() == [[7, -1]]
    assert hostdata.output_array(np.array([0.5], np.float16).tobytes(), "f16", (1,)).dtype == np.float16


def test_stored_nbytes():
    assert hostdata.stored_nbytes((2, 16, 32), "i4") == 512
    assert hostdata.stored_nbytes((16, 16), "bf16") == 512
    assert hostdata.stored_nbytes((3, 4), "f32") == 48
