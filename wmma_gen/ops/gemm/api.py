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

from typing import Any

import numpy as np

from .. import hostdata
from ..build import GemmKernel, compile_gemm
from ..device.base import Device, Timing
from ..device.select import get_device
from ..directive import LAYOUTS, GemmDirective
from ..errors import DeviceError, ScheduleError
from ..kernels.gemm import stored_shape
from ..defaults import fitted_default
from ..schedule import Schedule
from ..targets import get_target


# --- schedules ------------------------------------------------------------------------
def fit_schedule(d: GemmDirective, arch: str) -> Schedule:
    """The built-in default (wmma_gen.defaults.LARGE) fitted to the problem; raises
    ScheduleError naming the failing check."""
    return fitted_default(d, get_target(arch))


def default_schedule(d: GemmDirective, arch: str) -> Schedule:
    """schedules_db.lookup (exported tuned schedules) when present, else fit_schedule."""
    try:
        from ..schedules_db import lookup
    except ModuleNotFoundError as e:
        if e.name != "wmma_gen.schedules_db":
            raise
        lookup = None
    found = lookup(arch, d) if lookup is not None else None
    return found if found is not None else fit_schedule(d, arch)


# --- launching a compiled GEMM -------------------------------------------------------------
def run_gemm(kernel: GemmKernel, device: Device, stored: dict[str, np.ndarray]) -> tuple[np.ndarray, Timing]:
    """Run a compiled GEMM on stored operands {"A", "B"[, "C0", "bias"]} (hostdata.encode
    output, batch-leading); returns C as a (batch, M, N) user-facing array and the Timing.
    Kernel arguments follow kernel.source.arg_names, whatever they are."""
    d = kernel.directive
    c_shape = (d.batch, d.m, d.n)
    expect = {"A": hostdata.stored_nbytes(stored_shape(d, "a"), "i8" if d.dtype == "i4" else d.dtype),
              "B": hostdata.stored_nbytes(stored_shape(d, "b"), "i8" if d.dtype == "i4" else d.dtype),
              "C": hostdata.stored_nbytes(c_shape, d.out_dtype),
              "C0": hostdata.stored_nbytes(c_shape, d.out_dtype),
              "bias": 4 * (d.n if d.bias == "n" else d.m),
              # split-K: partial sums (uninitialised) and per-tile arrival counters (zeroed)
              "workspace": 4 * kernel.schedule.split_k * d.batch * d.m * d.n,
              "counters": 4 * d.batch * kernel.source.grid[0]}
    bufs, c_buf = [], None
    try:
        for name in kernel.source.arg_names:
            if name not in expect:
                raise DeviceError(f"kernel arg name={name!r} is not allowed: run_gemm knows {', '.join(expect)}")
            buf = device.alloc(expect[name])
            bufs.append(buf)
            if name == "C":
                c_buf = buf
                device.copy_in(buf, b"\x7f" * expect[name])   # poison: unwritten outputs show up
                continue
            if name in ("workspace", "counters"):
                device.copy_in(buf, (b"\x7f" if name == "workspace" else b"\0") * expect[name])
                continue
            if name not in stored:
                raise DeviceError(f"kernel arg {name!r} has no host data: pass stored[{name!r}]")
            data = np.ascontiguousarray(stored[name])
            if data.nbytes != expect[name]:
                raise DeviceError(f"stored[{name!r}] of {data.nbytes} bytes is not allowed: the kernel's "
                                  f"memref holds {expect[name]} bytes")
            device.copy_in(buf, data)
        if c_buf is None:
            raise DeviceError(f"kernel arg names {kernel.source.arg_names} lack the output 'C'")
        timing = device.launch(kernel.compiled, kernel.source.grid, kernel.source.block, bufs)
        device.sync()
        out = hostdata.output_array(device.copy_out(c_buf), d.out_dtype, c_shape)
    finally:
        for buf in bufs:
            device.free(buf)
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


def gemm(a, b, *, dtype: str | None = None, acc: str | None = None, out_dtype: str | None = None,
         arch: str = "gfx1100", device: "str | Device | None" = None, schedule: "Schedule | dict | None" = None,
         layout: str = "NN", c=None, alpha: float = 1.0, beta: float = 0.0, bias=None,
         activation: str | None = None, unsigned: bool = False) -> np.ndarray:
    """C = act(alpha * op(a) @ op(b) + beta * c + bias) on a WMMA kernel (see module doc).

    device: "auto" (default: a visible GPU through hip-python, else the emulator), "emu",
    "hip" or a Device. schedule: a Schedule (or its dict); default: the exported tuned
    schedule for (arch, dtype, shape) when one exists, else a fitted default.
    Returns (M, N), or (batch, M, N) when any operand has a batch axis; dtype float32 for
    f32/bf16 outputs (bf16 values), float16 for f16, int32 for i32."""
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
    d = GemmDirective(dtype, int(m), int(n), int(ka), acc=acc or "", layout=layout, batch=batch,
                      out_dtype=out_dtype or "", alpha=float(alpha), beta=float(beta), bias=bias_kind,
                      activation=activation or "", unsigned=bool(unsigned))
    stored = {"A": hostdata.encode(np.broadcast_to(a3, (batch,) + a3.shape[1:]), dtype, unsigned=unsigned, field="a"),
              "B": hostdata.encode(np.broadcast_to(b3, (batch,) + b3.shape[1:]), dtype, unsigned=unsigned, field="b")}
    if d.beta != 0.0:
        if c3 is None:
            raise ScheduleError("c", None, f"an (M, N) = ({m}, {n}) array when beta={beta} != 0")
        if c3.shape[1:] != (m, n):
            raise ScheduleError("c.shape", np.shape(c), f"({m}, {n}) or (batch, {m}, {n})")
        stored["C0"] = hostdata.encode(np.broadcast_to(c3, (batch, m, n)), d.out_dtype, field="c")
    if bias_vec is not None:
        stored["bias"] = hostdata.encode(bias_vec, "f32", field="bias")
    if isinstance(schedule, dict):
        schedule = Schedule.from_dict(schedule)
    s = schedule if schedule is not None else default_schedule(d, arch)
    out, _timing = run_gemm(compile_gemm(d, s, arch), get_device(device), stored)
    return out if batched else out[0]
