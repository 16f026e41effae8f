"""`wmma-gen selftest`: compile, run and check one kernel per op and dtype for one arch.

    wmma-gen selftest                     the visible GPU's arch on the GPU; no GPU: the emulator
    wmma-gen selftest --arch gfx1201      another arch (the emulator, unless the GPU is a gfx1201)
    wmma-gen selftest --device hip        through hip-python (exit 2 with the reason when unusable)

Rows: one per (directive, Problem) that an op's OpSpec.selftest(arch) names (wmma_gen/ops/
registry.py; e.g. gemm f16/bf16/i8/+fp8 on 48x40x72, attention f16/bf16 on a tiny GQA problem),
each with the op's default schedule, compiled by compile_op and certified by the op's check on
that very object. An op without a selftest is listed as untested.
Where the numbers come from (`source`):
  emulator   wmma_gen's emulator ran the compiled code objects (no GPU involved)
  hip        a GPU ran them through hip-python
  stub       hip-python over an emulator-backed HIP runtime (tests/hipstub): the emulator ran
             them; such a runtime's event clock is fake, so nothing it says is a time
Timing: on a GPU, one reference GEMM (REFERENCE) is gated on small problems of its own
specialization key and then timed with HipDevice.time (warm-up, >= 1 ms event pairs, median
and min of repeats, operands rotated past L2 + Infinity Cache). Without a GPU no time is printed.
Exit status: 0 every row passed, 1 any FAIL, 2 usage errors (unknown arch, no HIP device, ...).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ..device.select import KINDS
from .options import add_json, arch_name, emit

DEFAULT_ARCH = "gfx1100"       # the emulator's arch when neither a GPU nor --arch names one
REFERENCE = ("f16", 2048, 2048, 2048)   # the timed GEMM (NN, f32 accumulate and output)
SOURCES = {"emulator": "wmma_gen's emulator ran the compiled code objects (no GPU)",
           "hip": "a GPU ran them through hip-python",
           "stub": "hip-python over an emulator-backed HIP runtime: the emulator ran them; its clock is fake"}


def register(sub) -> None:
    from ..ops.registry import NAMES
    p = sub.add_parser("selftest", help="compile, run and check one kernel per op and dtype on this machine "
                                        "(the GPU, else the emulator); exit 1 on any FAIL")
    p.add_argument("--device", default="auto", choices=list(KINDS),
                   help="auto (a visible GPU through hip-python, else the emulator), emu, hip")
    p.add_argument("--arch", type=arch_name, default=None,
                   help=f"target (default: the GPU's; no GPU: {DEFAULT_ARCH})")
    p.add_argument("--op", action="append", choices=list(NAMES), default=None,
                   help="only this op (repeatable; default every op of the registry)")
    add_json(p)
    p.set_defaults(func=run)


@dataclass(frozen=True)
class Row:
    op: str
    dtype: str
    problem: str
    passed: bool
    error: str          # what was compared and the largest error, or the exception text
    source: str         # emulator | hip | stub


def source_of(device) -> str:
    """Where a device's numbers come from (module doc): never "hip" unless it is a GPU."""
    if device.name == "emu":
        return "emulator"
    return "hip" if getattr(device, "source", "") == "hip" else "stub"


def _no_gpu_reason() -> str:
    from ..device.hip import timing_source, visible_devices
    found, reason = visible_devices()
    stand_ins = [f"{arch} ({name})" for arch, name in found if timing_source(name) != "hip"]
    return f"HIP reports only emulator-backed devices: {', '.join(stand_ins)}" if stand_ins else reason


def choose_device(kind: str, arch: str | None):
    """(device, arch, note): what runs the rows, for which arch, and why."""
    from ..device.select import get_device
    from ..errors import ScheduleError
    if kind == "emu":
        return get_device("emu"), arch or DEFAULT_ARCH, "the emulator (--device emu)"
    if kind == "hip":
        dev = get_device("hip")          # DeviceError naming the reason (or the install hint)
        if arch and arch != dev.arch:
            raise ScheduleError("arch", arch, f"{dev.arch}, the arch of the HIP device "
                                              f"(or --device emu to run {arch} on the emulator)")
        what = "a GPU" if source_of(dev) == "hip" else "an emulator-backed HIP runtime, not a GPU"
        return dev, dev.arch, f"HIP device 0: {dev.device_name} ({what})"
    dev = get_device("auto")
    if dev.name == "hip" and arch not in (None, dev.arch):
        return get_device("emu"), arch, f"the emulator (the GPU is {dev.arch}; --arch {arch} was asked)"
    if dev.name == "hip":
        return dev, dev.arch, f"GPU {dev.arch}: {dev.device_name}"
    return dev, arch or DEFAULT_ARCH, f"the emulator: no GPU visible ({_no_gpu_reason()})"


# ---- one row per (op, dtype) -------------------------------------------------------------------
Case = tuple[str, str, str, Callable[[], tuple[bool, str]]]    # (op, dtype, problem, check -> (passed, error))


def spec_rows(op: str, arch: str, device) -> list[Case]:
    """Rows of an op from its OpSpec.selftest: each (directive, Problem) with the default schedule,
    compiled by compile_op and certified by the spec's check."""
    from dataclasses import asdict

    from ..ops import registry
    spec = registry.get(op)
    return [(op, d.dtype, " ".join(f"{k}={v}" for k, v in asdict(p).items()),
             lambda d=d, p=p: _spec_check(spec, d, p, arch, device)) for d, p in spec.selftest(arch)]


def _spec_check(spec, d, p, arch: str, device) -> tuple[bool, str]:
    from ..ops.compile_op import compile_op
    s = spec.default_schedule(d, arch, p)
    r = spec.check(compile_op(spec, d, s, spec.key_of(d, s, p), arch), d, p, device, 0)
    return r.passed, error_text(r)


def error_text(r) -> str:
    """The row's error column from a check result: the relative error when the check measures one
    (normwise GEMM check), else the absolute one, with the tolerance ("exact" for 0)."""
    rel = getattr(r, "max_rel", None)
    err, what = (rel, "max rel") if rel is not None else (r.max_abs, "max abs")
    tol = "exact" if not r.tol else (f"{r.tol:.1e}" if isinstance(r.tol, float) else r.tol)
    where = getattr(r, "worst", None)     # attention: the output's name; gemm: an index (left out)
    where = where if isinstance(where, str) else None
    return f"{what} {err:.1e}{f' in {where}' if where else ''} (tol {tol})"


def cases(op: str):
    """The op's rows from its OpSpec.selftest, or None (untested)."""
    from ..ops import registry
    return (lambda arch, dev: spec_rows(op, arch, dev)) if registry.get(op).selftest is not None else None


def run_rows(ops, arch: str, device) -> list[Row]:
    source = source_of(device)
    rows = []
    for op in ops:
        for name, dtype, problem, check in cases(op)(arch, device):
            try:
                passed, error = check()
            # the selftest reports every row: any failure to compile, launch or compare is that
            # row's FAIL, with its text (as the tuner's objective records a failed trial)
            except Exception as e:  # noqa: BLE001
                passed, error = False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            rows.append(Row(name, dtype, problem, bool(passed), error, source))
    return rows


# ---- the reference GEMM on a GPU ---------------------------------------------------------------
def time_reference(device, arch: str, reference=REFERENCE, protocol=None, cache_bytes: int | None = None) -> dict:
    """Gate the reference GEMM's code object on small problems of its own key, then time that
    very object with HipDevice.time, rotating operand sets past `cache_bytes` (default the
    target's L2 + Infinity Cache). Returns the figures with the protocol and their source."""
    from ..device.hip import TimingProtocol, sets_needed
    from ..device.launcher import Prepared, random_inputs
    from ..ops import registry
    from ..ops.gemm import default_schedule
    from ..ops.gemm.build import compile_gemm
    from ..ops.gemm.check import check_gemm
    from ..ops.gemm.directive import GemmDirective
    from ..ops.gemm.problem import GemmProblem
    from ..targets import get_target
    dtype, m, n, k = reference
    d, big = GemmDirective(dtype), GemmProblem(m, n, k)
    s = default_schedule(d, arch, big)
    kern = compile_gemm(d, s, arch, big)
    out = {"problem": f"gemm {dtype} NN {m}x{n}x{k}", "passed": True, "source": source_of(device)}
    for p in registry.get("gemm").gate_problems(d, s, kern.key):
        r = check_gemm(d, s, arch, p, device, kernel=kern)
        if not r.passed:
            out.update(passed=False, error=f"gate {p.m}x{p.n}x{p.k}: max rel {r.max_rel:.1e} "
                                           f"> tol {r.tol:.1e}")
            return out
    target = get_target(arch)
    cache = target.cache_bytes if cache_bytes is None else cache_bytes
    sig, problem = kern.signature, kern.sizes
    per_set = sum(a.nbytes(problem) for a in sig.buffers)
    arrays = random_inputs(sig, problem)
    sets = []
    try:
        for _ in range(sets_needed(per_set, cache)):
            sets.append(Prepared(kern.compiled, sig, problem, device, arrays))
        t = device.time(kern.compiled, kern.grid, kern.block, [p.values for p in sets],
                        protocol or TimingProtocol(), cache_bytes=cache)
    finally:
        for p in sets:
            p.close()
    flops = 2 * m * n * k
    out.update(source=t.source if t.source == "hip" else "stub", median_ms=t.median_s * 1e3, min_ms=t.min_s * 1e3,
               tflops=flops / t.median_s / 1e12, peak_tflops=target.peak_tflops(dtype), note=t.note,
               protocol=asdict(t.protocol), launches_per_pair=t.launches_per_pair, buffer_sets=t.buffer_sets,
               rotation_bytes=t.rotation_bytes, cache_bytes=t.cache_bytes)
    return out


def timing_text(timing: dict) -> str:
    if not timing.get("passed", False):
        return f"timing  {timing['problem']}: FAIL ({timing.get('error', '')})"
    if timing["source"] != "hip":
        return f"timing  {timing['problem']}: not reported ({timing['note']})"
    p = timing["protocol"]
    return (f"timing  {timing['problem']}: median {timing['median_ms']:.3f} ms = {timing['tflops']:.1f} TFLOP/s "
            f"({timing['tflops'] / timing['peak_tflops']:.0%} of the {timing['peak_tflops']:.1f} peak), "
            f"min {timing['min_ms']:.3f} ms\n        GPU time between hipEvents: {p['warmup']} warm-up launches, "
            f"{timing['launches_per_pair']} launches per event pair x {p['repeats']} repeats, "
            f"{timing['buffer_sets']} operand sets ({timing['rotation_bytes'] >> 20} MiB > "
            f"{timing['cache_bytes'] >> 20} MiB L2 + Infinity Cache)")


# ---- the command -------------------------------------------------------------------------------
def run(args) -> int:
    from ..ops.registry import NAMES
    t0 = time.perf_counter()
    device, arch, where = choose_device(args.device, args.arch)
    ops = [op for op in NAMES if op in (args.op or NAMES)]
    tested = [op for op in ops if cases(op) is not None]
    rows = run_rows(tested, arch, device)
    timing = None
    if source_of(device) == "hip":
        try:
            timing = time_reference(device, arch)
        except Exception as e:  # noqa: BLE001  -- reported as the timing row's FAIL, like a check row
            timing = {"problem": "gemm reference", "passed": False, "source": "hip",
                      "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    failed = sum(not r.passed for r in rows) + (timing is not None and not timing["passed"])
    seconds = time.perf_counter() - t0
    data = {"arch": arch, "device": where, "rows": [asdict(r) for r in rows], "timing": timing,
            "untested_ops": [op for op in ops if op not in tested], "failed": failed,
            "seconds": round(seconds, 2), "source": source_of(device),
            "source_means": SOURCES[source_of(device)]}
    emit(args, data, report(arch, where, source_of(device), rows, timing, data["untested_ops"], failed, seconds))
    return 1 if failed else 0


def report(arch, where, source, rows, timing, untested, failed, seconds) -> str:
    width = max([len(r.problem) for r in rows] + [7])
    lines = [f"wmma-gen selftest: {arch} on {where}",
             f"  {'op':14} {'dtype':6} {'problem':{width}}  {'result':6} {'source':9} error"]
    lines += [f"  {r.op:14} {r.dtype:6} {r.problem:{width}}  {'PASS' if r.passed else 'FAIL':6} {r.source:9} {r.error}"
              for r in rows]
    lines += [f"  {op}: no selftest case yet (not tested)" for op in untested]
    if timing is not None:
        lines.append(timing_text(timing))
    elif source == "stub":
        lines.append("timing  none: no GPU (the HIP device is emulator-backed; its event clock is fake)")
    else:
        lines.append("timing  none: no GPU used, so no kernel time is reported (emulator wall time is not GPU time)")
    lines.append(f"source  {source}: {SOURCES[source]}")
    verdict = "PASS" if not failed else f"FAIL ({failed} of {len(rows) + (timing is not None)} failed)"
    lines.append(f"{verdict}: {len(rows)} kernels checked in {seconds:.1f} s (host wall time)")
    return "\n".join(lines)
