"""Studies: one Optuna study per (arch, op, dtype, shape), stored so a killed sweep resumes.
With `problems` (autotune/problems.py, `wmma-gen sweep --problems FILE`): one study per problem,
tuned on exactly that problem (layout, batch, epilogue; heads, GQA, Sq != Sk, window, varlen).

Storage (autotune/storage.py): by default an Optuna journal file, <results>/<arch>/optuna.journal
(results: the user's results dir by default, wmma_gen.userdirs)
(append-only: a trial that finished is on disk); `--storage URL` takes sqlite:///file.db or a
server RDB URL (postgresql://..., mysql://...), which has a heartbeat. A torn journal tail is
cut (original kept as a .bak, one warning line); any other damage is a StorageError naming the
file or URL and what to do.

Sweep start reconciles every study (autotune/reconcile.py): RUNNING trials whose owner process
on this host is gone, whose heartbeat expired, or that carry no owner and are old, are failed
(`interrupted`) and their parameters re-queued; the summary reports how many.

Budget and dedup (autotune/runner.py): `trials` counts a study's trials in the storage
(COMPLETE, PRUNED, FAIL with a recorded error, and RUNNING), checked when each trial is claimed
under a host-wide lock, so reruns add only the rest and concurrent sweeps on one study never
exceed it. Each process that opens a study takes its own sampler seed (a slot counter in the
study's user attrs), and a schedule whose canonical JSON was already evaluated is not compiled
again.

Compile pool (autotune/pipeline.py, compile_pool.py): with `compile_workers` N > 0 each sweep
process compiles the next N candidates in N worker processes while it gates and times the
current one; a compile that exceeds `compile_timeout` seconds or kills its worker is a PRUNED
trial with the reason (the worker is replaced). 0 compiles in-process, one trial at a time.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
import zlib
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Callable, Optional

import optuna

from wmma_gen.errors import DeviceError, ScheduleError
from wmma_gen.ops import registry
from wmma_gen.ops.registry import tuning as adapter
from wmma_gen.targets import get_target
from wmma_gen.userdirs import results_dir

from . import reconcile as rec
from .compile_pool import CompilePool
from .pipeline import compile_candidate, run_study_pooled
from .runner import KEY, counted, run_study, uses_budget
from wmma_gen.tuner.space import params_of, suggest_schedule
from .storage import claim_lock, is_rdb, load_studies, open_storage

__all__ = ["SweepConfig", "SweepResult", "Hooks", "run_sweep", "work", "open_study", "open_storage", "counted",
           "n_done", "n_claimed", "is_rdb", "OPS", "sampler", "study_name", "reconcile_all"]

optuna.logging.set_verbosity(optuna.logging.WARNING)

def OPS() -> tuple[str, ...]:
    """Ops the tuner can sweep: those whose OpSpec declares a Tuning (ops/registry.py)."""
    return registry.tunable()


@dataclass(frozen=True, init=False)
class SweepConfig:
    """One op's sweep: op-agnostic settings plus `axes`, the op's sweep-axis values (axis name ->
    tuple; the axes an op declares are its spec module's SWEEP_AXES, its Tuning.items
    crosses them). An axis not given takes the op's Tuning `quick` values. Axis values may also
    be passed as keywords (SweepConfig(arch, op="attention", head_dims=(64,))) and read as
    attributes (cfg.head_dims)."""
    arch: str
    op: str = "gemm"
    dtypes: tuple[str, ...] = ("f16",)
    axes: dict = field(default_factory=dict, hash=False)   # axis name -> tuple of values
    problems: tuple = ()     # autotune/problems.py: when given, exactly these studies (axes unused)
    trials: int = 30
    timeout: Optional[float] = None      # seconds for the whole sweep
    device: str = "auto"                 # auto | hip | emu
    storage: str = ""                    # "" -> <results>/<arch>/optuna.journal; path or RDB URL
    study_name: str = ""                 # prefix of every study name
    workers: int = 1
    seed: int = 0
    results: str = field(default_factory=lambda: str(results_dir()))   # never a checkout's tracked results/
    domains: Optional[dict] = None       # narrowed knob domains (space.narrow)
    top_k: int = 3
    progress: bool = True
    compile_workers: int = 0             # compile pool processes per sweep process; 0 = compile in-process
    compile_timeout: float = 600.0       # seconds one compile may take in the pool before it is pruned

    def __init__(self, arch: str, **kw):
        names = {f.name for f in fields(self)}
        axes = {**dict(kw.pop("axes", None) or {}), **{k: kw.pop(k) for k in list(kw) if k not in names}}
        for f in fields(self):
            if f.name == "arch":
                value = arch
            elif f.name in kw:
                value = kw[f.name]
            elif f.default_factory is not MISSING:
                value = f.default_factory()
            else:
                value = f.default
            object.__setattr__(self, f.name, value)
        object.__setattr__(self, "axes", {k: _tupled(v) for k, v in axes.items()})
        self.__post_init__()

    def __getattr__(self, name: str):
        axes = self.__dict__.get("axes") or {}      # (no recursion while unpickling)
        if not name.startswith("_") and name in axes:
            return axes[name]
        raise AttributeError(f"SweepConfig has no field or axis {name!r}")

    def __post_init__(self):
        get_target(self.arch)
        ad = adapter(self.op)   # unknown op -> ScheduleError naming the tunable ones
        declared = {a.name for op in registry.NAMES for a in registry.sweep_axes_of(op)}
        own = [a.name for a in registry.sweep_axes_of(self.op)]
        for name in self.axes:
            if name not in declared and name not in own:
                raise ScheduleError("axes", name, f"an axis of {self.op}: {', '.join(own) or 'none'} "
                                                  "(ops/<op>/sweep_axes.py)")
        for name in own:    # an axis not given: the op's quick values
            if name not in self.axes and name in ad.quick:
                self.axes[name] = _tupled(ad.quick[name])
        for name, values in self.axes.items():
            if not values:
                raise ScheduleError(f"axes[{name}]", values, "one or more values")
        for name in ("trials", "workers"):
            if getattr(self, name) < 1:
                raise ScheduleError(name, getattr(self, name), "an integer >= 1")
        if not isinstance(self.compile_workers, int) or not 0 <= self.compile_workers <= 256:
            raise ScheduleError("compile_workers", self.compile_workers, "an integer from 0 (in-process) to 256")
        if not isinstance(self.compile_timeout, (int, float)) or not self.compile_timeout > 0:
            raise ScheduleError("compile_timeout", self.compile_timeout, "seconds > 0")
        if self.device not in ("auto", "hip", "emu"):
            raise ScheduleError("device", self.device, "auto, hip or emu")
        for p in self.problems:
            if getattr(p, "op", None) != self.op:
                raise ScheduleError("problems", p, f"problems of op {self.op} (autotune/problems.py): "
                                                   "one config per op")

    def items(self) -> list[tuple]:
        """(directive, problem) of every study of this sweep (the op's Tuning decides)."""
        return adapter(self.op).items(self)

    def directives(self) -> list:
        return [d for d, _ in self.items()]

    @property
    def storage_url(self) -> str:
        return self.storage or str(Path(self.results) / self.arch / "optuna.journal")


def study_name(cfg: SweepConfig, d, p: dict | None = None) -> str:
    return adapter(cfg.op).study_name(cfg, d, p)


def sampler(seed: int, n_trials: int, parallel: bool = True):
    """The sweep's sampler (autotune/sampler.py): seeded multivariate TPE (64 EI candidates) without repeats.
    Constant liar is on: another sweep may share the study at any time (a no-op when alone)."""
    from .sampler import make
    return make(seed, n_trials, parallel)


def n_done(study: optuna.Study) -> int:
    """Finished trials that use budget."""
    return sum(counted(t) for t in study.get_trials(deepcopy=False))


def n_claimed(study: optuna.Study) -> int:
    """Trials that use budget now: finished ones plus RUNNING."""
    return sum(uses_budget(t) for t in study.get_trials(deepcopy=False))


def seed_for(cfg: SweepConfig, name: str, slot: int) -> int:
    """Sampler seed of the `slot`-th process to open study `name` (slot 0: the first sweep)."""
    return (cfg.seed * 1_000_003 + zlib.crc32(name.encode()) + 7919 * slot) % 2**31


def open_study(cfg: SweepConfig, storage, d, worker: int = 0, p: dict | None = None) -> optuna.Study:
    """Create or load the study, claim this process's sampler slot, seed baselines if new.
    (`worker` is kept for callers; the slot, not the worker index, separates the seeds.)"""
    ad = adapter(cfg.op)
    name = ad.study_name(cfg, d, p)
    with claim_lock(cfg.storage_url):
        study = optuna.create_study(storage=storage, study_name=name, direction="maximize", load_if_exists=True)
        slot = int(study.user_attrs.get("sampler_slots", 0))
        study.set_user_attr("sampler_slots", slot + 1)
        if "directive" not in study.user_attrs:
            attrs = {**ad.study_attrs(cfg, d, p), "domains": {k: list(v) for k, v in (cfg.domains or {}).items()}}
            for k, v in attrs.items():
                study.set_user_attr(k, v)
        if not study.get_trials(deepcopy=False):
            for s in ad.baselines(d, p, cfg.arch):
                try:
                    params = params_of(s, study_domains(cfg, d), registry.get(cfg.op).space)
                except ScheduleError:
                    continue
                study.enqueue_trial(params, user_attrs={"baseline": True}, skip_if_exists=True)
    study.sampler = sampler(seed_for(cfg, name, slot), cfg.trials)
    return study


def reconcile_all(cfg: SweepConfig, studies) -> int:
    """Fail and re-queue the stale RUNNING trials of every study; returns how many."""
    with claim_lock(cfg.storage_url) as locked:
        return sum(rec.reconcile(s, locked=locked) for s in studies)


def _device(kind: str):
    try:
        from wmma_gen.device.select import get_device
    except ImportError as e:
        raise DeviceError(f"device layer unavailable: wmma_gen.device.select cannot be imported ({e})") from None
    return get_device(kind)


def gpu_count() -> int:
    try:
        from hip import hip
        err, n = hip.hipGetDeviceCount()
        return n if err == hip.hipError_t.hipSuccess else 0
    except Exception:  # no hip-python or no runtime: no GPUs
        return 0


@dataclass
class Hooks:
    """Stage overrides passed to every objective (tests: spies and the corrupt-output hook), with the
    OpSpec's signatures (wmma_gen/tuner/objective.py SpecObjective)."""
    compile: Optional[Callable] = None       # (spec, d, s, key, arch) -> CompiledSet, in place of compile_op
    check: Optional[Callable] = None         # (cs, d, gate problem, device, seed) -> result, in place of the gate's check
    estimate: Optional[Callable] = None      # (cs, d, s, p, arch) -> ModelEstimate, in place of spec.estimate
    corrupt: Optional[Callable[[object], bool]] = None   # schedule -> corrupt its kernel (tests)
    on_trial: Optional[Callable] = None      # (study, frozen_trial) after each trial
    objective: Optional[Callable] = None     # factory(d, p, arch, device, **kw) in place of SpecObjective (storage tests)
    pool_compile: Optional[Callable] = None  # picklable stand-in for pipeline.compile_candidate, run in the
                                             # compile pool's workers (tests: a compile that hangs or crashes)


def work(cfg: SweepConfig, worker: int = 0, hooks: Hooks | None = None, deadline: float | None = None) -> int:
    """Run every study of the sweep in this process until its budget or the deadline;
    returns how many stale trials (of crashed concurrent processes) it re-queued on the way."""
    hooks = hooks or Hooks()
    storage = open_storage(cfg.storage_url)
    device = _device(cfg.device)
    gate_cache: dict = {}
    recovered = 0
    ad = adapter(cfg.op)
    hook_kw = {k: v for k, v in (("compile", hooks.compile), ("check", hooks.check), ("estimate", hooks.estimate),
                                 ("corrupt", hooks.corrupt), ("factory", hooks.objective)) if v is not None}
    with _compile_pool(cfg) as pool:
        for d, p in cfg.items():
            study = open_study(cfg, storage, d, worker, p)
            if n_claimed(study) >= cfg.trials:
                continue
            if deadline is not None and deadline <= time.time():
                break
            doms = study_domains(cfg, d)
            obj = ad.objective(d, p, cfg.arch, device, domains=doms, gate_cache=gate_cache, seed=cfg.seed,
                               **hook_kw)
            common = dict(trials=cfg.trials, deadline=deadline, on_trial=hooks.on_trial,
                          propose=lambda tr, doms=doms: _propose(cfg.op, tr, doms),
                          lock=lambda: claim_lock(cfg.storage_url))
            if pool is None:
                stats = run_study(study, obj, **common)
            else:
                job = hooks.pool_compile or compile_candidate
                stats = run_study_pooled(study, obj, pool=pool, **common,
                                         submit=lambda tr, d=d, p=p: pool.submit(job, cfg.op, (d, p), tr.user_attrs[KEY], cfg.arch))
            recovered += stats.recovered
    return recovered


def study_domains(cfg: SweepConfig, d) -> Optional[dict]:
    """cfg.domains over the op's own domains for directive d (its tuning module's optional
    `domains_of(d)`, e.g. attention's head-dim split: d_split 1 up to hd256, 2/4/8 above)."""
    own = getattr(adapter(cfg.op), "domains_of", None)
    merged = {**(own(d) if own else {}), **(cfg.domains or {})}
    return merged or None


def _propose(op: str, trial, domains) -> str:
    """A schedule suggested from the op's knob table (space.py), as JSON (the pipeline's key)."""
    spec = registry.get(op)
    return suggest_schedule(trial, domains, spec.space, spec.schedule).to_json()


@contextlib.contextmanager
def _compile_pool(cfg: SweepConfig):
    """The sweep process's compile pool (pipeline.py), or None to compile in-process."""
    if cfg.compile_workers == 0:
        yield None
        return
    pool = CompilePool(cfg.compile_workers, cfg.compile_timeout,
                       preload=("autotune.pipeline", adapter(cfg.op).module, "wmma_gen.compiler"))
    try:
        yield pool
    finally:
        pool.close()


def _child(cfg_dict: dict, worker: int, gpu: Optional[int], deadline: Optional[float]) -> None:
    if gpu is not None:
        os.environ["HIP_VISIBLE_DEVICES"] = str(gpu)   # before anything touches HIP
    cfg_dict["dtypes"] = tuple(cfg_dict["dtypes"])
    from .problems import from_fields
    cfg_dict["problems"] = tuple(from_fields(p) for p in cfg_dict["problems"])
    work(SweepConfig(**cfg_dict), worker, None, deadline)


def _tupled(v):
    """Axis values as nested tuples (a list from JSON or a worker's dict -> the tuple the op crosses)."""
    return tuple(_tupled(x) for x in v) if isinstance(v, (list, tuple)) else v


@dataclass
class SweepResult:
    config: SweepConfig
    studies: list = field(default_factory=list)   # optuna.Study, in sweep order
    seconds: float = 0.0
    recovered: int = 0                            # stale RUNNING trials failed and re-queued


def run_sweep(cfg: SweepConfig, hooks: Hooks | None = None) -> SweepResult:
    """Reconcile, then run (or resume) the sweep's studies; returns them for the ladder/summary."""
    t0 = time.time()
    deadline = None if cfg.timeout is None else t0 + cfg.timeout
    storage = open_storage(cfg.storage_url)            # repairs a torn journal tail, or raises
    load_studies(storage, cfg.storage_url)             # reads it through once: damage fails here
    studies = [open_study(cfg, storage, d, 0, p) for d, p in cfg.items()]
    recovered = reconcile_all(cfg, studies)
    total = sum(max(0, cfg.trials - n_claimed(s)) for s in studies)
    bar = _bar(total, cfg.progress)
    try:
        if cfg.workers == 1:
            hooks = hooks or Hooks()
            user_cb = hooks.on_trial

            def tick(st, ft):
                if user_cb:
                    user_cb(st, ft)
                bar.update(1)
                _postfix(bar, st)
            recovered += work(cfg, 0, replace(hooks, on_trial=tick), deadline)
        else:
            if hooks is not None and any(v is not None for v in asdict(hooks).values()):
                raise ScheduleError("workers", cfg.workers, "1 when stage hooks are given (hooks are in-process)")
            _run_workers(cfg, studies, bar, deadline)
    finally:
        bar.close()
    return SweepResult(cfg, [optuna.load_study(study_name=s.study_name, storage=storage) for s in studies],
                       time.time() - t0, recovered)


def _run_workers(cfg: SweepConfig, studies, bar, deadline) -> None:
    ngpu = gpu_count() if cfg.device != "emu" else 0
    ctx = mp.get_context("spawn")
    cfg_dict = asdict(cfg)
    procs = [ctx.Process(target=_child, args=(cfg_dict, i, i % ngpu if ngpu > 1 else None, deadline))
             for i in range(cfg.workers)]
    for p in procs:
        p.start()
    start = sum(n_done(s) for s in studies)
    while any(p.is_alive() for p in procs):
        time.sleep(1.0)
        now = sum(n_done(s) for s in studies)
        bar.update(now - start - bar.n)
    for p in procs:
        p.join()
        if p.exitcode:
            raise DeviceError(f"sweep worker pid {p.pid} exited with code {p.exitcode}")


def _bar(total: int, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, unit="trial", desc="sweep", disable=not enabled, dynamic_ncols=True)


def _postfix(bar, study) -> None:
    try:
        best = study.best_trial
        bar.set_postfix_str(f"{study.study_name.split('-', 2)[-1]}: best {best.value:.1f} ({best.user_attrs.get('source')})")
    except ValueError:  # no completed trial yet
        bar.set_postfix_str(f"{study.study_name.split('-', 2)[-1]}: no valid schedule yet")
