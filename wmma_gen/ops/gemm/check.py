"""The correctness gate: run a compiled GEMM on seeded random inputs, compare with numpy.

    check_gemm(directive, schedule, arch, problem, device, seed=0) -> CheckResult

Used by `wmma-gen check` and by the autotuner (a schedule that fails is never timed).

Inputs: floats uniform in [-1, 1] rounded to the dtype; integers uniform over the whole
dtype range ([-128, 127] i8, [-8, 7] i4; [0, 255] / [0, 15] unsigned); C0 uniform in
[-1, 1] rounded to out_dtype; bias uniform in [-1, 1] (f32). The reference
(ops/reference.py) runs on exactly the values the device sees, so input rounding is not
part of the error: what remains is the kernel's accumulation and its final cast.

Error measure (normwise, so elements that cancel to ~0 do not blow it up):
    max_abs = max |out - ref|        max_rel = max_abs / max |ref|
PASS iff every output is finite where the reference is, and max_rel <= tol (integers:
max_abs == 0).

Tolerances (K = reduction depth, eps(t) = machine epsilon 2^-(mantissa bits) of type t:
f16 2^-10, bf16 2^-7, f32 2^-23):

  dtype / acc        tol                          why
  i8, i4 / i32       0 (exact)                    integer products and sums are exact in i32
                                                  (the reference wraps to i32 like the hardware)
  f16, bf16 / f32    sqrt(K)*eps(in) + eps(out)   the usual sqrt(K) growth of rounding errors,
                                                  scaled by the input type's eps: loose next to
                                                  f32's 2^-24 (the emulator shows ~1e-7), so any
                                                  internal adder precision or summation order a
                                                  real WMMA unit uses passes, while layout,
                                                  indexing and lost-tile bugs (errors ~0.1..1
                                                  of max|ref|) fail. eps(out) covers the final
                                                  cast (f16 / bf16 outputs).
  fp8, bf8 / f32     sqrt(K)*2^-10 + eps(out)     products of 8-bit floats are exact in f32,
                                                  so accumulation is no worse than f16's; their
                                                  own eps (2^-3, 2^-2) would accept garbage.
  f16/f16, bf16/bf16 2*sqrt(K)*eps(acc) + eps(out) looser: the accumulator itself is rounded to
                                                  16 bits at least once per WMMA (the emulator:
                                                  once per 16-deep step; hardware may round after
                                                  every product). Simulated normwise error is
                                                  0.15*sqrt(K)*u per WMMA rounding and <= 0.75*
                                                  sqrt(K)*u per product rounding (u = eps/2), so
                                                  2*sqrt(K)*eps = 4*sqrt(K)*u leaves >= 5x margin.
  every float tol is capped at 0.5, so an all-zero or garbage output always fails. bf16
  accumulation over long K (>= ~1024) is inherently coarse: there the gate catches only
  gross errors.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ... import hostdata
from ...device.select import get_device
from ...errors import ScheduleError
from .api import run_gemm
from .build import GemmKernel, compile_gemm
from .directive import GemmDirective
from .reference import gemm_reference
from .problem import as_problem
from .schedule import Schedule
from .signature import spec_key, stored_shape

EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "fp8": 2.0 ** -3, "bf8": 2.0 ** -2}
TOL_CAP = 0.5


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    max_abs: float
    max_rel: float
    tol: float
    source: str          # "emulator" | "hip": where the kernel ran
    seconds: float       # the launch's Timing.seconds (emulator wall time or GPU time)
    worst: tuple = ()    # (batch, row, col) of the largest error
    k: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def tolerance(d: GemmDirective, problem) -> float:
    """The max_rel a correct kernel stays within on `problem` (a GemmProblem; see the table in
    the module doc)."""
    if d.is_int:
        return 0.0
    root = math.sqrt(as_problem(problem).k)
    if d.acc in ("f16", "bf16"):
        # + the final cast: an f16 accumulator may be written out as bf16
        tol = 2.0 * root * EPS[d.acc] + EPS[d.out_dtype]
    else:
        tol = root * min(EPS[d.dtype], EPS["f16"]) + EPS[d.out_dtype]
    return min(tol, TOL_CAP)


def random_operands(d: GemmDirective, problem, seed: int = 0) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(stored arrays for run_gemm, exact values for gemm_reference) of `problem`'s sizes, seeded."""
    p = as_problem(problem)
    rng = np.random.default_rng(seed)
    stored, values = {}, {}
    for name in ("a", "b"):
        batch, rows, cols = stored_shape(d, name, p.as_dict())
        shape = (batch, rows, cols * 2 if d.dtype == "i4" else cols)
        if d.is_int:
            lo, hi = hostdata.INT_RANGE[(d.dtype, d.unsigned)]
            x = rng.integers(lo, hi + 1, size=shape)
        else:
            x = rng.uniform(-1.0, 1.0, size=shape)
        stored[name.upper()] = hostdata.encode(x, d.dtype, unsigned=d.unsigned, field=name)
        values[name] = hostdata.decode(stored[name.upper()], d.dtype, unsigned=d.unsigned)
    if d.beta:
        stored["C0"] = hostdata.encode(rng.uniform(-1.0, 1.0, size=(p.batch, p.m, p.n)), d.out_dtype, field="c")
        values["c"] = hostdata.decode(stored["C0"], d.out_dtype)
    if d.bias:
        stored["bias"] = hostdata.encode(rng.uniform(-1.0, 1.0, size=p.n if d.bias == "n" else p.m), "f32")
        values["bias"] = stored["bias"].astype(np.float64)
    return stored, values


def compare(d: GemmDirective, out: np.ndarray, ref: np.ndarray, problem) -> tuple[bool, float, float, float, tuple]:
    """(passed, max_abs, max_rel, tol, worst index) of `out` against `ref`."""
    from ...compare import compare as compare_arrays  # shared, op-agnostic (wmma_gen/compare.py)
    c = compare_arrays(out, ref, tol=tolerance(d, problem), exact=d.is_int, out_dtype=d.out_dtype)
    return c.passed, c.max_abs, c.max_rel, c.tol, c.worst


def check_gemm(directive: GemmDirective, schedule: Schedule, arch: str, problem, device=None, seed: int = 0,
               *, kernel: GemmKernel | None = None) -> CheckResult:
    """Compile (or reuse `kernel`), run on seeded random inputs of `problem` (a GemmProblem) on
    `device` ("auto", "emu", "hip", a Device, or None = auto) and compare with the numpy
    reference. Compile and device errors (ScheduleError, CompileError, EmulatorFault,
    DeviceError) propagate."""
    d = directive
    p = as_problem(problem)
    sizes = p.as_dict()
    k = kernel if kernel is not None else compile_gemm(d, schedule, arch, p)
    if kernel is not None and spec_key(d, k.schedule, sizes) != k.key:
        raise ScheduleError("kernel", str(k.key), f"a code object whose specialization key matches "
                            f"{p.m}x{p.n}x{p.k} ({spec_key(d, k.schedule, sizes)})")
    dev = get_device(device)
    stored, values = random_operands(d, p, seed)
    out, timing = run_gemm(k, dev, stored, problem=sizes)
    ref = gemm_reference(d, values["a"], values["b"], values.get("c"), values.get("bias"))
    passed, max_abs, max_rel, tol, worst = compare(d, out, ref, p)
    return CheckResult(bool(passed), max_abs, max_rel, tol, timing.source, timing.seconds, worst, p.k)
