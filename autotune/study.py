"""Studies: one Optuna study per (arch, op, dtype, shape), stored so a killed sweep resumes.

Storage: by default an Optuna journal file, results/<arch>/optuna.journal (JournalFileBackend,
append-only: a trial that finished is on disk). `--storage URL` takes any Optuna RDB URL
(postgresql://..., mysql://..., sqlite:///...) with heartbeat + RetryFailedTrialCallback, so
processes on several machines can share one study and a dead worker's trial is retried.
A journal has no heartbeat: a sweep that starts while no other sweep owns the journal
(`<journal>.owner` holds the owner's pid) marks trials left RUNNING by a killed run FAIL
(user attr `interrupted`) and enqueues their parameters again.

Budget: `trials` counts a study's finished trials across runs (COMPLETE, PRUNED, and FAIL with
a recorded error; interrupted trials do not count), so rerunning a finished sweep adds nothing
and rerunning an interrupted one adds only the rest.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

import optuna
from optuna.trial import TrialState

from wmma_gen.defaults import LARGE
from wmma_gen.directive import GemmDirective
from wmma_gen.errors import DeviceError, ScheduleError
from wmma_gen.schedule import Schedule
from wmma_gen.targets import get_target

from .objective import Objective
from .space import params_of

optuna.logging.set_verbosity(optuna.logging.WARNING)

OPS = ("gemm",)
# Known-good starting points enqueued into every new study (those outside the space or illegal
# for the directive are skipped; the objective would prune them anyway).
BASELINES: tuple[Schedule, ...] = (
    LARGE,  # the built-in default: an export never ranks below what gemm() does untuned
    Schedule(),
    Schedule(block_m=128, block_n=128, block_k=32, waves_m=2, waves_n=2),
    Schedule(block_m=64, block_n=128, block_k=32, waves_m=2, waves_n=2),
    Schedule(block_m=128, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2),
)


@dataclass(frozen=True)
class SweepConfig:
    arch: str
    op: str = "gemm"
    dtypes: tuple[str, ...] = ("f16",)
    shapes: tuple[tuple[int, int, int], ...] = ((1024, 1024, 1024),)
    trials: int = 30
    timeout: Optional[float] = None      # seconds for the whole sweep
    device: str = "auto"                 # auto | hip | emu
    storage: str = ""                    # "" -> results/<arch>/optuna.journal; path or RDB URL
    study_name: str = ""                 # prefix of every study name
    workers: int = 1
    seed: int = 0
    results: str = "results"
    domains: Optional[dict] = None       # narrowed knob domains (space.narrow)
    top_k: int = 3
    progress: bool = True

    def __post_init__(self):
        get_target(self.arch)
        if self.op not in OPS:
            raise ScheduleError("op", self.op, f"one of {', '.join(OPS)}")
        for name in ("trials", "workers"):
            if getattr(self, name) < 1:
                raise ScheduleError(name, getattr(self, name), "an integer >= 1")
        if self.device not in ("auto", "hip", "emu"):
            raise ScheduleError("device", self.device, "auto, hip or emu")

    def directives(self) -> list[GemmDirective]:
        return [GemmDirective(dt, m, n, k) for dt in self.dtypes for (m, n, k) in self.shapes]

    @property
    def storage_url(self) -> str:
        return self.storage or str(Path(self.results) / self.arch / "optuna.journal")


def study_name(cfg: SweepConfig, d: GemmDirective) -> str:
    base = f"{d.op}-{cfg.arch}-{d.dtype}-{d.acc}-{d.layout}-{d.m}x{d.n}x{d.k}"
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def is_rdb(url: str) -> bool:
    return "://" in url


def open_storage(url: str):
    if is_rdb(url):
        return optuna.storages.RDBStorage(
            url, heartbeat_interval=30, grace_period=120,
            failed_trial_callback=optuna.storages.RetryFailedTrialCallback(max_retry=2))
    from optuna.storages.journal import JournalFileBackend
    Path(url).parent.mkdir(parents=True, exist_ok=True)
    return optuna.storages.JournalStorage(JournalFileBackend(url))


def sampler(seed: int, n_trials: int, parallel: bool = False):
    """The sweep's sampler (autotune/sampler.py): seeded multivariate TPE without repeats."""
    from .sampler import make
    return make(seed, n_trials, parallel)


def counted(t: optuna.trial.FrozenTrial) -> bool:
    """Does this trial use up budget? (finished, and not an interrupted run's leftover)"""
    if t.state in (TrialState.COMPLETE, TrialState.PRUNED):
        return True
    return t.state == TrialState.FAIL and "error" in t.user_attrs


def n_done(study: optuna.Study) -> int:
    return sum(counted(t) for t in study.get_trials(deepcopy=False))


def open_study(cfg: SweepConfig, storage, d: GemmDirective, worker: int = 0) -> optuna.Study:
    name = study_name(cfg, d)
    seed = (cfg.seed * 1_000_003 + zlib.crc32(name.encode()) + 7919 * worker) % 2**31
    study = optuna.create_study(storage=storage, study_name=name, direction="maximize", load_if_exists=True,
                                sampler=sampler(seed, cfg.trials, parallel=cfg.workers > 1))
    t = get_target(cfg.arch)
    if not study.user_attrs:
        for k, v in {"arch": cfg.arch, "op": cfg.op, "dtype": d.dtype, "directive": d.to_dict(),
                     "peak_tflops": t.peak_tflops(d.dtype), "unit": "TOP/s" if d.is_int else "TFLOP/s",
                     "domains": {k: list(v) for k, v in (cfg.domains or {}).items()}}.items():
            study.set_user_attr(k, v)
    if worker == 0 and not study.get_trials(deepcopy=False):
        for s in BASELINES:
            try:
                params = params_of(s, cfg.domains)
            except ScheduleError:
                continue
            if not s.problems(d, t):
                study.enqueue_trial(params, user_attrs={"baseline": True}, skip_if_exists=True)
    return study


def recover_interrupted(study: optuna.Study) -> int:
    """Journal storage only: RUNNING trials of a dead run -> FAIL (interrupted), params re-enqueued."""
    n = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        study._storage.set_trial_user_attr(t._trial_id, "interrupted", True)
        study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
        if t.params:
            study.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
        n += 1
    return n


class _Owner:
    """`<journal>.owner` holds the pid of the sweep that owns a journal file."""

    def __init__(self, url: str):
        self.path = Path(url + ".owner") if not is_rdb(url) else None
        self.mine = False

    def acquire(self) -> bool:
        if self.path is None:
            return False
        try:
            pid = int(self.path.read_text().strip())
            os.kill(pid, 0)
            if pid != os.getpid():
                return False   # another live sweep owns it: its RUNNING trials are real
        except (FileNotFoundError, ValueError, ProcessLookupError):
            pass
        except PermissionError:
            return False
        self.path.write_text(str(os.getpid()))
        self.mine = True
        return True

    def release(self) -> None:
        if self.mine and self.path is not None:
            self.path.unlink(missing_ok=True)


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
    """Stage overrides passed to every Objective (tests: spies and the corrupt-output hook)."""
    compile: Optional[Callable] = None
    check: Optional[Callable] = None
    estimate: Optional[Callable] = None
    corrupt: Optional[Callable[[Schedule], bool]] = None
    on_trial: Optional[Callable] = None      # (study, frozen_trial) after each trial


def work(cfg: SweepConfig, worker: int = 0, hooks: Hooks | None = None, deadline: float | None = None) -> None:
    """Run every study of the sweep in this process until its budget or the deadline."""
    hooks = hooks or Hooks()
    storage = open_storage(cfg.storage_url)
    device = _device(cfg.device)
    gate_cache: dict = {}
    for d in cfg.directives():
        study = open_study(cfg, storage, d, worker)
        left = cfg.trials - n_done(study)
        if left <= 0:
            continue
        remaining = None if deadline is None else deadline - time.time()
        if remaining is not None and remaining <= 0:
            break
        obj = Objective(d, cfg.arch, device, domains=cfg.domains, compile=hooks.compile, check=hooks.check,
                        estimate=hooks.estimate, corrupt=hooks.corrupt, gate_cache=gate_cache, seed=cfg.seed)

        def budget(st, ft, _n=cfg.trials):
            if hooks.on_trial:
                hooks.on_trial(st, ft)
            if n_done(st) >= _n:
                st.stop()
        study.optimize(obj, n_trials=left, timeout=remaining, catch=(Exception,), callbacks=[budget])


def _child(cfg_dict: dict, worker: int, gpu: Optional[int], deadline: Optional[float]) -> None:
    if gpu is not None:
        os.environ["HIP_VISIBLE_DEVICES"] = str(gpu)   # before anything touches HIP
    cfg_dict["dtypes"] = tuple(cfg_dict["dtypes"])
    cfg_dict["shapes"] = tuple(tuple(s) for s in cfg_dict["shapes"])
    work(SweepConfig(**cfg_dict), worker, None, deadline)


@dataclass
class SweepResult:
    config: SweepConfig
    studies: list = field(default_factory=list)   # optuna.Study, in sweep order
    seconds: float = 0.0
    recovered: int = 0


def run_sweep(cfg: SweepConfig, hooks: Hooks | None = None) -> SweepResult:
    """Run (or resume) the sweep's studies; returns them for the ladder/summary."""
    t0 = time.time()
    deadline = None if cfg.timeout is None else t0 + cfg.timeout
    storage = open_storage(cfg.storage_url)
    owner = _Owner(cfg.storage_url)
    recovered = 0
    try:
        own = owner.acquire()
        studies = [open_study(cfg, storage, d) for d in cfg.directives()]
        if own:
            recovered = sum(recover_interrupted(s) for s in studies)
        total = sum(max(0, cfg.trials - n_done(s)) for s in studies)
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
                work(cfg, 0, Hooks(hooks.compile, hooks.check, hooks.estimate, hooks.corrupt, tick), deadline)
            else:
                if hooks is not None and any(v is not None for v in asdict(hooks).values()):
                    raise ScheduleError("workers", cfg.workers, "1 when stage hooks are given (hooks are in-process)")
                _run_workers(cfg, studies, bar, deadline)
        finally:
            bar.close()
    finally:
        owner.release()
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
