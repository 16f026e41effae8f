"""The exact-GELU epilogue's erf (ops/gemm/erf.py, Numerical Recipes' erfcc): its constants
reproduce the published error bound, the f32 evaluation the kernel performs stays far below
f16/bf16 rounding, and the activation list agrees everywhere it is mirrored."""
import math

import numpy as np

from wmma_gen.ops.gemm import epilogue
from wmma_gen.ops.gemm.directive import ACTIVATIONS
from wmma_gen.ops.gemm.erf import ERFC_COEFFS
from wmma_gen.ops.gemm.erf_f32 import erfc_f32, gelu_f32
from wmma_gen.ops.gemm.reference import ACTIVATION_FNS

_ERFC = np.frompyfunc(math.erfc, 1, 1)


def erfc(x):
    return _ERFC(np.asarray(x, dtype=np.float64)).astype(np.float64)


def test_constants_meet_the_published_bound_in_float64():
    """NR 2nd ed. sec. 6.2: fractional error of erfcc < 1.2e-7 everywhere (measured 1.045e-7)."""
    z = np.linspace(0.0, 10.0, 2_000_001)
    t = 1.0 / (1.0 + 0.5 * z)
    p = np.full_like(z, ERFC_COEFFS[-1])
    for c in ERFC_COEFFS[-2::-1]:
        p = p * t + c
    approx, exact = t * np.exp(-z * z + p), erfc(z)
    assert (np.abs(approx - exact) / exact).max() < 1.2e-7
    assert np.abs(approx - exact).max() < 1e-7          # = the absolute error of erf = 1 - erfc


def test_f32_evaluation_error():
    """The kernel's op order in f32 (erf_f32.erfc_f32 / gelu_f32), dense over the range where GELU
    output is not yet x or 0 in f32 (and a bit beyond)."""
    x = np.linspace(-14.0, 14.0, 2_000_001).astype(np.float32).astype(np.float64)
    e = erfc_f32(x).astype(np.float64)
    exact_e = erfc(np.abs(x) / math.sqrt(2.0))
    assert np.abs(e - exact_e).max() < 4e-7                       # erf, absolute (measured 3.6e-7)
    g = gelu_f32(x).astype(np.float64)
    exact_g = 0.5 * x * erfc(-x / math.sqrt(2.0))
    rel = np.abs(g - exact_g) / np.maximum(np.abs(exact_g), 1e-300)
    assert rel[np.abs(x) <= 6].max() < 1.5e-6                      # measured 1.3e-6
    assert rel[(np.abs(x) <= 10) & (exact_g != 0)].max() < 3e-6    # measured 2.2e-6 (tail)
    assert rel[np.abs(x) <= 10].max() < 2.0 ** -11 / 100           # vs f16's half ulp, 100x margin
    assert np.array_equal(g[x >= 9], x[x >= 9]) and np.abs(g[x <= -13]).max() < 1e-37


def test_activation_lists_agree():
    assert set(epilogue._ACTIVATIONS) == set(ACTIVATIONS) == set(ACTIVATION_FNS) - {""}
    assert ACTIVATIONS == ("relu", "gelu", "gelu_tanh", "silu")


def test_reference_means_what_torch_means():
    x = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0])
    erf_gelu = np.array([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    tanh_gelu = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(ACTIVATION_FNS["gelu"](x), erf_gelu, rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(ACTIVATION_FNS["gelu_tanh"](x), tanh_gelu, rtol=1e-15)
    assert abs(ACTIVATION_FNS["gelu"](np.array([-2.7]))[0] - ACTIVATION_FNS["gelu_tanh"](np.array([-2.7]))[0]) > 4e-4
