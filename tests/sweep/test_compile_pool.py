"""The sweep's compile pool (autotune/compile_pool.py, pipeline.py): a compile that hangs or
kills its worker is a pruned trial with its diagnostics and the sweep finishes; with the pool
the gate runs the timed and exported object; start-up trials equal the sequential sweep's."""
import json

import optuna
import pytest
from optuna.trial import TrialState
from pool_fakes import (
    VICTIM,
    crash_on_default,
    double,
    exit_with,
    fail_with,
    hang_on_default,
    sleep_forever,
)
from sweep_helpers import ARCH, SHAPE

from autotune import export, ladder
from autotune.compile_pool import CompilePool
from wmma_gen.ops.gemm.tuning import BASELINES
from autotune.study import Hooks, run_sweep
from wmma_gen.compiler import KernelCache
from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.targets import get_target

# The sweeps here tune only register-staged schedules (a narrowed domain: what the pool does
# does not depend on the kernel's staging, and the tests stay quick).
DOMAINS = {"lds": ("none",)}
LEGAL = [s for s in BASELINES if s.lds == "none" and not s.problems(GemmDirective("f16"), get_target(ARCH), GemmProblem(*SHAPE))]


def _by_schedule(study):
    return {json.dumps(t.user_attrs["schedule"], sort_keys=True): t for t in study.get_trials()
            if t.state.is_finished()}


def test_pool_reports_each_jobs_own_outcome_and_replaces_dead_workers():
    # 1 s: the limit runs from when a worker begins a job, and the other jobs return at once
    with CompilePool(2, timeout=1.0) as pool:
        jobs = [pool.submit(sleep_forever, 0), pool.submit(double, 21), pool.submit(exit_with, 5),
                pool.submit(fail_with, "no such knob"), pool.submit(double, 4)]
        hang, ok, crash, err, after = (pool.result(j) for j in jobs)
        assert (hang.status, ok.status, crash.status, err.status, after.status) == \
               ("timeout", "ok", "crashed", "error", "ok")
        assert ok.value == 42 and after.value == 8
        assert "within 1 s" in hang.detail and f"pid {hang.pid} killed" in hang.detail
        assert "exited with code 5" in crash.detail
        assert err.detail == "ValueError: no such knob"
        assert pool.replaced == 2 and after.pid not in (hang.pid, crash.pid)


def test_pool_refuses_bad_sizes_naming_them():
    with pytest.raises(ScheduleError, match="compile_workers.*0.*>= 1"):
        CompilePool(0, timeout=1.0)
    with pytest.raises(ScheduleError, match="compile_timeout.*-1.*> 0"):
        CompilePool(1, timeout=-1)


def test_hanging_compile_is_pruned_after_the_timeout_and_the_sweep_finishes(small_config):
    # 1 s: only the victim's job hangs; every other job returns at once (pool_fakes), so the limit
    # never meets a real compile
    cfg = small_config(trials=3, compile_workers=1, compile_timeout=1.0, domains=DOMAINS)
    study = run_sweep(cfg, Hooks(pool_compile=hang_on_default)).studies[0]
    trials = _by_schedule(study)
    hung = trials[json.dumps(VICTIM, sort_keys=True)]
    assert hung.state == TrialState.PRUNED and hung.user_attrs["stage"] == "compile"
    assert hung.user_attrs["pruned_reason"].startswith("compile timed out: compile did not finish within 1 s")
    diag = hung.user_attrs["compile_diagnostics"]
    assert json.dumps(VICTIM, sort_keys=True) in diag and '"m": 256' in diag and "arch: gfx1100" in diag
    others = [t for t in trials.values() if t is not hung]
    assert len(trials) == 3 and others and all(t.state == TrialState.COMPLETE for t in others), \
        [(t.number, t.state, t.user_attrs.get("pruned_reason"), t.user_attrs.get("error")) for t in others]


def test_compile_that_kills_its_worker_is_pruned_and_the_sweep_goes_on(small_config):
    cfg = small_config(trials=3, compile_workers=1, domains=DOMAINS)
    study = run_sweep(cfg, Hooks(pool_compile=crash_on_default)).studies[0]
    trials = _by_schedule(study)
    dead = trials[json.dumps(VICTIM, sort_keys=True)]
    assert dead.state == TrialState.PRUNED and dead.user_attrs["stage"] == "compile"
    assert "crashed its worker" in dead.user_attrs["pruned_reason"]
    assert "exited with code 3" in dead.user_attrs["pruned_reason"]
    later = [t for t in trials.values() if t.number > dead.number]
    assert later and all(t.state == TrialState.COMPLETE for t in later)   # a replaced worker compiled them


def test_with_the_pool_the_gate_runs_the_timed_and_exported_object(small_config, tmp_path):
    cfg = small_config(trials=3, compile_workers=2, domains=DOMAINS)
    study = run_sweep(cfg).studies[0]
    done = [t for t in study.get_trials() if t.state == TrialState.COMPLETE]
    assert len(done) == 3
    for t in done:
        ua = t.user_attrs
        assert ua["gate_isa_hash"] == ua["isa_hash"] and ua["validated"] is True
        assert ua["compile_worker_seconds"] > 0
        assert KernelCache().path(ua["isa_hash"]).exists()       # the pool's object, in the shared cache
    notes = []
    export.export(ladder.build([study]), cfg.arch, tmp_path / "schedules", note=notes.append)
    out = tmp_path / "schedules" / f"{cfg.arch}-gemm-f16.json"
    if out.exists():                  # an exported entry is the object the pool built and the gate ran
        doc = json.loads(out.read_text())
        assert doc["entries"] and {e["isa_hash"] for e in doc["entries"]} <= {t.user_attrs["isa_hash"] for t in done}
    else:                             # register-staged tiles may all lose to the (grid-filling) default: said so
        assert any("does not beat the default" in n for n in notes), notes


def test_baseline_trials_equal_the_sequential_sweeps(small_config, tmp_path):
    n = len(LEGAL)
    rows = {}
    for workers in (0, 2):
        cfg = small_config(trials=n, compile_workers=workers, results=str(tmp_path / f"r{workers}"), domains=DOMAINS)
        rows[workers] = [(t.number, t.state, t.params, t.value, t.user_attrs.get("isa_hash"))
                         for t in run_sweep(cfg).studies[0].get_trials()]
    assert len(rows[0]) == n and rows[0] == rows[2]


def test_sweep_config_refuses_bad_pool_settings_naming_them(small_config):
    with pytest.raises(ScheduleError, match="compile_workers.*-1.*from 0 .in-process. to 256"):
        small_config(compile_workers=-1)
    with pytest.raises(ScheduleError, match="compile_timeout.*0.*seconds > 0"):
        small_config(compile_timeout=0)


def test_cli_sweep_with_a_compile_pool_records_pooled_compiles(tmp_path, capsys):
    from autotune.storage import open_storage
    from wmma_gen.cli.main import main
    res = tmp_path / "results"
    rc = main(["sweep", "--arch", ARCH, "--dtypes", "f16", "--shapes", "256", "--trials", "2", "--device", "emu",
               "--results", str(res), "--no-progress", "--compile-workers", "1", "--compile-timeout", "300"])
    assert rc == 0, capsys.readouterr()
    storage = open_storage(str(res / ARCH / "optuna.journal"))
    trials = [t for s in optuna.get_all_study_summaries(storage)
              for t in optuna.load_study(study_name=s.study_name, storage=storage).get_trials()
              if t.state.is_finished()]
    assert len(trials) == 2 and all(t.user_attrs["compile_worker_seconds"] > 0 for t in trials)


def test_trials_claimed_ahead_are_requeued_when_the_sweep_is_interrupted():
    from autotune.pipeline import run_study_pooled
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=1))

    def propose(trial):
        return json.dumps({"x": trial.suggest_int("x", 0, 10**6)})

    def objective(trial):
        raise KeyboardInterrupt     # Ctrl-C while the first trial is gated

    with CompilePool(2, timeout=60.0) as pool, pytest.raises(KeyboardInterrupt):
        run_study_pooled(study, objective, pool=pool, submit=lambda tr: pool.submit(double, 1), trials=10,
                         propose=propose)
    trials = study.get_trials()
    failed = [t for t in trials if t.state == TrialState.FAIL]
    assert len(failed) == 3                     # the one gated + the two compiling ahead (2 workers)
    assert all("interrupted" in t.user_attrs for t in failed)
    waiting = [t for t in trials if t.state == TrialState.WAITING]
    assert sorted(t.params["x"] for t in failed) == sorted(t.system_attrs["fixed_params"]["x"] for t in waiting)
    assert not [t for t in trials if t.state == TrialState.RUNNING]


@pytest.mark.parametrize("op", ["attention", "attention_bwd"])
def test_attention_ops_compile_in_the_pool_and_gate_the_ranked_object(tmp_path, op):
    from autotune.study import SweepConfig
    cfg = SweepConfig(arch=ARCH, op=op, dtypes=("f16",), head_dims=(64,), seqs=(256,), causal=(True,), trials=2,
                      device="emu", results=str(tmp_path / "results"), progress=False, compile_workers=1)
    (study,) = run_sweep(cfg).studies
    done = [t for t in study.get_trials() if t.state == TrialState.COMPLETE]
    assert done, [t.user_attrs.get("pruned_reason") or t.user_attrs.get("error") for t in study.get_trials()]
    for t in done:
        ua = t.user_attrs
        assert ua["gate_isa_hash"] == ua["isa_hash"] and ua["compile_worker_seconds"] > 0
