"""Host numpy values <-> the bytes a kernel's operands hold (the stored conventions).

Stored element formats (wmma_gen/kernels/gemm.py memrefs):
  f16   IEEE binary16                 stored as numpy float16
  bf16  top 16 bits of an IEEE f32    stored as uint16 bits
  fp8   OCP E4M3 FN bits              stored as uint8 (gfx12)
  bf8   OCP E5M2 bits                 stored as uint8 (gfx12)
  i8    int8 (uint8 when unsigned)
  i4    two per byte along the stored contiguous (last) axis, low nibble = even index
  f32 / i32  4 bytes, little endian

`encode` rounds host values to the format (RNE, numerics.py) and checks integer ranges;
`decode` gives back the exact values the device sees (float64 / int64), which is what the
reference computes with; `output_array` turns C's bytes into the user-facing numpy array.
"""
from __future__ import annotations

import numpy as np

from . import numerics as nx
from .errors import ScheduleError

FLOAT_IN = ("f16", "bf16", "fp8", "bf8")
INT_IN = ("i8", "i4")
ELEM_BYTES = {"f16": 2, "bf16": 2, "fp8": 1, "bf8": 1, "i8": 1, "f32": 4, "i32": 4}
# numpy dtype a returned C array has (numpy has no bf16: bf16 values come back as float32)
INT_RANGE = {("i8", False): (-128, 127), ("i8", True): (0, 255),
             ("i4", False): (-8, 7), ("i4", True): (0, 15)}


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


def encode(x, dtype: str, *, unsigned: bool = False, field: str = "x") -> np.ndarray:
    """Host values -> the stored array (see module doc). i4 halves the last axis."""
    a = _numeric(x, field)
    if dtype in INT_IN:
        if not np.issubdtype(a.dtype, np.integer):
            raise ScheduleError(f"{field}.dtype", str(a.dtype), f"an integer array for dtype={dtype}")
        lo, hi = INT_RANGE[(dtype, unsigned)]
        if a.size and (a.min() < lo or a.max() > hi):
            raise ScheduleError(f"{field} values", (int(a.min()), int(a.max())),
                                f"[{lo}, {hi}] for {'unsigned ' if unsigned else ''}{dtype}")
        if dtype == "i8":
            return a.astype(np.uint8 if unsigned else np.int8)
        if a.ndim == 0 or a.shape[-1] % 2:
            raise ScheduleError(f"{field}.shape", a.shape, "an even last (contiguous) axis for packed i4")
        return nx.pack_i4(a)
    x64 = a.astype(np.float64)
    if dtype == "f16":
        return a.copy() if a.dtype == np.float16 else nx.f64_to_f16_bits(x64).view(np.float16)
    if dtype == "bf16":
        return nx.f64_to_bf16_bits(x64)
    if dtype == "fp8":
        return nx.f32_to_fp8_e4m3(x64)       # saturating: |x| > 448 -> +-448
    if dtype == "bf8":
        return nx.f32_to_bf8_e5m2(x64)       # non-saturating: overflow -> +-inf
    if dtype == "f32":
        return a.astype(np.float32)
    if dtype == "i32":
        return a.astype(np.int32)
    raise ScheduleError("dtype", dtype, f"one of {', '.join(FLOAT_IN + INT_IN)}, f32, i32")


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
