"""A numpy model of the exact-GELU epilogue's f32 evaluation (erf.py: the constants, their
source and measured error): the same constants in the kernel's operation order, what
tests/unit/test_gemm_erf.py measures."""
from __future__ import annotations

import numpy as np

from .erf import ERFC_COEFFS, INV_SQRT2


def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def _fma(a, b, c) -> np.ndarray:
    """f32 fma: a*b is exact in float64 for f32 operands, so one rounding of the sum (then to
    f32) is the fused result except in rare double-rounding ties."""
    return _f32(a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64))


def erfc_f32(x: np.ndarray) -> np.ndarray:
    """e = erfc(|x| / sqrt 2) as the kernel computes it from the pre-activation x, step by step
    (every step rounded to f32; fma where the kernel uses math.fma; exp and the reciprocal
    correctly rounded: v_exp_f32 / v_rcp_f32 are within 1 ulp of them):

        t = 1 / fma(|x|, 1/(2 sqrt 2), 1)                 (= 1 / (1 + z/2), z = |x| / sqrt 2)
        e = t * exp(fma(-x, x/2, C0 + t (C1 + ...)))      (-z^2 = -x^2/2: x/2 is exact and the
                                                           fma rounds once; no rounded z is squared)"""
    x = _f32(x)
    t = _f32(1.0 / _fma(np.abs(x), _f32(np.full_like(x, 0.5 * INV_SQRT2)), np.ones_like(x)).astype(np.float64))
    p = np.full_like(x, ERFC_COEFFS[-1], dtype=np.float32)
    for c in ERFC_COEFFS[-2::-1]:
        p = _fma(p, t, np.full_like(x, c, dtype=np.float32))
    arg = _fma(-x, _f32(0.5 * x.astype(np.float64)), p)
    return _f32(t.astype(np.float64) * _f32(np.exp(arg.astype(np.float64))).astype(np.float64))


def gelu_f32(x: np.ndarray) -> np.ndarray:
    """The kernel's exact GELU in f32: x * (x >= 0 ? 1 - e/2 : e/2), e = erfc_f32(x), since
    1 + erf(x / sqrt 2) is 2 - e for x >= 0 and e for x < 0 (no cancellation in the tail)."""
    x = _f32(x)
    half_e = _f32(0.5 * erfc_f32(x).astype(np.float64))
    factor = np.where(x >= 0, _f32(1.0 - half_e.astype(np.float64)), half_e)
    return _f32(x.astype(np.float64) * factor.astype(np.float64))
