"""wmma_gen.numerics against scalar reference definitions written from the format specs
(IEEE 754 binary16/32, bf16 = top half of binary32, OCP 8-bit FP E4M3 FN / E5M2)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from wmma_gen import numerics as nu

SETTINGS = settings(derandomize=True, database=None, max_examples=300, deadline=None)


# ----------------------------------------------------------------- scalar references
def ref_minifloat(code: int, e_bits: int, m_bits: int, bias: int, fn: bool) -> float:
    s = -1.0 if code >> 7 else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if fn and e == (1 << e_bits) - 1 and m == (1 << m_bits) - 1:
        return math.nan
    if not fn and e == (1 << e_bits) - 1:
        return s * math.inf if m == 0 else math.nan
    if e == 0:
        return s * m * 2.0 ** (1 - bias - m_bits)
    return s * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)


E4M3 = dict(e_bits=4, m_bits=3, bias=7, fn=True)
E5M2 = dict(e_bits=5, m_bits=2, bias=15, fn=False)
CODES = np.arange(256, dtype=np.uint8)


def nearest_even(x: float, codes_vals: list[tuple[int, float]]) -> int:
    """Code of the representable value nearest to x, ties to the even code (LSB 0)."""
    best = min(codes_vals, key=lambda cv: (abs(Fraction(cv[1]) - Fraction(x)), cv[0] & 1))
    return best[0]


# ----------------------------------------------------------------- fp8 / bf8
@pytest.mark.parametrize("dec,spec", [(nu.fp8_e4m3_to_f32, E4M3), (nu.bf8_e5m2_to_f32, E5M2)])
def test_minifloat_decode_all_codes(dec, spec):
    got = dec(CODES).astype(np.float64)
    ref = np.array([ref_minifloat(int(c), **spec) for c in CODES])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(got[ok], ref[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(ref[ok]))


def test_minifloat_known_values():
    assert nu.fp8_e4m3_to_f32(np.uint8(0x7E)) == 448.0 == nu.FP8_E4M3_MAX
    assert nu.fp8_e4m3_to_f32(np.uint8(0x08)) == 2.0 ** -6
    assert nu.fp8_e4m3_to_f32(np.uint8(0x01)) == 2.0 ** -9
    assert np.isnan(nu.fp8_e4m3_to_f32(np.uint8(0xFF)))
    assert nu.bf8_e5m2_to_f32(np.uint8(0x7B)) == 57344.0 == nu.BF8_E5M2_MAX
    assert nu.bf8_e5m2_to_f32(np.uint8(0x7C)) == np.inf
    assert nu.bf8_e5m2_to_f32(np.uint8(0x01)) == 2.0 ** -16


@pytest.mark.parametrize("enc,dec,spec", [(nu.f32_to_fp8_e4m3, nu.fp8_e4m3_to_f32, E4M3),
                                          (nu.f32_to_bf8_e5m2, nu.bf8_e5m2_to_f32, E5M2)])
def test_minifloat_round_trip_every_finite_code(enc, dec, spec):
    vals = dec(CODES)
    finite = np.isfinite(vals)
    for sat in (False, True):
        np.testing.assert_array_equal(enc(vals[finite], saturate=sat), CODES[finite])


@pytest.mark.parametrize("enc,dec", [(nu.f32_to_fp8_e4m3, nu.fp8_e4m3_to_f32),
                                     (nu.f32_to_bf8_e5m2, nu.bf8_e5m2_to_f32)])
def test_minifloat_ties_round_to_even_code(enc, dec):
    pos = [(int(c), float(v)) for c, v in zip(CODES[:128], dec(CODES[:128])) if np.isfinite(v)]
    pos.sort(key=lambda cv: cv[1])
    for (c0, v0), (c1, v1) in zip(pos, pos[1:]):
        mid = (v0 + v1) / 2                         # exact in float64
        even = c0 if c0 % 2 == 0 else c1
        assert enc(np.float64(mid)) == even, (hex(c0), hex(c1), mid)
        assert enc(np.float64(-mid)) == even | 0x80
        below = np.nextafter(mid, -np.inf)
        above = np.nextafter(mid, np.inf)
        assert enc(below) == c0 and enc(above) == c1


def test_fp8_saturation_rules():
    # 464 is the tie between 448 (even code 0x7E) and the unrepresentable 480: RNE -> 448
    assert nu.f32_to_fp8_e4m3(np.float32(464.0), saturate=False) == 0x7E
    for x, sat, code in [(465.0, True, 0x7E), (465.0, False, 0x7F), (1e9, True, 0x7E),
                         (np.inf, True, 0x7E), (np.inf, False, 0x7F), (-np.inf, True, 0xFE),
                         (-1e9, False, 0xFF)]:
        assert nu.f32_to_fp8_e4m3(np.float64(x), saturate=sat) == code, (x, sat)
    assert nu.f32_to_fp8_e4m3(np.float32(np.nan), saturate=True) & 0x7F == 0x7F
    # E5M2: 61440 is the tie between 57344 (odd mantissa) and 65536 -> rounds up -> overflow
    assert nu.f32_to_bf8_e5m2(np.float32(61440.0), saturate=False) == 0x7C
    assert nu.f32_to_bf8_e5m2(np.float32(61439.0), saturate=False) == 0x7B
    assert nu.f32_to_bf8_e5m2(np.float32(61440.0), saturate=True) == 0x7B
    assert nu.f32_to_bf8_e5m2(np.float32(-np.inf), saturate=True) == 0xFB
    assert nu.f32_to_bf8_e5m2(np.float32(-np.inf), saturate=False) == 0xFC
    nan = nu.f32_to_bf8_e5m2(np.float32(np.nan))
    assert nan & 0x7C == 0x7C and nan & 0x03


@SETTINGS
@given(st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-500, max_value=500))
def test_fp8_encode_is_nearest_even(x):
    table = [(int(c), float(v)) for c, v in zip(CODES, nu.fp8_e4m3_to_f32(CODES))
             if np.isfinite(v) and not (c == 0x80)]
    ref = nearest_even(x, table) if abs(x) <= 464 else (0x7E | (0x80 if x < 0 else 0))
    got = int(nu.f32_to_fp8_e4m3(np.float32(x), saturate=True))
    if x == 0 or abs(Fraction(x)) < Fraction(2) ** -10:    # rounds to a signed zero
        assert got & 0x7F == 0 and (got >> 7) == int(np.signbit(np.float32(x)))
    else:
        assert got == ref, (x, hex(got), hex(ref))


# ----------------------------------------------------------------- bf16
def test_bf16_round_trip_all_codes():
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f = nu.bf16_bits_to_f32(codes)
    back = nu.f32_to_bf16_bits(f)
    ok = ~np.isnan(f)
    np.testing.assert_array_equal(back[ok], codes[ok])
    assert (back[~ok] & 0x7FC0 == 0x7FC0).all()                       # quiet NaN
    np.testing.assert_array_equal(back[~ok] >> 15, codes[~ok] >> 15)  # sign kept


def test_bf16_ties_and_specials():
    u = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0xFF7F8000, 0x7F800001],
                 dtype=np.uint32)
    got = nu.f32_to_bf16_bits(u.view(np.float32))
    np.testing.assert_array_equal(got, [0x3F80, 0x3F82, 0x3F81, 0x7F80, 0xFF80, 0x7FC0])
    # single rounding from float64: 1 + 2^-8 + 2^-30 is above the tie -> 1 + 2^-7
    # (rounding to f32 first would give the tie 1 + 2^-8 and then 1.0)
    assert nu.f64_to_bf16_bits(np.float64(1 + 2 ** -8 + 2 ** -30)) == 0x3F81
    assert nu.f32_to_bf16_bits(np.float32(1 + 2 ** -8 + 2 ** -30)) == 0x3F80
    assert nu.f64_to_bf16_bits(np.float64(-0.0)) == 0x8000
    assert nu.f64_to_bf16_bits(np.float64(2.0 ** -133)) == 0x0001     # min subnormal


@SETTINGS
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_bf16_encode_is_nearest_even(x):
    u = int(np.float32(x).view(np.uint32))
    lo, hi = u >> 16, (u >> 16) + 1                  # truncation and next code, same sign
    sign = -1.0 if u >> 31 else 1.0
    # IEEE RNE overflow: the code after max finite (0x7F80, inf) stands for 2^128
    vals = [(c, sign * 2.0 ** 128 if c & 0x7FFF == 0x7F80 else
             float(nu.bf16_bits_to_f32(np.uint16(c)))) for c in (lo, hi)]
    got = int(nu.f32_to_bf16_bits(np.float32(x)))
    assert got == nearest_even(x, vals)
    assert int(nu.f64_to_bf16_bits(np.float64(x))) == got


# ----------------------------------------------------------------- f16
def test_f16_round_trip_and_specials():
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f = nu.f16_bits_to_f32(codes)
    ok = ~np.isnan(f)
    np.testing.assert_array_equal(nu.f32_to_f16_bits(f)[ok], codes[ok])
    assert nu.f64_to_f16_bits(np.float64(65520.0)) == 0x7C00          # tie to even -> inf
    assert nu.f64_to_f16_bits(np.float64(65519.0)) == 0x7BFF
    assert nu.f64_to_f16_bits(np.float64(1 + 2 ** -11)) == 0x3C00     # tie -> even
    assert nu.f64_to_f16_bits(np.float64(1 + 3 * 2 ** -11)) == 0x3C02
    assert nu.f64_to_f16_bits(np.float64(1 + 2 ** -11 + 2 ** -40)) == 0x3C01
    assert nu.f64_to_f16_bits(np.float64(2.0 ** -25)) == 0x0000       # tie -> even (zero)
    assert nu.f64_to_f16_bits(np.float64(3 * 2.0 ** -25)) == 0x0002
    assert nu.f64_to_f16_bits(np.float64(-np.nan)) & 0xFE00 == 0xFE00


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-7e4, max_value=7e4))
def test_f16_matches_generic_rne(x):
    r = nu.round_to_precision(np.float64(x), 10, -14)
    got = nu.f64_to_f16_bits(np.float64(x)).view(np.float16).astype(np.float64)
    if abs(r) > 65504:
        assert np.isinf(got) and np.sign(got) == np.sign(x)
    else:
        assert got == r
        # r is a nearest f16 value: no f16 neighbour is strictly closer
        assert abs(r - x) <= abs(float(np.nextafter(np.float16(r), np.float16(np.inf))) - x)
        assert abs(r - x) <= abs(float(np.nextafter(np.float16(r), np.float16(-np.inf))) - x)


# ----------------------------------------------------------------- i4
def test_i4_pack_order_and_sign_extension():
    assert nu.pack_i4(np.array([1, 2])).tolist() == [0x21]
    assert nu.pack_i4(np.array([-1, 7, -8, 0])).tolist() == [0x7F, 0x08]
    assert nu.unpack_i4(np.array([0x7F, 0x08], dtype=np.uint8), signed=True).tolist() == [-1, 7, -8, 0]
    assert nu.unpack_i4(np.array([0x7F, 0x08], dtype=np.uint8), signed=False).tolist() == [15, 7, 8, 0]
    assert nu.sign_extend(np.array([0x80, 0x7F, 0xFF]), 8).tolist() == [-128, 127, -1]
    with pytest.raises(ValueError):
        nu.pack_i4(np.array([1, 2, 3]))
    with pytest.raises(ValueError):
        nu.pack_i4(np.array([16, 0]))


@SETTINGS
@given(st.lists(st.integers(-8, 7), min_size=2, max_size=64).filter(lambda v: len(v) % 2 == 0))
def test_i4_signed_round_trip(values):
    v = np.array(values)
    np.testing.assert_array_equal(nu.unpack_i4(nu.pack_i4(v), signed=True), v)


@SETTINGS
@given(st.lists(st.integers(0, 15), min_size=2, max_size=64).filter(lambda v: len(v) % 2 == 0))
def test_i4_unsigned_round_trip(values):
    v = np.array(values)
    np.testing.assert_array_equal(nu.unpack_i4(nu.pack_i4(v), signed=False), v)
