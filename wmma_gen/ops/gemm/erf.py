"""erfc in f32 for the exact-GELU epilogue: the constants (a numpy model of the kernel's f32
evaluation, same constants and operation order, is erf_f32.py: the builder needs no numpy).

Source: W. H. Press, S. A. Teukolsky, W. T. Vetterling, B. P. Flannery, "Numerical Recipes in
C", 2nd ed. (1992), section 6.2, routine `erfcc` (a Chebyshev fit), p. 221:

    t = 1 / (1 + z/2),   erfc(z) = t * exp(-z^2 + C0 + t (C1 + t (C2 + ... + t C9)))   z >= 0

"fractional error everywhere less than 1.2e-7". Measured here against math.erfc in float64
(tests/unit/test_gemm_erf.py, 2e6 points on z in [0, 10]): max relative error 1.045e-7 (at
z = 4.74), max absolute 8.3e-8; so erf = 1 - erfc is within 8.3e-8 absolute, and
1 + erf(-z) = erfc(z) keeps that *relative* accuracy in GELU's negative tail.
Evaluated in f32 as the kernel does (erf_f32.py, same test): erf within 3.6e-7 absolute
(near 0, where the exponent polynomial sums terms of +-1.5 to ~0: a few f32 ulp), GELU within
1.3e-6 relative for |x| <= 6 and 2.2e-6 for |x| <= 10 (the f32 rounding of the exponent
argument -x^2/2 in the tail). f16 rounds at 4.9e-4 relative, bf16 at 3.9e-3.

It needs one reciprocal (v_rcp_f32), nine FMAs and one exp (v_exp_f32): no device library.
"""
from __future__ import annotations

# C0..C9 of Numerical Recipes' erfcc, the exponent polynomial in t.
ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
               0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)
INV_SQRT2 = 0.7071067811865476
