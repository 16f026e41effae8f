"""wmma_gen.gemm(): numpy in, numpy out, through a generated WMMA kernel on a Device.

    C = act(alpha * op(A) @ op(B) + beta * C0 + bias)        (per batch)

Arrays are passed *as stored*: layout "NN" means a is (M, K) and b is (K, N); a 'T' means
that operand is given transposed (a: (K, M), b: (N, K)). An optional leading batch axis is
shared by a, b (and c); a 2-D operand is broadcast across the batch. bias of shape (N,) or
(1, N) adds per column, (M, 1) per row (numpy broadcasting). f16 and i8 are inferred from
float16 / int8 arrays; bf16, fp8, bf8 and i4 need dtype= and take float arrays (ints in
[-8, 7], or [0, 15] when unsigned, for i4) that are rounded (RNE) or packed on the host.
"""
from __future__ import annotations

import math
import numbers

from typing import Any

import numpy as np

from ... import hostdata
from ...device.base import Device, Timing
from ...device.launcher import launch
from ...device.select import arch_of, get_device
from ...errors import ScheduleError
from ...knobs import as_schedule
from .build import GemmKernel, compile_gemm
from .defaults import default_schedule, fit_schedule  # noqa: F401  (the API's names; numpy-free there)
from .directive import LAYOUTS, GemmDirective
from .problem import GemmProblem, as_problem
from .schedule import Schedule
from .signature import spec_key


# --- launching a compiled GEMM -------------------------------------------------------------
def run_gemm(kernel: GemmKernel, device: Device, stored: dict[str, np.ndarray],
             problem=None) -> tuple[np.ndarray, Timing]:
    """Run a compiled GEMM on stored operands {"A", "B"[, "C0", "bias"]} (hostdata.encode
    output or views of it, batch-leading) through the one launcher; returns C as a
    (batch, M, N) user-facing array and the Timing. `problem` (a GemmProblem or a mapping of
    its fields) defaults to the kernel's."""
    d = kernel.directive
    p = as_problem(problem or kernel.problem).as_dict()
    outputs, timing = launch(kernel.compiled, kernel.signature, p, device, stored)
    raw = outputs["C"]
    out = hostdata.output_array(raw.tobytes(), d.out_dtype, raw.shape)
    return out, timing


# --- the user API ---------------------------------------------------------------------------
def _as3(x: np.ndarray, field: str) -> np.ndarray:
    if x.ndim not in (2, 3):
        raise ScheduleError(f"{field}.shape", x.shape, "2-D (rows, cols) or 3-D (batch, rows, cols)")
    return x if x.ndim == 3 else x[None]


def _batch(*arrays: np.ndarray) -> int:
    sizes = {x.shape[0] for x in arrays if x.shape[0] != 1}
    if len(sizes) > 1:
        raise ScheduleError("batch", sorted(sizes), "one batch size shared by a, b and c (or 2-D operands)")
    return sizes.pop() if sizes else 1


def _bias(bias: Any, m: int, n: int) -> tuple[str, np.ndarray | None]:
    if bias is None:
        return "", None
    v = np.asarray(bias)
    if v.shape in ((n,), (1, n)):
        return "n", v.reshape(n)
    if v.shape == (m, 1):
        return "m", v.reshape(m)
    raise ScheduleError("bias.shape", v.shape, f"({n},) or (1, {n}) per column, or ({m}, 1) per row")


def _f32_scalar(name: str, v) -> float:
    """`v` rounded to f32 (RNE); a value f32 cannot hold (beyond its range, NaN) is refused."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ScheduleError(name, v, "a real number (int or float)")
    r = float(np.float32(v)) if math.isfinite(float(v)) and abs(float(v)) <= float(np.finfo(np.float32).max) else math.inf
    if not math.isfinite(r):
        raise ScheduleError(name, v, f"a finite value within the f32 range (|x| <= {float(np.finfo(np.float32).max):.6g})")
    return r


def gemm(a, b, *, dtype: str | None = None, acc: str | None = None, out_dtype: str | None = None,
         arch: str | None = None, device: "str | Device | None" = None, schedule: "Schedule | dict | None" = None,
         layout: str = "NN", c=None, alpha: float = 1.0, beta: float = 0.0, bias=None,
         activation: str | None = None, unsigned: bool = False) -> np.ndarray:
    """C = act(alpha * op(a) @ op(b) + beta * c + bias) on a WMMA kernel (see module doc).

    device: "auto" (default: a visible GPU through hip-python, else the emulator), "emu",
    "hip" (alias "cuda") or a Device. arch: None = the GPU's own, or on the emulator
    WMMA_GEN_ARCH (default gfx1100); an arch that differs from the GPU's is refused. schedule: a Schedule (or its dict); default: the exported tuned
    schedule for (arch, dtype, shape) when one exists, else a fitted default.
    alpha, beta: applied in f32 by the epilogue, so they are rounded to the nearest f32 here
    (as BLAS libraries do with f32 compute scalars; 0.1 -> 0.100000001...); the reference
    uses the same rounded values. A lower-level GemmDirective accepts only f32-exact values.
    Returns (M, N), or (batch, M, N) when any operand has a batch axis; dtype float32 for
    f32/bf16 outputs (bf16 values), float16 for f16, int32 for i32."""
    alpha, beta = _f32_scalar("alpha", alpha), _f32_scalar("beta", beta)
    dev = get_device(device)
    arch = arch_of(dev, arch)
    a, b = hostdata._numeric(a, "a"), hostdata._numeric(b, "b")
    if dtype is None:
        dtype = hostdata.infer_dtype(a, b, unsigned=unsigned)
    layout = layout.upper() if isinstance(layout, str) else layout
    if layout not in LAYOUTS:
        raise ScheduleError("layout", layout, f"one of {', '.join(LAYOUTS)}: first letter A, second B; T = stored transposed")
    batched = a.ndim == 3 or b.ndim == 3 or (c is not None and np.ndim(c) == 3)
    a3, b3 = _as3(a, "a"), _as3(b, "b")
    m, ka = a3.shape[1:][::-1] if layout[0] == "T" else a3.shape[1:]
    kb, n = b3.shape[1:][::-1] if layout[1] == "T" else b3.shape[1:]
    if ka != kb:
        raise ScheduleError("b.shape", b.shape, f"K={ka} to match a.shape={a.shape} with layout {layout}")
    c3 = _as3(np.asarray(c), "c") if c is not None and beta != 0.0 else None
    batch = _batch(a3, b3, *(() if c3 is None else (c3,)))
    bias_kind, bias_vec = _bias(bias, m, n)
    p = GemmProblem(int(m), int(n), int(ka), batch)
    d = GemmDirective(dtype, acc=acc or "", layout=layout, out_dtype=out_dtype or "", alpha=float(alpha),
                      beta=float(beta), bias=bias_kind,
                      activation=activation or "", unsigned=bool(unsigned))
    stored = {"A": np.broadcast_to(_stored(a3, dtype, unsigned, "a"), (batch,) + _stored_dims(a3, dtype)),
              "B": np.broadcast_to(_stored(b3, dtype, unsigned, "b"), (batch,) + _stored_dims(b3, dtype))}
    if d.beta != 0.0:
        if c3 is None:
            raise ScheduleError("c", None, f"an (M, N) = ({m}, {n}) array when beta={beta} != 0")
        if c3.shape[1:] != (m, n):
            raise ScheduleError("c.shape", np.shape(c), f"({m}, {n}) or (batch, {m}, {n})")
        stored["C0"] = np.broadcast_to(_stored(c3, d.out_dtype, False, "c"), (batch, m, n))
    if bias_vec is not None:
        stored["bias"] = hostdata.encode(bias_vec, "f32", field="bias")
    schedule = as_schedule(Schedule, schedule)
    s = schedule if schedule is not None else default_schedule(d, arch, p)
    key = spec_key(d, s, p.as_dict(), {x: _strides(stored[x]) for x in ("A", "B")})
    out, _timing = run_gemm(compile_gemm(d, s, arch, p, key=key), dev, stored)
    return out if batched else out[0]


def _stored(x: np.ndarray, dtype: str, unsigned: bool, field: str) -> np.ndarray:
    """x in its stored format: the array itself (a view, strides kept) when its numpy dtype
    already is that format, else hostdata.encode (a conversion, hence a copy)."""
    return hostdata.as_stored(x, dtype, unsigned=unsigned, field=field)


def _stored_dims(x: np.ndarray, dtype: str) -> tuple[int, int]:
    rows, cols = x.shape[1:]
    return rows, cols // 2 if dtype == "i4" else cols


def _strides(x: np.ndarray) -> tuple[int, int]:
    """(batch, row) element strides of a 3-D stored view (0 for broadcast / size-1 dims)."""
    return tuple(st // x.itemsize if n > 1 else 0 for n, st in zip(x.shape[:2], x.strides[:2]))
