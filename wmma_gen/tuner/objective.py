"""The tuner's objective, op-agnostic (STYLE rule 7), from an op's OpSpec alone (ops/contract.py):

    s = suggest_schedule(trial, domains, space, schedule)     space.py, the op's knob table
    validate   spec.schedule_problems (else s.problems(d, target)) non-empty -> PRUNED (before any compile)
    compile    compile_op -> CompiledSet; ScheduleError (builder refusal) or CompileError -> PRUNED;
               spills -> PRUNED
    admit      spec.admit: an op's extra post-compile check (GEMM: a workgroup fits a CU) -> PRUNED
    gate       the very code objects (spec.gate_check, else spec.check) on spec.gate_problems vs the
               float64 reference; wrong or faulting -> PRUNED (never exported)
    time       seconds: median GPU time (spec.gpu_time, else every kernel through the launcher;
               source=hip), else spec.estimate of the set (source=model)
    value      spec.flops / seconds (TFLOP/s)

Every outcome is recorded in the trial's user attrs; an unexpected error is recorded as
`error` and re-raised so Optuna marks the trial FAIL with its text (never an `inf`). Every op's
Tuning uses this objective (`spec_objective(op)`); this module imports no op.
"""
from __future__ import annotations

import time

import optuna

import wmma_gen
from wmma_gen.errors import CompileError, EmulatorFault, ScheduleError
from wmma_gen.targets import get_target

from .space import suggest_schedule


def prune(trial, stage: str, reason: str):
    trial.set_user_attr("stage", stage)
    trial.set_user_attr("pruned_reason", reason[:2000])
    raise optuna.TrialPruned(f"{stage}: {reason}")


def compile_failure(e: Exception) -> str:
    """The pruned reason of a failed compile stage: a builder refusal or LLVM's first lines."""
    if isinstance(e, ScheduleError):
        return f"builder refused: {e}"
    diag = getattr(e, "diagnostics", "") or ""
    return f"compile failed: {str(e).splitlines()[0]}{' | ' + diag.splitlines()[0] if diag else ''}"


def object_attrs(ks: dict) -> dict:
    """What a trial records of its code objects ({name: (source, CompiledKernel)}): the content
    key (joined key prefixes for several kernels), the code-object digests, resources, toolchain."""
    compiled = [ck for _, ck in ks.values()]
    keys = [ck.key for ck in compiled]
    return {"isa_hash": keys[0] if len(keys) == 1 else "+".join(k[:16] for k in keys),
            "object_sha256": "+".join(ck.sha256 for ck in compiled),
            "vgprs": max(ck.metadata.vgpr_count for ck in compiled),
            "lds_bytes": max(ck.metadata.lds_bytes for ck in compiled),
            "toolchain": dict(compiled[0].toolchain), "wmma_gen_version": wmma_gen.__version__,
            "compile_seconds": round(sum(ck.compile_seconds for ck in compiled), 4)}


class SpecObjective:
    """`objective(trial) -> TFLOP/s` for one (arch, directive, problem) study of `spec`'s op.

    device: a wmma_gen Device for the gate; GPU time is measured only when it is a GPU (on_gpu).
    Test hooks (autotune's Hooks; nothing else sets them) stand in for a stage with the spec's
    signature: compile(spec, d, s, key, arch) -> CompiledSet, check(cs, d, gate problem, device,
    seed), estimate(cs, d, s, p, arch); corrupt(schedule) -> True makes that schedule's gate read
    back corrupted output (corrupt.py)."""

    def __init__(self, spec, d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None,
                 compile=None, check=None, estimate=None, corrupt=None):
        self.spec, self.directive, self.arch, self.device = spec, d, arch, device
        self.problem = spec.problem_from(p)
        self.domains, self.seed = domains, seed
        self.gate_cache = {} if gate_cache is None else gate_cache
        self.hooks = {"compile": compile, "check": check, "estimate": estimate, "corrupt": corrupt}
        self._set = None

    @property
    def on_gpu(self) -> bool:
        """A HipDevice says whether it is a GPU (`source`; "emulator" on the stand-in runtime);
        other devices count as GPUs only by name (test doubles)."""
        source = getattr(self.device, "source", None)
        return source == "hip" if source is not None else "hip" in getattr(self.device, "name", "")

    def __call__(self, trial: optuna.Trial) -> float:
        s = suggest_schedule(trial, self.domains, self.spec.space, self.spec.schedule)
        trial.set_user_attr("schedule", s.to_dict())
        problems = self._problems(s)
        if problems:
            prune(trial, "validate", "; ".join(problems))
        try:
            return self._evaluate(trial, s)
        except optuna.TrialPruned:
            raise
        except Exception as e:  # the objective boundary: record, then let Optuna mark FAIL
            trial.set_user_attr("error", f"{type(e).__name__}: {e}"[:4000])
            raise

    def _evaluate(self, trial, s) -> float:
        try:
            ks = self._kernels(s)
        except (ScheduleError, CompileError) as e:
            prune(trial, "compile", compile_failure(e))
        for k, v in object_attrs(ks).items():
            trial.set_user_attr(k, v)
        spilled = [f"{'' if len(ks) == 1 else name + ' '}{ck.metadata.vgpr_spill_count} VGPR, "
                   f"{ck.metadata.sgpr_spill_count} SGPR" for name, (_, ck) in ks.items() if ck.spilled]
        if spilled:
            prune(trial, "compile", "spills: " + "; ".join(spilled))
        if self.spec.admit is not None:
            why, attrs = self.spec.admit(self._set, self.directive, s, self.problem, self.arch)
            for k, v in attrs.items():
                trial.set_user_attr(k, v)
            if why:
                prune(trial, "compile", why)
        gate = self._gate(s)
        why = gate.pop("why", "")
        for k, v in gate.items():
            trial.set_user_attr(f"gate_{k}", v)
        if not gate["passed"]:
            prune(trial, "gate", why)
        trial.set_user_attr("validated", True)
        seconds, source, limiter = self._time(trial, s, ks)
        tflops = self.spec.flops(self.directive, self.problem) / seconds / 1e12
        peak = get_target(self.arch).peak_tflops(self.directive.dtype)
        for k, v in {"seconds": seconds, "tflops": tflops, "source": source, "fraction_of_peak": tflops / peak,
                     "limiter": limiter, "timestamp": time.time()}.items():
            trial.set_user_attr(k, v)
        return tflops

    def _problems(self, s) -> list[str]:
        t = get_target(self.arch)
        if self.spec.schedule_problems is not None:
            return self.spec.schedule_problems(self.directive, s, self.problem, t)
        return s.problems(self.directive, t) if hasattr(s, "problems") else []

    def _kernels(self, s) -> dict:
        """{name: (source, CompiledKernel)} of the set compile_op (or the compile hook) returns."""
        from wmma_gen.ops.compile_op import compile_op
        key = self.spec.key_of(self.directive, s, self.problem)
        self._set = (self.hooks["compile"] or compile_op)(self.spec, self.directive, s, key, self.arch)
        return self._set.pairs()

    def _check(self, cs, s, gp, device):
        if self.hooks["check"] is not None:
            return self.hooks["check"](cs, self.directive, gp, device, self.seed)
        if self.spec.gate_check is not None:
            return self.spec.gate_check(cs, self.directive, s, gp, self.problem, device, self.seed)
        return self.spec.check(cs, self.directive, gp, device, self.seed)

    def _gate(self, s) -> dict:
        """The timed objects themselves on every gate problem of their key; the worst row (error
        over tolerance) is kept, and a wrong or faulting problem stops the gate."""
        cs, spec = self._set, self.spec
        corrupt = bool(self.hooks["corrupt"] and self.hooks["corrupt"](s))
        cache_key = (cs.isa_hash, corrupt)
        if cache_key in self.gate_cache:
            return dict(self.gate_cache[cache_key])
        device = self.device
        if corrupt:
            from .corrupt import corrupting
            device = corrupting(device)
        worst, err = None, spec.gate_error
        for gp in spec.gate_problems(self.directive, s, cs.key):
            try:
                r = self._check(cs, s, gp, device)
                row = {"passed": bool(r.passed), "max_abs": float(r.max_abs), "tol": float(r.tol),
                       "source": str(r.source), "isa_hash": cs.isa_hash,
                       **(spec.gate_attrs(gp, r) if spec.gate_attrs else {})}
                if not row["passed"]:
                    row["why"] = (f"output disagrees with the reference on {gp}: {err} {float(getattr(r, err)):.3g} "
                                  f"> tol {row['tol']:.3g}")
                row["_margin"] = float(getattr(r, err)) / max(row["tol"], 1e-30)
            except EmulatorFault as e:   # a kernel that faults on a small problem is wrong
                row = {"passed": False, "max_abs": float("inf"), "tol": 0.0, "why": f"kernel faulted: {e}"[:300],
                       "_margin": float("inf")}
            if worst is None or not row["passed"] or row["_margin"] > worst["_margin"]:
                worst = row
            if not row["passed"]:
                break   # the first failing problem is the one reported
        worst.pop("_margin")
        self.gate_cache[cache_key] = worst
        return dict(worst)

    def _time(self, trial, s, ks) -> tuple[float, str, str]:
        if self.on_gpu:
            if self.spec.gpu_time is not None:
                return self.spec.gpu_time(self.device, self._set, self.directive, self.problem), "hip", ""
            from dataclasses import asdict

            from .timing import time_signature
            p = asdict(self.problem)
            return sum(time_signature(self.device, ck, src.signature, p) for src, ck in ks.values()), "hip", ""
        try:
            e = (self.hooks["estimate"] or self.spec.estimate)(self._set, self.directive, s, self.problem, self.arch)
        except ScheduleError as err:   # the model refuses what cannot run (e.g. nothing fits a CU)
            prune(trial, "model", str(err))
        return float(e.seconds), str(e.source), str(e.limiter)


def spec_objective(op: str):
    """A Tuning's `objective` for op `op`: SpecObjective over its OpSpec, or `factory(d, p, arch,
    device, **kw)` when one is given (autotune's Hooks.objective: the storage tests' stand-in)."""
    def objective(d, p, arch: str, device, *, factory=None, **kw):
        if factory is not None:
            return factory(d, p, arch, device, **kw)
        from wmma_gen.ops import registry
        return SpecObjective(registry.get(op), d, p, arch, device, **kw)
    return objective
