"""The tuner's objective (STYLE rule 7): suggest -> Schedule -> validate -> compile -> gate -> value.

    s = suggest_schedule(trial, domains, SPACE, Schedule)   # space.py, from ops/gemm/schedule.SPACE
    s.problems(d, t)        non-empty -> TrialPruned(reason)     (before any compile)
    compile_gemm(d, s)      CompileError / builder refusal / spills -> TrialPruned(reason)
    check_gemm(small d, s)  wrong vs numpy -> TrialPruned(reason) (never exported)
    value = TFLOP/s: median hipEvent time on a GPU (source=hip), else the model (source=model)

Every outcome is recorded in the trial's user attrs; an unexpected error is recorded as
`error` and re-raised so Optuna marks the trial FAIL with its text (never an `inf`).
The gate runs the very code object that is timed and exported (sizes are kernel arguments):
on small problems of one or two macro tiles per axis with the same specialization key
(signature.gate_problems) -- the emulator is slow, and one tile pair already exercises
every instruction the schedule emits.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import optuna

import wmma_gen
from wmma_gen.errors import CompileError, DeviceError, EmulatorFault, ScheduleError
from wmma_gen.ops.gemm import build
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.ops.gemm.signature import gate_problems
from wmma_gen.targets import Target, get_target

from .space import Domains, suggest_schedule

WARMUP, REPEATS = 3, 10  # GPU timing: launches discarded, launches whose median is kept


def gate_directive(d: GemmDirective, s: Schedule, key) -> list[GemmDirective]:
    """The small problems the correctness gate runs with the timed object (same key)."""
    return [replace(d, m=p["m"], n=p["n"], k=p["k"], batch=1) for p in gate_problems(d, s, key)]


def occupancy(kernel, s: Schedule, t: Target):
    """The model's occupancy of the compiled kernel (waves per SIMD, workgroups per CU)."""
    from wmma_gen.model.occupancy import occupancy as occ
    from wmma_gen.model.params import params_for
    md = kernel.compiled.metadata
    return occ(md.vgpr_count, md.lds_bytes, s.threads, t, params_for(t.arch))


def corrupting(device):
    """Test-only: a Device whose read-backs after a launch have one 4-byte word in the middle
    overwritten with 0x7f7f7f7f (a huge f32/i32, a NaN pair in f16/bf16): the kernel looks
    wrong to whoever checks it. Reached only through `Objective(corrupt=...)`."""
    from wmma_gen.device.base import Device

    class CorruptOutput(Device):
        name = f"corrupt-{device.name}"

        def __init__(self):
            super().__init__()
            self.launched = False

        def alloc(self, nbytes):
            return device.alloc(nbytes)

        def free(self, buf):
            device.free(buf)

        def copy_in(self, buf, data):
            device.copy_in(buf, data)

        def copy_out(self, buf, nbytes=None):
            raw = bytearray(device.copy_out(buf, nbytes))
            if self.launched and len(raw) >= 4:
                mid = len(raw) // 2 // 4 * 4
                raw[mid:mid + 4] = b"\x7f\x7f\x7f\x7f"
            return bytes(raw)

        def launch(self, kernel, grid, block, args):
            self.launched = True
            return device.launch(kernel, grid, block, args)

        def sync(self):
            device.sync()

        _alloc = _free = _copy_in = _copy_out = None   # everything is delegated above

    CorruptOutput.__abstractmethods__ = frozenset()
    return CorruptOutput()


def _real_check():
    try:
        from wmma_gen.ops.gemm.check import check_gemm
    except ImportError as e:
        raise DeviceError(f"correctness gate unavailable: wmma_gen.ops.gemm.check cannot be imported ({e})") from None
    return check_gemm


def _real_estimate():
    try:
        from wmma_gen.ops.gemm.model import estimate
    except ImportError as e:
        raise DeviceError(f"no GPU timing and no model: wmma_gen.model.estimate cannot be imported ({e})") from None
    return estimate


@dataclass
class Objective:
    """`objective(trial) -> TFLOP/s` for one (arch, directive) study.

    device: a wmma_gen Device (hip or emulator) for the gate; GPU time is measured only when
    `device.name` is a HIP device. compile/check/estimate default to the real stages and are
    parameters so tests can spy on them. corrupt(schedule) -> True makes that schedule's gate
    read back corrupted output (test-only hook; nothing else ever sets it)."""
    directive: GemmDirective
    arch: str
    device: object
    domains: Optional[Domains] = None
    compile: Optional[Callable] = None
    check: Optional[Callable] = None
    estimate: Optional[Callable] = None
    corrupt: Optional[Callable[[Schedule], bool]] = None
    gate_cache: dict = field(default_factory=dict)   # (arch, gate directive, schedule) -> attrs
    seed: int = 0

    def __post_init__(self):
        self.target = get_target(self.arch)

    @property
    def on_gpu(self) -> bool:
        """A HipDevice says whether it is a GPU (`source`; "emulator" on the stand-in runtime);
        other devices count as GPUs only by name (test doubles)."""
        source = getattr(self.device, "source", None)
        return source == "hip" if source is not None else "hip" in getattr(self.device, "name", "")

    def __call__(self, trial: optuna.Trial) -> float:
        s = suggest_schedule(trial, self.domains, SPACE, Schedule)
        trial.set_user_attr("schedule", s.to_dict())
        problems = s.problems(self.directive, self.target)
        if problems:
            self._prune(trial, "validate", "; ".join(problems))
        try:
            return self._evaluate(trial, s)
        except optuna.TrialPruned:
            raise
        except Exception as e:  # the objective boundary: record, then let Optuna mark FAIL
            trial.set_user_attr("error", f"{type(e).__name__}: {e}"[:4000])
            raise

    # ---- stages -------------------------------------------------------------------------
    def _evaluate(self, trial, s: Schedule) -> float:
        kernel = self._compile(trial, s, self.directive)
        c = kernel.compiled
        for k, v in {"isa_hash": c.key, "object_sha256": c.sha256, "vgprs": c.metadata.vgpr_count, "lds_bytes": c.metadata.lds_bytes,
                     "toolchain": dict(c.toolchain), "wmma_gen_version": wmma_gen.__version__,
                     "compile_seconds": round(c.compile_seconds, 4)}.items():
            trial.set_user_attr(k, v)
        if c.spilled:
            self._prune(trial, "compile", f"spills: {c.metadata.vgpr_spill_count} VGPR, "
                                          f"{c.metadata.sgpr_spill_count} SGPR")
        occ = occupancy(kernel, s, self.target)
        trial.set_user_attr("occupancy", occ.waves_per_simd)
        trial.set_user_attr("workgroups_per_cu", occ.workgroups_per_cu)
        if occ.workgroups_per_cu < 1:
            self._prune(trial, "compile", f"no workgroup fits on a CU: {occ.limits}")
        gate = self._gate(trial, s, kernel)
        for k, v in gate.items():
            trial.set_user_attr(f"gate_{k}", v)
        if not gate["passed"]:
            self._prune(trial, "gate", f"output disagrees with numpy on {gate['m']}x{gate['n']}x{gate['k']}: "
                                       f"max_abs={gate['max_abs']:.3g} max_rel={gate['max_rel']:.3g} "
                                       f"tol={gate['tol']}")
        trial.set_user_attr("validated", True)
        seconds, source, limiter = self._time(trial, kernel, s)
        tflops = self.directive.flops / seconds / 1e12
        peak = self.target.peak_tflops(self.directive.dtype)
        for k, v in {"seconds": seconds, "tflops": tflops, "source": source, "fraction_of_peak": tflops / peak,
                     "limiter": limiter, "timestamp": time.time()}.items():
            trial.set_user_attr(k, v)
        return tflops

    def _compile(self, trial, s: Schedule, d: GemmDirective):
        fn = self.compile or build.compile_gemm
        try:
            return fn(d, s, self.arch)
        except ScheduleError as e:  # the builder refuses what it cannot build (yet)
            self._prune(trial, "compile", f"builder refused: {e}")
        except CompileError as e:
            self._prune(trial, "compile", f"compile failed: {str(e).splitlines()[0]}"
                                          f"{' | ' + e.diagnostics.splitlines()[0] if e.diagnostics else ''}")

    def _gate(self, trial, s: Schedule, kernel) -> dict:
        """Run `kernel` itself on every gate problem of its key; the worst result is kept."""
        corrupt = bool(self.corrupt and self.corrupt(s))
        key = (self.arch, kernel.compiled.key, s.to_json(), corrupt)
        if key not in self.gate_cache:
            check = self.check or _real_check()
            device = corrupting(self.device) if corrupt else self.device
            worst = None
            for g in gate_directive(self.directive, s, kernel.key):
                try:
                    r = check(g, s, self.arch, device, seed=self.seed, kernel=kernel)
                except EmulatorFault as e:  # the kernel faulted on the small problem: it is wrong
                    self._prune(trial, "gate", f"kernel faulted: {e}")
                row = {"passed": bool(r.passed), "max_abs": float(r.max_abs), "max_rel": float(r.max_rel),
                       "tol": str(r.tol), "source": str(r.source), "seconds": round(float(r.seconds), 3),
                       "m": g.m, "n": g.n, "k": g.k, "isa_hash": kernel.compiled.key}
                if worst is None or row["max_rel"] > worst["max_rel"] or not row["passed"]:
                    worst = row
                if not row["passed"]:
                    break   # the first failing problem is the one reported
            self.gate_cache[key] = worst
        return dict(self.gate_cache[key])

    def _time(self, trial, kernel, s: Schedule) -> tuple[float, str, str]:
        if self.on_gpu:
            return time_on_device(self.device, kernel), "hip", ""
        try:
            est = (self.estimate or _real_estimate())(kernel, self.directive, s, self.target)
        except ScheduleError as e:  # the model refuses what cannot run (e.g. nothing fits a CU)
            self._prune(trial, "model", str(e))
        return float(est.seconds), str(est.source), str(est.limiter)

    @staticmethod
    def _prune(trial, stage: str, reason: str):
        trial.set_user_attr("stage", stage)
        trial.set_user_attr("pruned_reason", reason[:2000])
        raise optuna.TrialPruned(f"{stage}: {reason}")


def time_on_device(device, kernel, warmup: int = WARMUP, repeats: int = REPEATS) -> float:
    """Median GPU seconds of the compiled GEMM on its problem (autotune/timing.py)."""
    from .timing import time_signature
    return time_signature(device, kernel.compiled, kernel.signature, kernel.problem, warmup, repeats)
