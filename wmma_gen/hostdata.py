"""Host numpy values <-> the bytes a kernel's operands hold (the stored conventions).

Stored element formats (wmma_gen/kernels/gemm.py memrefs):
  f16   IEEE binary16                 stored as numpy float16
  bf16  top 16 bits of an IEEE f32    stored as uint16 bits
  fp8   OCP E4M3 FN bits              stored as uint8 (gfx12)
  bf8   OCP E5M2 bits                 stored as uint8 (gfx12)
  i8    int8 (uint8 when unsigned)
  i4    two per byte along the stored contiguous (last) axis, low nibble = even index
  f32 / i32  4 bytes, little endian

`encode` rounds host values to the format (RNE, numerics.py) and checks ranges: an integer
outside the format's range (a negative value with unsigned=True, say) and a finite float that
the conversion would turn into inf or saturate (1e6 to f16, 500 to fp8) are refused with a
ScheduleError naming the argument and the count of such values -- never wrapped, saturated or
made inf silently (issue 24; np.clip the input first when saturation is what you want).
NaN and +-inf inputs are kept (NaN/inf of the format; fp8 has no inf: +-inf becomes +-448).
`as_stored` is encode without a copy when the array already is the stored format.
`decode` gives back the exact values the device sees (float64 / int64), which is what the
reference computes with; `output_array` turns C's bytes into the user-facing numpy array.
`f32_scalar` checks a scalar kernel argument computed in f32 (alpha, beta, attention scale).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import numerics as nx
from .errors import ScheduleError

FLOAT_IN = ("f16", "bf16", "fp8", "bf8")
INT_IN = ("i8", "i4")
ELEM_BYTES = {"f16": 2, "bf16": 2, "fp8": 1, "bf8": 1, "i8": 1, "f32": 4, "i32": 4}
# numpy dtype a returned C array has (numpy has no bf16: bf16 values come back as float32)
INT_RANGE = {("i8", False): (-128, 127), ("i8", True): (0, 255),
             ("i4", False): (-8, 7), ("i4", True): (0, 15), ("i32", False): (-2**31, 2**31 - 1)}
# float formats: (stored mantissa bits, min normal exponent, max finite) for the overflow check
FLOAT_FORMAT = {"f16": (10, -14, 65504.0), "bf16": (7, -126, float.fromhex("0x1.fep127")),
                "fp8": (3, -6, nx.FP8_E4M3_MAX), "bf8": (2, -14, nx.BF8_E5M2_MAX),
                "f32": (23, -126, float.fromhex("0x1.fffffep127"))}
# numpy dtypes whose bytes already are a stored format (as_stored passes them through)
AS_STORED = {"f16": np.float16, "i8": np.int8, "f32": np.float32}


def infer_dtype(*arrays: np.ndarray, unsigned: bool = False) -> str:
    """The input dtype name implied by numpy dtypes: float16 -> f16, int8 -> i8 (uint8 -> i8
    when unsigned). Other formats need an explicit dtype=."""
    kinds = {np.dtype(a.dtype) for a in arrays}
    if kinds == {np.dtype(np.float16)}:
        return "f16"
    if kinds == {np.dtype(np.int8)} or (unsigned and kinds <= {np.dtype(np.uint8), np.dtype(np.int8)}):
        return "i8"
    got = ", ".join(sorted(str(k) for k in kinds))
    raise ScheduleError("dtype", None, f"an explicit dtype= (one of {', '.join(FLOAT_IN + INT_IN)}) for input "
                        f"arrays of numpy dtype {got}; only float16 (f16) and int8 (i8) are inferred")


def _numeric(x, field: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise ScheduleError(f"{field}.dtype", str(a.dtype), "a real floating or integer numpy dtype")
    return a


def _refused(field: str, value, allowed: str, message: str) -> ScheduleError:
    """A ScheduleError (field, value, allowed kept for callers) with a message written out."""
    e = ScheduleError(field, value, allowed)
    e.args = (message,)
    return e


def _check_int_range(a: np.ndarray, dtype: str, unsigned: bool, field: str) -> None:
    lo, hi = INT_RANGE[(dtype, unsigned)]
    if not a.size:
        return
    amin, amax = int(a.min()), int(a.max())
    if amin >= lo and amax <= hi:
        return
    bad = int(np.count_nonzero((a < lo) | (a > hi)))
    kind = f"{'unsigned ' if unsigned else ''}{dtype}"
    hint = " (unsigned=True: negative values are not allowed)" if unsigned and amin < 0 else ""
    raise _refused(f"{field} values", (amin, amax), f"[{lo}, {hi}] for {kind}",
                   f"{field}: {bad} of {a.size} values lie outside [{lo}, {hi}], the range of {kind}{hint} "
                   f"(min {amin}, max {amax})")


def _check_float_range(x64: np.ndarray, dtype: str, field: str) -> None:
    """Refuse finite values that round (RNE) past the format's max finite value."""
    man, emin, top = FLOAT_FORMAT[dtype]
    if not x64.size:
        return
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(x64)
        over = finite & (np.abs(nx.round_to_precision(x64, man, emin)) > top)
    n = int(np.count_nonzero(over))
    if n:
        worst = float(np.abs(x64[over]).max())
        fate = "saturate to +-448" if dtype == "fp8" else "become +-inf"
        raise _refused(f"{field} values", f"{n} beyond +-{top:g}", f"|x| <= {top:g} for {dtype}",
                       f"{field}: {n} of {x64.size} finite values are beyond the range of {dtype} "
                       f"(|x| <= {top:g}; largest |x| {worst:g}) and would {fate}: refused; scale the "
                       f"input or np.clip it to +-{top:g} if saturation is meant")


def encode(x, dtype: str, *, unsigned: bool = False, field: str = "x") -> np.ndarray:
    """Host values -> the stored array (see module doc). i4 halves the last axis.

    Refused with a ScheduleError naming `field` and the count of offending values: integers
    outside the format's range (negative values with unsigned=True), and finite floats that
    round past the format's max finite value (f16 65504, bf16/f32 ~3.4e38, fp8 448, bf8
    57344) -- converting them would give inf (or saturate, fp8). NaN and +-inf are kept."""
    a = _numeric(x, field)
    if dtype in INT_IN:
        if not np.issubdtype(a.dtype, np.integer):
            raise ScheduleError(f"{field}.dtype", str(a.dtype), f"an integer array for dtype={dtype}")
        _check_int_range(a, dtype, unsigned, field)
        if dtype == "i8":
            return a.astype(np.uint8 if unsigned else np.int8)
        if a.ndim == 0 or a.shape[-1] % 2:
            raise ScheduleError(f"{field}.shape", a.shape, "an even last (contiguous) axis for packed i4")
        return nx.pack_i4(a)
    if dtype == "f16" and a.dtype == np.float16:
        return a.copy()
    if dtype == "f32" and a.dtype == np.float32:
        return a.copy()
    x64 = a.astype(np.float64)
    if dtype in FLOAT_FORMAT:
        _check_float_range(x64, dtype, field)
    if dtype == "f16":
        return nx.f64_to_f16_bits(x64).view(np.float16)
    if dtype == "bf16":
        return nx.f64_to_bf16_bits(x64)
    if dtype == "fp8":
        return nx.f32_to_fp8_e4m3(x64)       # finite values are in range here; +-inf -> +-448
    if dtype == "bf8":
        return nx.f32_to_bf8_e5m2(x64)
    if dtype == "f32":
        return x64.astype(np.float32)         # exact or RNE; no overflow (checked above)
    if dtype == "i32":
        if np.issubdtype(a.dtype, np.floating):
            if not np.isfinite(a).all():
                raise ScheduleError(f"{field} values", "NaN or inf", "finite values for i32")
            a = np.trunc(a)                   # toward zero, as astype does
        _check_int_range(a, "i32", False, field)
        return a.astype(np.int32)
    raise ScheduleError("dtype", dtype, f"one of {', '.join(FLOAT_IN + INT_IN)}, f32, i32")


def as_stored(x, dtype: str, *, unsigned: bool = False, field: str = "x") -> np.ndarray:
    """`x` in its stored format: `x` itself (a view: strides kept, no copy) when its numpy
    dtype already is that format (float16 for f16, int8 for i8, float32 for f32; uint8 for
    unsigned i8), else encode(...) (a conversion, hence a copy). An int8 array with
    unsigned=True passes through only without negative values (the device would read -1 as
    255): a negative value is refused naming `field` and the count."""
    a = _numeric(x, field)
    if dtype == "i8" and unsigned and a.dtype in (np.int8, np.uint8):
        if a.dtype == np.int8:
            _check_int_range(a, "i8", True, field)
        return a
    if dtype in AS_STORED and a.dtype == AS_STORED[dtype]:     # (dtype == None is true for float64)
        return a
    return encode(a, dtype, unsigned=unsigned, field=field)


F32_MAX = float.fromhex("0x1.fffffep127")


def f32_scalar(name: str, value, *, nonzero: bool = False) -> float:
    """A scalar kernel argument computed in f32 (GEMM alpha/beta, attention scale): `value`
    rounded to the nearest f32 (RNE), as a Python float. Refused with a ScheduleError naming
    `name` and the value: bools and non-numbers, NaN, +-inf, magnitudes that round past the
    f32 range (|x| > 3.4028235e38: 1e39 is refused, not turned into inf), and with
    nonzero=True zero and values that round to zero in f32 (|x| < 2**-150). Negative values
    are allowed (a negative attention scale is legal math)."""
    what = "a finite non-zero real number" if nonzero else "a finite real number"
    allowed = f"{what} within the f32 range (|x| <= {F32_MAX:.8g}{', and not rounding to 0' if nonzero else ''})"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ScheduleError(name, value, allowed)
    try:
        v = float(value)
    except (OverflowError, ValueError):      # an int too large for a float
        raise ScheduleError(name, value, allowed) from None
    if not math.isfinite(v) or abs(v) > F32_MAX:
        raise ScheduleError(name, value, allowed)
    with np.errstate(over="ignore", under="ignore"):
        r = float(np.float32(v))
    if not math.isfinite(r) or (nonzero and r == 0.0):
        raise ScheduleError(name, value, allowed)
    return r


def decode(stored: np.ndarray, dtype: str, *, unsigned: bool = False) -> np.ndarray:
    """Stored array -> exact values: float64 for float formats, int64 for integers."""
    s = np.asarray(stored)
    if dtype == "f16":
        return s.view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return nx.bf16_bits_to_f32(s.view(np.uint16)).astype(np.float64)
    if dtype == "fp8":
        return nx.fp8_e4m3_to_f32(s).astype(np.float64)
    if dtype == "bf8":
        return nx.bf8_e5m2_to_f32(s).astype(np.float64)
    if dtype == "i8":
        return s.view(np.uint8 if unsigned else np.int8).astype(np.int64)
    if dtype == "i4":
        return nx.unpack_i4(s, signed=not unsigned)
    if dtype == "f32":
        return s.view(np.float32).astype(np.float64)
    if dtype == "i32":
        return s.view(np.int32).astype(np.int64)
    raise ScheduleError("dtype", dtype, f"one of {', '.join(FLOAT_IN + INT_IN)}, f32, i32")


def rounded(x, dtype: str, *, unsigned: bool = False) -> np.ndarray:
    """The values the device sees for host values `x` (encode then decode)."""
    return decode(encode(x, dtype, unsigned=unsigned), dtype, unsigned=unsigned)


def stored_nbytes(shape: tuple[int, ...], dtype: str) -> int:
    """Bytes of a stored array of logical element shape `shape` (i4: two per byte)."""
    n = int(np.prod(shape, dtype=np.int64))
    return n // 2 if dtype == "i4" else n * ELEM_BYTES[dtype]


def output_array(raw: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """C's bytes (out_dtype `dtype`) -> the user-facing array (bf16 comes back as float32)."""
    if dtype == "bf16":
        bits = np.frombuffer(raw, dtype=np.uint16)
        return nx.bf16_bits_to_f32(bits).reshape(shape)
    storage = {"f32": np.float32, "f16": np.float16, "i32": np.int32}
    if dtype not in storage:
        raise ScheduleError("out_dtype", dtype, "one of f32, f16, bf16, i32")
    return np.frombuffer(raw, dtype=storage[dtype]).reshape(shape).copy()


def user_array(stored: np.ndarray, dtype: str) -> np.ndarray:
    """A kernel's stored f16 / bf16 output as the user gets it: float16 as is, bf16 bits ->
    float32 values (numpy has no bf16)."""
    if dtype == "bf16":
        return output_array(stored.tobytes(), "bf16", stored.shape)
    return stored
