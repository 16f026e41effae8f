"""Tuning adapter of the attention backward (pre-pass + dK/dV + dQ kernels, one schedule):
studies per (dtype, head_dim, causal, seq) like the forward's (attention.py, whose helpers
it shares), ranked by the sum of the three kernels' model estimates or GPU times.

Objective: suggest (AttentionBwdSchedule SPACE) -> named checks (prune) -> compile the three
kernels (spills prune) -> gate: attention_backward with this schedule on the registry's gate
problems vs the float64 reference (the disk cache is keyed by the MLIR text, so the gate
runs the very code objects ranked: their content keys are recorded and compared) -> value.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

import optuna

import wmma_gen
from wmma_gen.errors import CompileError, EmulatorFault, ScheduleError
from wmma_gen.ops import registry
from wmma_gen.ops.attention.directive import AttentionDirective
from wmma_gen.ops.attention_bwd.schedule import SPACE, AttentionBwdSchedule
from wmma_gen.targets import get_target

from ..space import suggest_schedule
from . import attention as fwd
from .attention import (BATCH, DTYPES, HEADS, PROBLEM_COLUMNS, SIZE_LABEL, _prune, cli_fields,  # noqa: F401
                        label, row, series, size)

OP = "attention_bwd"
SCHEDULE = AttentionBwdSchedule
QUICK = {"dtypes": ("f16",), "head_dims": (64,), "seqs": (1024,), "causal": (True,), "trials": 4}
DEFAULTS = {"dtypes": ("f16", "bf16"), "head_dims": (64, 128), "seqs": (1024, 4096), "causal": (False, True),
            "trials": 16}


def items(cfg) -> list[tuple[AttentionDirective, dict]]:
    return [(AttentionDirective(d.dtype, d.head_dim, causal=d.causal, op=OP), p) for d, p in fwd.items(cfg)]


def study_name(cfg, d, p) -> str:
    return fwd.study_name(cfg, d, p).replace("attention-", "attention_bwd-", 1)


def study_attrs(cfg, d, p) -> dict:
    return {**fwd.study_attrs(cfg, d, p), "op": OP, "flops_convention": "2.5x the forward's: 10*D per visible pair"}


def schedule_text(b) -> str:
    return (f"dkdv {b['block_m']}x{b['block_n']} w{b['waves']} ds{b['d_split']} | "
            f"dq {b['dq_block_m']}x{b['dq_block_n']} w{b['dq_waves']} ds{b['dq_d_split']}")


def baselines(d, p, arch: str) -> list[AttentionBwdSchedule]:
    return [registry.get(OP).default_schedule(d, arch)]


def propose(trial, domains) -> str:
    return suggest_schedule(trial, domains, SPACE, AttentionBwdSchedule).to_json()


def compile_schedule(d, s, arch: str) -> dict:
    """{prepass, dkdv, dq: (KernelSource, CompiledKernel)} of schedule s: the objective's
    compile stage (a picklable module function: the sweep's compile pool runs it ahead in
    worker processes, which fills the shared on-disk compile cache)."""
    from wmma_gen.compiler import compile_mlir
    from wmma_gen.ops.attention_bwd.run import build_backward, make_spec
    spec = make_spec(arch, d.dtype, d.head_dim, causal=d.causal, window=d.window, varlen=d.varlen, layout=d.layout)
    return {name: (src, compile_mlir(src.mlir, arch)) for name, src in build_backward(spec, s).items()}


@dataclass
class AttentionBwdObjective:
    directive: AttentionDirective
    problem: dict
    arch: str
    device: object
    domains: Optional[dict] = None
    seed: int = 0
    gate_cache: dict = field(default_factory=dict)

    @property
    def on_gpu(self) -> bool:
        return getattr(self.device, "source", "") == "hip"

    def __call__(self, trial: optuna.Trial) -> float:
        s = suggest_schedule(trial, self.domains, SPACE, AttentionBwdSchedule)
        trial.set_user_attr("schedule", s.to_dict())
        d = self.directive
        problems = s.problems(d.head_dim, d.dtype, get_target(self.arch))
        if problems:
            _prune(trial, "validate", "; ".join(problems))
        try:
            return self._evaluate(trial, s)
        except optuna.TrialPruned:
            raise
        except Exception as e:  # the objective boundary: record, then let Optuna mark FAIL
            trial.set_user_attr("error", f"{type(e).__name__}: {e}"[:4000])
            raise

    def _evaluate(self, trial, s) -> float:
        d, spec = self.directive, registry.get(OP)
        try:
            ks = compile_schedule(d, s, self.arch)
        except (ScheduleError, CompileError) as e:
            _prune(trial, "compile", str(e).splitlines()[0])
        mds = {n: ck.metadata for n, (_, ck) in ks.items()}
        isa_hash = "+".join(ck.key[:16] for _, ck in ks.values())
        for k, v in {"isa_hash": isa_hash, "object_sha256": "+".join(ck.sha256 for _, ck in ks.values()),
                     "vgprs": max(m.vgpr_count for m in mds.values()),
                     "lds_bytes": max(m.lds_bytes for m in mds.values()),
                     "toolchain": dict(next(iter(ks.values()))[1].toolchain), "wmma_gen_version": wmma_gen.__version__,
                     "compile_seconds": round(sum(ck.compile_seconds for _, ck in ks.values()), 4)}.items():
            trial.set_user_attr(k, v)
        spilled = {n: m.vgpr_spill_count for n, m in mds.items() if m.spills}
        if spilled:
            _prune(trial, "compile", f"spills: {spilled}")
        gate = self._gate(s, isa_hash)
        for k, v in gate.items():
            trial.set_user_attr(f"gate_{k}", v)
        if not gate["passed"]:
            _prune(trial, "gate", f"gradients disagree with the reference: {gate['worst']} error "
                                  f"{gate['max_abs']:.3g} > tol {gate['tol']:.3g}")
        trial.set_user_attr("validated", True)
        if self.on_gpu:
            from ..timing import time_signature
            p = self._sizes()
            seconds, source, limiter = sum(time_signature(self.device, ck, src.signature, p)
                                           for src, ck in ks.values()), "hip", ""
        else:
            e = spec.estimate(d, s, self.problem, self.arch)
            seconds, source, limiter = float(e.seconds), e.source, e.limiter
        tflops = spec.flops(d, self.problem) / seconds / 1e12
        peak = get_target(self.arch).peak_tflops(d.dtype)
        for k, v in {"seconds": seconds, "tflops": tflops, "source": source, "fraction_of_peak": tflops / peak,
                     "limiter": limiter, "timestamp": time.time()}.items():
            trial.set_user_attr(k, v)
        return tflops

    def _sizes(self) -> dict:
        p = self.problem
        return {**p, "head_dim": self.directive.head_dim, "total_q": p["batch"] * p["seq_q"],
                "total_k": p["batch"] * p["seq_k"], "window_left": -1, "window_right": -1,
                "scale": 1.0 / self.directive.head_dim ** 0.5}

    def _gate(self, s, isa_hash: str) -> dict:
        d, spec = self.directive, registry.get(OP)
        if isa_hash in self.gate_cache:
            return dict(self.gate_cache[isa_hash])
        worst = None
        for gp in spec.gate_problems(d, s, None):
            try:
                r = spec.check(gp, dtype=d.dtype, layout=d.layout, causal=d.causal, arch=self.arch,
                               device=self.device, seed=self.seed, schedule=s)
                ran = "+".join(ck.key[:16] for _, ck in compile_schedule(d, s, self.arch).values())
                row_ = {"passed": bool(r.passed) and ran == isa_hash, "max_abs": float(r.max_abs),
                        "tol": float(r.tol), "worst": r.worst, "source": r.source, "isa_hash": ran,
                        "seq_q": gp["seq_q"], "seq_k": gp["seq_k"]}
            except EmulatorFault as e:
                row_ = {"passed": False, "max_abs": float("inf"), "tol": 0.0, "worst": f"fault: {e}"[:300]}
            if worst is None or not row_["passed"] or \
                    row_["max_abs"] / max(row_["tol"], 1e-30) > worst["max_abs"] / max(worst["tol"], 1e-30):
                worst = row_
            if not worst["passed"]:
                break
        self.gate_cache[isa_hash] = worst
        return dict(worst)


def objective(d, p, arch: str, device, *, domains=None, seed: int = 0, gate_cache=None, **_hooks):
    return AttentionBwdObjective(d, p, arch, device, domains=domains, seed=seed,
                                 gate_cache={} if gate_cache is None else gate_cache)


def documents(df, arch: str) -> dict:
    """file name -> document (ops/attention_bwd/lookup.py format)."""
    from wmma_gen.ops.attention_bwd import lookup
    docs = fwd.documents(df, arch, SPACE)
    out = {}
    for doc in docs.values():
        for e in doc["entries"]:
            e["flops_convention"] = "2.5x the forward's: 10*D per visible (query, key) pair"
        out[lookup.file_name(arch, doc["dtype"])] = {**doc, "schema": lookup.SCHEMA,
                                                    "schema_version": lookup.SCHEMA_VERSION, "op": OP}
    return out


def validate_document(doc: dict, path) -> None:
    from wmma_gen.ops.attention_bwd import lookup
    lookup.parse(doc, path)
