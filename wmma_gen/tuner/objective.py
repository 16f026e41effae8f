"""The tuner's objective, op-agnostic (STYLE rule 7): suggest -> validate -> compile -> gate -> value.

    s = suggest_schedule(trial, domains, SPACE, SCHEDULE)     space.py, the op's knob table
    _problems(s)       non-empty -> TrialPruned(reason)                        (before any compile)
    _kernels(s)        {name: (source, CompiledKernel)}; ScheduleError (builder refusal) or
                       CompileError -> TrialPruned(reason); spills -> TrialPruned(reason)
    _admit(s, ks)      an op's extra post-compile check (GEMM: a workgroup fits a CU)
    _gate(s, ks)       the very code objects on small problems vs the float64 reference;
                       wrong or faulting -> TrialPruned(reason) (never exported)
    _time(s, ks)       seconds: median GPU time (source=hip), else the op's model (source=model)
    value              the op's FLOPs / seconds (TFLOP/s)

Every outcome is recorded in the trial's user attrs; an unexpected error is recorded as
`error` and re-raised so Optuna marks the trial FAIL with its text (never an `inf`).
Each op's subclass lives in its Tuning module (wmma_gen/ops/<op>/tuning.py) and supplies the
stages marked above; this module imports no op.
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


class StagedObjective:
    """`objective(trial) -> TFLOP/s` for one study. A subclass (a dataclass with at least
    `directive`, `arch`, `device`, `domains`) sets SPACE and SCHEDULE and implements
    _problems, _kernels, _gate, _time and _flops; _admit is optional."""
    SPACE: tuple = ()
    SCHEDULE: type = object

    @property
    def on_gpu(self) -> bool:
        """A HipDevice says whether it is a GPU (`source`; "emulator" on the stand-in runtime);
        other devices count as GPUs only by name (test doubles)."""
        source = getattr(self.device, "source", None)
        return source == "hip" if source is not None else "hip" in getattr(self.device, "name", "")

    def __call__(self, trial: optuna.Trial) -> float:
        s = suggest_schedule(trial, self.domains, self.SPACE, self.SCHEDULE)
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
        why = self._admit(trial, s, ks)
        if why:
            prune(trial, "compile", why)
        gate = self._gate(s, ks)
        why = gate.pop("why", "")
        for k, v in gate.items():
            trial.set_user_attr(f"gate_{k}", v)
        if not gate["passed"]:
            prune(trial, "gate", why)
        trial.set_user_attr("validated", True)
        seconds, source, limiter = self._time(trial, s, ks)
        tflops = self._flops() / seconds / 1e12
        peak = get_target(self.arch).peak_tflops(self.directive.dtype)
        for k, v in {"seconds": seconds, "tflops": tflops, "source": source, "fraction_of_peak": tflops / peak,
                     "limiter": limiter, "timestamp": time.time()}.items():
            trial.set_user_attr(k, v)
        return tflops

    # ---- what an op supplies ------------------------------------------------------------
    def _problems(self, s) -> list[str]:
        raise NotImplementedError

    def _kernels(self, s) -> dict:
        """{name: (source, CompiledKernel)}; may raise ScheduleError / CompileError."""
        raise NotImplementedError

    def _admit(self, trial, s, ks) -> str:
        """A reason to prune a compiled candidate before its gate ('' = none)."""
        return ""

    def _gate(self, s, ks) -> dict:
        """{"passed": bool, "why": reason when not passed, other gate_* attrs}."""
        raise NotImplementedError

    def _time(self, trial, s, ks) -> tuple[float, str, str]:
        """(seconds, source, limiter); may prune (stage "model")."""
        raise NotImplementedError

    def _flops(self) -> float:
        raise NotImplementedError


class SpecObjective(StagedObjective):
    """The objective derived from an op's OpSpec alone (ops/contract.py): what a Tuning uses when
    its op needs nothing of its own. compile = compile_op, gate = spec.check handed that
    CompiledSet on spec.gate_problems, value = GPU time of every kernel of the set (the launcher,
    source=hip) or spec.estimate of the set (source=model), FLOPs = spec.flops."""

    def __init__(self, spec, d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None, **_hooks):
        self.spec, self.directive, self.arch, self.device = spec, d, arch, device
        self.problem = spec.problem_from(p)
        self.domains, self.seed = domains, seed
        self.gate_cache = {} if gate_cache is None else gate_cache
        self.SPACE, self.SCHEDULE = spec.space, spec.schedule
        self._set = None

    def _problems(self, s) -> list[str]:
        return s.problems(self.directive, get_target(self.arch)) if hasattr(s, "problems") else []

    def _kernels(self, s) -> dict:
        from wmma_gen.ops.compile_op import compile_op
        self._set = compile_op(self.spec, self.directive, s, self.spec.key_of(self.directive, s, self.problem),
                               self.arch)
        return self._set.pairs()

    def _gate(self, s, ks) -> dict:
        cs = self._set
        if cs.isa_hash in self.gate_cache:
            return dict(self.gate_cache[cs.isa_hash])
        worst = None
        for gp in self.spec.gate_problems(self.directive, s, cs.key):
            try:
                r = self.spec.check(cs, self.directive, gp, self.device, self.seed)
                row = {"passed": bool(r.passed), "max_abs": float(r.max_abs), "tol": float(r.tol),
                       "source": str(r.source), "isa_hash": cs.isa_hash}
            except EmulatorFault as e:   # a kernel that faults on a small problem is wrong
                row = {"passed": False, "max_abs": float("inf"), "tol": 0.0, "why": f"kernel faulted: {e}"[:300]}
            if not row["passed"]:
                row.setdefault("why", f"output disagrees with the reference on {gp}: error {row['max_abs']:.3g} "
                                      f"> tol {row['tol']:.3g}")
                worst = row
                break
            if worst is None or row["max_abs"] / max(row["tol"], 1e-30) > worst["max_abs"] / max(worst["tol"], 1e-30):
                worst = row
        self.gate_cache[cs.isa_hash] = worst
        return dict(worst)

    def _time(self, trial, s, ks) -> tuple[float, str, str]:
        if self.on_gpu:
            from dataclasses import asdict

            from .timing import time_signature
            p = asdict(self.problem)
            return sum(time_signature(self.device, ck, src.signature, p) for src, ck in ks.values()), "hip", ""
        try:
            e = self.spec.estimate(self._set, self.directive, s, self.problem, self.arch)
        except ScheduleError as err:
            prune(trial, "model", str(err))
        return float(e.seconds), e.source, e.limiter

    def _flops(self) -> float:
        return self.spec.flops(self.directive, self.problem)


def spec_objective(op: str):
    """A Tuning's `objective` for op `op` built from its OpSpec alone (SpecObjective)."""
    def objective(d, p, arch: str, device, **kw):
        from wmma_gen.ops import registry
        return SpecObjective(registry.get(op), d, p, arch, device, **kw)
    return objective
