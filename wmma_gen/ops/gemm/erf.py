"""erfc in f32 for the exact-GELU epilogue: the constants, and a numpy model of the kernel's
f32 evaluation (same constants, same operation order) that tests measure.

Source: W. H. Press, S. A. Teukolsky, W. T. Vetterling, B. P. Flannery, "Numerical Recipes in
C", 2nd ed. (1992), section 6.2, routine `erfcc` (a Chebyshev fit), p. 221:

    t = 1 / (1 + z/2),   erfc(z) = t * exp(-z^2 + C0 + t (C1 + t (C2 + ... + t C9)))   z >= 0

"fractional error everywhere less than 1.2e-7". Measured here against math.erfc in float64
(tests/unit/test_gemm_erf.py, 2e6 points on z in [0, 10]): max relative error 1.045e-7 (at
z = 4.74), max absolute 8.3e-8; so erf = 1 - erfc is within 8.3e-8 absolute, and
1 + erf(-z) = erfc(z) keeps that *relative* accuracy in GELU's negative tail.
Evaluated in f32 as the kernel does (the model below, same test): erf within 3.6e-7 absolute
(near 0, where the exponent polynomial sums terms of +-1.5 to ~0: a few f32 ulp), GELU within
1.3e-6 relative for |x| <= 6 and 2.2e-6 for |x| <= 10 (the f32 rounding of the exponent
argument -x^2/2 in the tail). f16 rounds at 4.9e-4 relative, bf16 at 3.9e-3.

It needs one reciprocal (v_rcp_f32), nine FMAs and one exp (v_exp_f32): no device library.
"""
from __future__ import annotations

import numpy as np

# C0..C9 of Numerical Recipes' erfcc, the exponent polynomial in t.
ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
               0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)
INV_SQRT2 = 0.7071067811865476


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
