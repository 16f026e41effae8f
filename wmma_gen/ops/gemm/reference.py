"""numpy reference for wmma_gemm: exactly what a GemmDirective means, on the values the
device sees (inputs already rounded to their dtype, hostdata.decode).

    C[b] = act(alpha * op(A[b]) @ op(B[b]) + beta * C0[b] + bias)

op() undoes the stored transpose (layout 'T'). Floats are computed in float64 and returned
unrounded (the tolerance in check.py covers accumulation and the final rounding to
out_dtype); integers are computed exactly in int64 and wrapped to int32 as the i32
accumulator would (two's complement).

Activations (torch's meanings; the kernel's epilogue approximates them in f32):
  relu(x)      = max(x, 0)
  gelu(x)      = 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)   (torch.nn.GELU())
  gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))         (approximate="tanh")
  silu(x)      = x / (1 + exp(-x))
gelu uses math.erfc (correctly rounded to ~1 ulp in float64; the erfc form keeps relative
accuracy where 1 + erf cancels), element by element: numpy has no erf and scipy is not a
dependency.
"""
from __future__ import annotations

import math

import numpy as np

from .directive import GemmDirective

_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _erfc(x: np.ndarray) -> np.ndarray:
    return _ERFC(np.asarray(x, dtype=np.float64)).astype(np.float64)


ACTIVATION_FNS = {
    "": lambda x: x,
    "relu": lambda x: np.maximum(x, 0.0),
    "gelu": lambda x: 0.5 * x * _erfc(-x / math.sqrt(2.0)),
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x / (1.0 + np.exp(-x)),
}


def logical(d: GemmDirective, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stored-layout operands (batch, rows, cols) -> A (batch, M, K) and B (batch, K, N)."""
    A = np.swapaxes(a, -1, -2) if d.trans_a else a
    B = np.swapaxes(b, -1, -2) if d.trans_b else b
    return A, B


def wrap_i32(x: np.ndarray) -> np.ndarray:
    return ((x.astype(np.int64) + 2**31) % 2**32) - 2**31


def gemm_reference(d: GemmDirective, a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None,
                   bias: np.ndarray | None = None) -> np.ndarray:
    """(batch, M, N) result of directive `d` on exact operand values.

    a, b: stored layout, (batch, rows, cols) or 2-D (one batch); c: (batch, M, N) values of C0
    (used when beta != 0); bias: (N,) for bias='n', (M,) for bias='m'."""
    a3 = a.reshape((1,) * (3 - a.ndim) + a.shape)
    b3 = b.reshape((1,) * (3 - b.ndim) + b.shape)
    A, B = logical(d, a3, b3)
    if d.is_int:
        return wrap_i32(np.matmul(A.astype(np.int64), B.astype(np.int64)))
    r = d.alpha * np.matmul(A.astype(np.float64), B.astype(np.float64))
    if d.beta != 0.0:
        if c is None:
            raise ValueError("c=None is not allowed: beta != 0 needs C0 values")
        r = r + d.beta * np.asarray(c, dtype=np.float64)
    if d.bias:
        if bias is None:
            raise ValueError(f"bias=None is not allowed: the directive has bias={d.bias!r}")
        v = np.asarray(bias, dtype=np.float64)
        r = r + (v[None, None, :] if d.bias == "n" else v[None, :, None])
    return ACTIVATION_FNS[d.activation](r)
