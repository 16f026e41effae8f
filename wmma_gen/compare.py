"""Compare a kernel's output with a numpy reference, for any op.

    compare(out, ref, *, tol, exact, out_dtype) -> Comparison

The reference is exact math (float64, or int64 already wrapped like the accumulator). The
kernel's output went through one more step the math does not have: the cast to `out_dtype`.
So the reference is rounded to `out_dtype` first (RNE, as the hardware converts; numerics.py),
and the output is compared with *that*. An f16 output that correctly overflows to inf then
agrees with a reference that overflows too.

Element agreement:
  * both finite                 error |out - ref|
  * same non-finite value       agree (inf = inf with the same sign, NaN for NaN): the output
                                equals what the math says; |inf - inf| = nan is not an error
  * ref overflowed only through the rounding (exact value finite) and out is finite:
                                error |out - exact| (a result a rounding error short of the
                                overflow threshold is not wrong)
  * anything else               infinite error (NaN where the math has a number, a number
                                where the math has NaN or inf, infinities of opposite sign)

Error measure (normwise, so elements that cancel to ~0 do not blow it up):
    max_abs = max error      max_rel = max_abs / max |ref| over the finite exact reference
PASS iff exact: max_abs == 0; otherwise max_rel <= tol. Tolerances are the caller's (per op
and dtype); this module only measures.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from . import numerics

__all__ = ["Comparison", "compare", "round_to_dtype", "ROUNDERS"]


def _f32(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(np.float32).astype(np.float64)


def _f16(x: np.ndarray) -> np.ndarray:
    return numerics.f64_to_f16_bits(x).view(np.float16).astype(np.float64)


def _bf16(x: np.ndarray) -> np.ndarray:
    return numerics.bf16_bits_to_f32(numerics.f64_to_bf16_bits(x)).astype(np.float64)


def _fp8(x: np.ndarray) -> np.ndarray:
    return numerics.fp8_e4m3_to_f32(numerics.f32_to_fp8_e4m3(x, saturate=False)).astype(np.float64)


def _bf8(x: np.ndarray) -> np.ndarray:
    return numerics.bf8_e5m2_to_f32(numerics.f32_to_bf8_e5m2(x, saturate=False)).astype(np.float64)


def _integer(x: np.ndarray) -> np.ndarray:
    return x  # integer references are exact already (the op wraps them like its accumulator)


ROUNDERS = {"f64": lambda x: x, "f32": _f32, "f16": _f16, "bf16": _bf16, "fp8": _fp8, "bf8": _bf8,
            "i32": _integer, "u32": _integer, "i8": _integer, "u8": _integer}


def round_to_dtype(x, dtype: str) -> np.ndarray:
    """float64 copy of `x` rounded (RNE, overflow to +-inf) to the values `dtype` can hold."""
    if dtype not in ROUNDERS:
        raise ValueError(f"out_dtype={dtype!r} is not allowed: one of {', '.join(ROUNDERS)}")
    return ROUNDERS[dtype](np.asarray(x, dtype=np.float64))


@dataclass(frozen=True)
class Comparison:
    passed: bool
    max_abs: float
    max_rel: float
    tol: float
    worst: tuple = ()    # index of the largest error (() for an empty output)

    def to_dict(self) -> dict:
        return asdict(self)


def element_errors(out: np.ndarray, ref: np.ndarray, out_dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(per-element error, rounded reference) with the agreement rules of the module doc."""
    o = np.asarray(out).astype(np.float64)
    exact = np.asarray(ref).astype(np.float64)
    r = round_to_dtype(exact, out_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(o - r)
        both_finite = np.isfinite(o) & np.isfinite(r)
        same_special = (np.isnan(o) & np.isnan(r)) | (np.isinf(o) & (o == r))
        rounded_over = np.isinf(r) & np.isfinite(exact) & np.isfinite(o)
        err = np.where(both_finite, err, np.inf)
        err = np.where(same_special, 0.0, err)
        err = np.where(rounded_over, np.abs(o - exact), err)
    return np.where(np.isnan(err), np.inf, err), r


def compare(out, ref, *, tol: float, exact: bool, out_dtype: str) -> Comparison:
    """Compare `out` (what the kernel wrote) with `ref` (exact math, unrounded); see module doc."""
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape:
        raise ValueError(f"out.shape={out.shape} is not allowed: it must equal ref.shape={ref.shape}")
    if not (isinstance(tol, (int, float)) and tol >= 0) or isinstance(tol, bool):
        raise ValueError(f"tol={tol!r} is not allowed: a number >= 0")
    err, _ = element_errors(out, ref, out_dtype)
    if not err.size:
        return Comparison(True, 0.0, 0.0, float(tol), ())
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), err.shape))
    max_abs = float(err.max())
    exact_ref = ref.astype(np.float64)
    finite = np.abs(exact_ref[np.isfinite(exact_ref)])
    scale = float(finite.max()) if finite.size else 0.0
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
    passed = max_abs == 0.0 if exact else max_rel <= tol
    return Comparison(bool(passed), max_abs, max_rel, float(tol), worst)
