"""Bit-level dtype helpers: f16, bf16, fp8 (E4M3 FN), bf8 (E5M2), packed i4.

Pure numpy and vectorised: every function takes arrays of any shape and returns an array of
the same shape. Raw encodings travel as unsigned integers (uint16 for f16/bf16, uint8 for
fp8/bf8 and packed i4 bytes); values travel as float32/float64.

Rounding: every narrowing conversion rounds to nearest, ties to even (RNE), the only mode the
WMMA units support ("WMMA supports only round-to-nearest-even rounding for float types",
RDNA3/RDNA3.5 ISA guide section 7.9) and the default mode of the VALU conversions.

Formats
  f16   IEEE binary16 (numpy float16).
  bf16  upper 16 bits of an IEEE binary32: 1 sign, 8 exponent, 7 mantissa bits.
  fp8   OCP 8-bit E4M3 "FN" (the variant gfx12 uses): bias 7, no infinities, NaN is
        S.1111.111 only, max finite 448, min normal 2^-6, min subnormal 2^-9.
  bf8   OCP 8-bit E5M2: bias 15, IEEE-like (inf S.11111.00, NaN S.11111.xx),
        max finite 57344, min normal 2^-14, min subnormal 2^-16.
  i4    4-bit integers packed two per byte, element 2j in the low nibble of byte j
        (same order as the iu4 WMMA operands: K element k sits at bits [4k+3:4k] of the
        32-bit VGPR, RDNA3 ISA section 7.9 / AMD matrix instruction calculator).

Special values
  * NaN inputs give a quiet NaN of the target format with the input's sign (f16/bf16/bf8:
    exponent all ones, top mantissa bit set; fp8: S.1111.111).
  * Overflow (after RNE; a value only overflows when it rounds past max finite):
      f16, bf16, bf8 with saturate=False  -> +-inf;
      fp8 with saturate=False             -> NaN (E4M3 FN has no inf);
      fp8/bf8 with saturate=True          -> +-max finite; +-inf also saturates to
                                             +-max finite; NaN stays NaN.
  * Subnormals of every format are produced and decoded exactly (no flush to zero).
  * -0.0 is kept.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "f16_bits_to_f32", "f32_to_f16_bits", "f64_to_f16_bits",
    "bf16_bits_to_f32", "f32_to_bf16_bits", "f64_to_bf16_bits",
    "fp8_e4m3_to_f32", "f32_to_fp8_e4m3", "bf8_e5m2_to_f32", "f32_to_bf8_e5m2",
    "round_to_precision", "pack_i4", "unpack_i4", "sign_extend",
    "FP8_E4M3_MAX", "BF8_E5M2_MAX", "BF16_QNAN", "F16_QNAN", "F32_QNAN",
]

F32_QNAN = np.uint32(0x7FC00000)
F16_QNAN = np.uint16(0x7E00)
BF16_QNAN = np.uint16(0x7FC0)
FP8_E4M3_MAX = 448.0
BF8_E5M2_MAX = 57344.0


# --------------------------------------------------------------------------- generic RNE
def round_to_precision(x: np.ndarray, man_bits: int, emin: int) -> np.ndarray:
    """Round float64 `x` to a binary format with `man_bits` stored mantissa bits and minimum
    normal exponent `emin`, with round-to-nearest-even and an unbounded exponent range.

    The result is float64 and exactly representable in the target format except that it may
    exceed the format's max finite value (callers decide overflow). inf/NaN pass through.
    The scaling by powers of two is exact, so the only rounding is np.rint (ties to even)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, ex = np.frexp(x)                    # |x| = m * 2**ex, m in [0.5, 1)
        q = np.maximum(ex - 1, emin) - man_bits  # exponent of one unit in the last place
        r = np.ldexp(np.rint(np.ldexp(x, -q)), q)
    return np.where(np.isfinite(x), r, x)


# --------------------------------------------------------------------------- f16
def f16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint16 f16 encodings -> float32 (exact, subnormals kept)."""
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float32)


def f32_to_f16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> f16 encodings, RNE, overflow to +-inf, NaN -> quiet NaN with sign."""
    with np.errstate(invalid="ignore"):
        return f64_to_f16_bits(np.asarray(x, dtype=np.float32).astype(np.float64))


def f64_to_f16_bits(x: np.ndarray) -> np.ndarray:
    """float64 -> f16 encodings with a single RNE rounding (no double rounding via f32)."""
    x = np.asarray(x, dtype=np.float64)
    r = round_to_precision(x, 10, -14)
    with np.errstate(over="ignore", invalid="ignore"):
        bits = r.astype(np.float16).view(np.uint16)   # exact: r is representable or overflows
    sign = (np.signbit(x).astype(np.uint16) << 15).astype(np.uint16)
    return np.where(np.isnan(x), F16_QNAN | sign, bits).astype(np.uint16)


# --------------------------------------------------------------------------- bf16
def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint16 bf16 encodings -> float32 (exact: bf16 is the top half of an f32)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 encodings, RNE on the bits, overflow to +-inf, NaN -> quiet NaN."""
    u = np.array(x, dtype=np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    quiet = (u >> 16) | np.uint32(0x0040)
    return np.where(nan, quiet, rounded).astype(np.uint16)


def f64_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float64 -> bf16 encodings with a single RNE rounding (no double rounding via f32)."""
    x = np.asarray(x, dtype=np.float64)
    r = round_to_precision(x, 7, -126)
    with np.errstate(over="ignore", invalid="ignore"):
        f = r.astype(np.float32)          # exact, or inf when r is past bf16/f32 max
    bits = (np.array(f, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    sign = (np.signbit(x).astype(np.uint16) << 15).astype(np.uint16)
    return np.where(np.isnan(x), BF16_QNAN | sign, bits).astype(np.uint16)


# --------------------------------------------------------------------------- fp8 / bf8
def _decode_minifloat(bits: np.ndarray, exp_bits: int, man_bits: int, bias: int) -> np.ndarray:
    b = np.asarray(bits, dtype=np.uint8).astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e = (b >> man_bits) & ((1 << exp_bits) - 1)
    m = (b & ((1 << man_bits) - 1)).astype(np.float64)
    mag = np.where(e == 0, np.ldexp(m, 1 - bias - man_bits),
                   np.ldexp(m + (1 << man_bits), e - bias - man_bits))
    return sign * mag


def fp8_e4m3_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint8 OCP E4M3 FN encodings -> float32. S.1111.111 is NaN; there is no inf."""
    b = np.asarray(bits, dtype=np.uint8)
    v = _decode_minifloat(b, 4, 3, 7)
    return np.where((b & 0x7F) == 0x7F, np.nan, v).astype(np.float32)


def bf8_e5m2_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint8 OCP E5M2 encodings -> float32 (IEEE-like: inf and NaN at exponent 31)."""
    b = np.asarray(bits, dtype=np.uint8)
    v = _decode_minifloat(b, 5, 2, 15)
    e31 = (b & 0x7C) == 0x7C
    special = np.where((b & 0x03) == 0, np.where(b >> 7, -np.inf, np.inf), np.nan)
    return np.where(e31, special, v).astype(np.float32)


def _encode_minifloat(x, exp_bits, man_bits, bias, max_finite, saturate, has_inf):
    x = np.asarray(x, dtype=np.float64)
    sign = (np.signbit(x).astype(np.uint8) << 7).astype(np.uint8)
    r = np.abs(round_to_precision(x, man_bits, 1 - bias))
    over = r > max_finite                                  # includes inf inputs
    if saturate:
        r = np.where(over, max_finite, r)
    # encode finite magnitudes: normal if r >= 2^(1-bias), else subnormal
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _, ex = np.frexp(r)
        e_field = np.clip(ex - 1 + bias, 0, (1 << exp_bits) - 1)
        normal = r >= np.ldexp(1.0, 1 - bias)
        m_norm = np.ldexp(r, -(ex - 1) + man_bits) - (1 << man_bits)
        m_sub = np.ldexp(r, bias - 1 + man_bits)
        man = np.where(normal, m_norm, m_sub)
        man = np.nan_to_num(man, nan=0.0, posinf=0.0, neginf=0.0).astype(np.int64)
    code = np.where(normal, (e_field << man_bits) | man, man).astype(np.uint8)
    nan_code = np.uint8((1 << 7) - 1) if not has_inf else np.uint8(((1 << exp_bits) - 1) << man_bits | 2)
    inf_code = np.uint8(((1 << exp_bits) - 1) << man_bits)
    if not saturate:
        code = np.where(over, inf_code if has_inf else nan_code, code)
    code = np.where(np.isnan(x), nan_code, code)
    return (code | sign).astype(np.uint8)


def f32_to_fp8_e4m3(x: np.ndarray, saturate: bool = True) -> np.ndarray:
    """float32/float64 -> OCP E4M3 FN encodings, RNE. Overflow: +-448 if saturate, else NaN."""
    return _encode_minifloat(x, 4, 3, 7, FP8_E4M3_MAX, saturate, has_inf=False)


def f32_to_bf8_e5m2(x: np.ndarray, saturate: bool = False) -> np.ndarray:
    """float32/float64 -> OCP E5M2 encodings, RNE. Overflow: +-57344 if saturate, else +-inf."""
    return _encode_minifloat(x, 5, 2, 15, BF8_E5M2_MAX, saturate, has_inf=True)


# --------------------------------------------------------------------------- i4
def sign_extend(v: np.ndarray, bits: int) -> np.ndarray:
    """Interpret the low `bits` bits of each integer as two's complement -> int64."""
    v = np.asarray(v).astype(np.int64) & ((1 << bits) - 1)
    return v - ((v >> (bits - 1)) << bits)


def pack_i4(values: np.ndarray) -> np.ndarray:
    """int array (last axis even, each in [-8, 15]) -> uint8 bytes, two per byte, element 2j
    in the low nibble of byte j. Values are taken modulo 16 (signed or unsigned nibbles)."""
    v = np.asarray(values)
    if v.shape[-1] % 2:
        raise ValueError(f"pack_i4: last axis length {v.shape[-1]} must be even")
    if v.size and (v.min() < -8 or v.max() > 15):
        raise ValueError(f"pack_i4: values must lie in [-8, 15], got [{v.min()}, {v.max()}]")
    n = v.astype(np.int64) & 0xF
    return (n[..., 0::2] | (n[..., 1::2] << 4)).astype(np.uint8)


def unpack_i4(packed: np.ndarray, signed: bool) -> np.ndarray:
    """uint8 bytes -> int64 nibbles (last axis doubles), low nibble first; sign-extended if
    `signed`, zero-extended otherwise."""
    p = np.asarray(packed, dtype=np.uint8).astype(np.int64)
    out = np.stack([p & 0xF, p >> 4], axis=-1).reshape(*p.shape[:-1], p.shape[-1] * 2)
    return sign_extend(out, 4) if signed else out


def e4m3_rows(q) -> np.ndarray:
    """Q as gfx12's fp8-WMMA kernels multiply it (kernels/fp8_wmma.py), float64: per row (last
    axis) amax = max(|q|, 2**-24) and r = 448 / amax in f32, q8 = E4M3(f32(q * r)) (round to
    nearest even), value q8 * f32(amax * f32(1 / 448)). A reference run on these values leaves
    only the kernel's P quantisation (and f32 sums) as the difference."""
    q32 = np.asarray(q, np.float64).astype(np.float32)
    amax = np.maximum(np.abs(q32).max(axis=-1, keepdims=True), np.float32(2.0 ** -24))
    r = np.float32(448.0) / amax
    q8 = fp8_e4m3_to_f32(f32_to_fp8_e4m3((q32 * r).astype(np.float32))).astype(np.float64)
    return q8 * (amax * np.float32(1.0 / 448.0)).astype(np.float32).astype(np.float64)
