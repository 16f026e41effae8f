"""Crash safety of sweeps on journal and sqlite storage (issue #13 items 1, 2): kill -9 mid-trial,
a torn journal tail, damaged storage, two concurrent sweeps on one study.

What is under test is storage logic, so the objective is a fake (`FakeObjective`: it suggests the
schedule exactly as the real objective does, then sleeps instead of compiling); a sweep takes
about two seconds, mostly interpreter start-up. Every test counts trials: none lost, none
evaluated twice, none left RUNNING, and the budget is exact."""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState
from sweep_helpers import ARCH, SHAPE

from autotune.runner import counted, key_of
from wmma_gen.tuner.space import suggest_schedule
from autotune.storage import StorageError, open_storage
from autotune.study import Hooks, SweepConfig, run_sweep
from wmma_gen.ops.gemm.schedule import SPACE, Schedule
from wmma_gen.targets import get_target

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class FakeObjective:
    """Stands in for the sweep's objective (wmma_gen.tuner.objective.SpecObjective: same call shape). Illegal schedules
    are pruned as the real one prunes them; legal ones sleep `pause` seconds and score a value
    derived from the schedule. The `hang_at`-th evaluation in this process writes its trial
    number to `mark` and sleeps until it is killed."""

    def __init__(self, d, p, arch, device, domains=None, pause=0.0, hang_at=0, mark="", **_):
        self.d, self.p, self.target, self.domains = d, p, get_target(arch), domains
        self.pause, self.hang_at, self.mark, self.calls = pause, hang_at, mark, 0

    def __call__(self, trial):
        s = suggest_schedule(trial, self.domains, SPACE, Schedule)
        trial.set_user_attr("schedule", s.to_dict())
        trial.set_user_attr("evaluated_by", os.getpid())
        self.calls += 1
        if self.calls == self.hang_at:
            # written whole, then renamed: the test polls for the file and reads it at once
            Path(self.mark + ".part").write_text(str(trial.number))
            os.replace(self.mark + ".part", self.mark)
            time.sleep(600)
        if s.problems(self.d, self.target, self.p):
            raise optuna.TrialPruned("validate")
        time.sleep(self.pause)
        return float(zlib.crc32(s.to_json().encode()) % 1000)


def config(storage: str, results: Path, trials: int, seed: int = 5) -> SweepConfig:
    return SweepConfig(arch=ARCH, dtypes=("f16",), shapes=(SHAPE,), trials=trials, device="emu",
                       storage=storage, results=str(results), progress=False, seed=seed)


def drive(storage: str, results: str, trials: int, pause: float = 0.0, hang_at: int = 0, mark: str = "") -> None:
    """A sweep process with the fake objective (run by the tests through `python -c`)."""
    fake = functools.partial(FakeObjective, pause=pause, hang_at=hang_at, mark=mark)
    r = run_sweep(config(storage, Path(results), trials), Hooks(objective=fake))
    print(json.dumps({"recovered": r.recovered}))


def spawn(storage, results, trials, **kw) -> subprocess.Popen:
    args = json.dumps([storage, str(results), trials])
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); from test_crash_recovery import drive; "
            f"drive(*json.loads({args!r}), **json.loads({json.dumps(kw)!r}))")
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen, timeout: float = 120) -> dict:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def trials_of(storage: str) -> list:
    st = open_storage(storage, repair=False)
    (name,) = optuna.get_all_study_names(st)
    return optuna.load_study(study_name=name, storage=st).get_trials()


def assert_accounted(trials, budget: int) -> None:
    """Budget exact, nothing left RUNNING, every interrupted trial re-queued (its retry ran or
    waits in the queue behind earlier baselines), no schedule evaluated twice."""
    trials = list(trials)
    assert sum(counted(t) for t in trials) == budget
    assert not [t.number for t in trials if t.state == TrialState.RUNNING]
    retried = {t.user_attrs["retry_of"] for t in trials if "retry_of" in t.user_attrs}
    assert {t.number for t in trials if "interrupted" in t.user_attrs} == retried
    assert all(t.user_attrs.get("baseline") or "retry_of" in t.user_attrs for t in trials if t.state == TrialState.WAITING)
    done = [key_of(t) for t in trials if "evaluated_by" in t.user_attrs and "interrupted" not in t.user_attrs]
    assert len(done) == len(set(done)), "a schedule was evaluated twice"


@pytest.fixture(params=["journal", "sqlite"])
def storage(request, tmp_path):
    if request.param == "journal":
        return str(tmp_path / "results" / ARCH / "optuna.journal")
    return f"sqlite:///{tmp_path / 'sweep.db'}"


def test_kill_9_mid_trial_then_rerun_loses_and_repeats_nothing(storage, tmp_path):
    budget, mark = 6, tmp_path / "hanging"
    p = spawn(storage, tmp_path / "results", budget, hang_at=3, mark=str(mark))
    deadline = time.time() + 90
    while not mark.exists():
        assert p.poll() is None, p.stderr.read()[-3000:]
        assert time.time() < deadline, "the sweep never reached its third evaluation"
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    before = trials_of(storage)
    killed = int(mark.read_text())
    assert [t.number for t in before if t.state == TrialState.RUNNING] == [killed]
    finished = {t.number: (t.state, t.params, t.value) for t in before if counted(t)}
    assert len(finished) >= 2

    assert finish(spawn(storage, tmp_path / "results", budget))["recovered"] == 1
    after = {t.number: t for t in trials_of(storage)}
    for n, (state, params, value) in finished.items():                 # nothing finished was lost
        assert (after[n].state, after[n].params, after[n].value) == (state, params, value)
    assert after[killed].state == TrialState.FAIL and "is gone" in after[killed].user_attrs["interrupted"]
    retry = [t for t in after.values() if t.user_attrs.get("retry_of") == killed]
    assert len(retry) == 1 and counted(retry[0]) and retry[0].params == after[killed].params
    assert_accounted(after.values(), budget)


def test_trial_claimed_but_never_stamped_is_requeued(storage, tmp_path):
    """A process killed inside a claim (after ask, before the owner stamp) leaves an unstamped
    RUNNING trial; the next claim, under the same lock, fails and re-queues it at once."""
    cfg = config(storage, tmp_path / "results", 3)
    run_sweep(cfg, Hooks(objective=FakeObjective))
    st = open_storage(storage)
    (name,) = optuna.get_all_study_names(st)
    orphan = optuna.load_study(study_name=name, storage=st).ask()          # RUNNING, no owner stamp
    r = run_sweep(config(storage, tmp_path / "results", 5), Hooks(objective=FakeObjective))
    t = r.studies[0].trials[orphan.number]
    assert r.recovered == 1 and t.state == TrialState.FAIL and "never stamped" in t.user_attrs["interrupted"]
    assert_accounted(r.studies[0].get_trials(), 5)


def test_stale_rules_owner_host_pid_reuse_heartbeat():
    """Which RUNNING trials reconcile.stale_reason calls stale (no storage needed)."""
    import datetime as dt
    import socket

    from autotune import reconcile as rec

    def running(attrs, started=0.0):
        start = dt.datetime.now() - dt.timedelta(seconds=started)
        return optuna.trial.FrozenTrial(number=0, state=TrialState.RUNNING, value=None, datetime_start=start,
                                        datetime_complete=None, params={}, distributions={}, user_attrs=attrs,
                                        system_attrs={}, intermediate_values={}, trial_id=7)
    me = rec.owner()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    here = socket.gethostname()
    assert rec.stale_reason(running(me), set()) is None                                   # alive: ours
    assert "is gone" in rec.stale_reason(running({**me, rec.PID: dead.pid}), set())       # dead local pid
    assert "is gone" in rec.stale_reason(running({**me, rec.STARTED: "1"}), set())        # pid reused
    other = {rec.PID: 1, rec.HOST: here + "-elsewhere", rec.STARTED: ""}
    assert rec.stale_reason(running(other), set()) is None                                # cannot tell
    assert rec.stale_reason(running(other), {7}) == "heartbeat expired"                   # RDB heartbeat
    assert rec.stale_reason(running({}), set()) is None                                   # young, unowned
    assert "never stamped" in rec.stale_reason(running({}), set(), locked=True)
    assert "no owner" in rec.stale_reason(running({}, started=1e4), set())


def _torn_journal(tmp_path, budget: int) -> tuple[Path, bytes]:
    storage = str(tmp_path / "results" / ARCH / "optuna.journal")
    finish(spawn(storage, tmp_path / "results", budget))
    journal = Path(storage)
    data = journal.read_bytes()
    last = data[:-1].rfind(b"\n") + 1
    return journal, data[:last + (len(data) - last) // 2]       # the last record cut in half


def test_torn_journal_tail_is_cut_backed_up_and_warned_once(tmp_path, capsys):
    journal, torn = _torn_journal(tmp_path, budget=3)
    journal.write_bytes(torn)
    r = run_sweep(config(str(journal), tmp_path / "results", 5), Hooks(objective=FakeObjective))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: journal") and str(journal) in err[0]
    (backup,) = journal.parent.glob("optuna.journal.torn-*.bak")
    assert backup.read_bytes() == torn                           # the original, byte for byte
    assert journal.read_bytes() == torn[:torn.rfind(b"\n") + 1] + journal.read_bytes()[torn.rfind(b"\n") + 1:]
    assert_accounted(r.studies[0].get_trials(), 5)


def test_record_glued_behind_a_torn_one_is_salvaged(tmp_path, capsys):
    journal, torn = _torn_journal(tmp_path, budget=3)
    attr = next(ln for ln in torn.split(b"\n") if b'"sampler_slots"' in ln)   # an idempotent record
    journal.write_bytes(torn + attr + b"\n")                    # what Optuna's next append would do
    r = run_sweep(config(str(journal), tmp_path / "results", 4), Hooks(objective=FakeObjective))
    assert "warning: journal" in capsys.readouterr().err
    assert_accounted(r.studies[0].get_trials(), 4)


@pytest.mark.parametrize("damage,needle", [
    (lambda p: p.write_bytes(b'{"op_code":0,"worker_id":"w","study_name":"x","directions":[1]}\n'
                             b"this is not json\n{\"op_code\":4}\n"), "line 2"),
    (lambda p: p.write_bytes(b"[1, 2, 3]\n" * 3), "line 1"),
    (lambda p: p.mkdir(parents=True), "not a file"),
])
def test_unreadable_journal_is_a_clear_error(tmp_path, damage, needle):
    journal = tmp_path / "j" / "optuna.journal"
    journal.parent.mkdir(parents=True, exist_ok=True)
    damage(journal)
    with pytest.raises(StorageError, match=needle) as e:
        run_sweep(config(str(journal), tmp_path / "results", 2), Hooks(objective=FakeObjective))
    assert str(journal) in str(e.value) and ("move it away" in str(e.value) or "pass a journal" in str(e.value))


def test_sqlite_url_on_a_non_database_file_is_a_clear_error(tmp_path):
    bogus = tmp_path / "notes.db"
    bogus.write_text("hello\n")
    with pytest.raises(StorageError, match="not an SQLite database") as e:
        run_sweep(config(f"sqlite:///{bogus}", tmp_path / "results", 2), Hooks(objective=FakeObjective))
    assert str(bogus) in str(e.value)
    assert bogus.read_text() == "hello\n"


def test_sqlite_url_on_a_zero_length_file_is_an_empty_database(tmp_path):
    # what a second sweep sees while the first one is creating the same database
    fresh = tmp_path / "fresh.db"
    fresh.write_bytes(b"")
    r = run_sweep(config(f"sqlite:///{fresh}", tmp_path / "results", 2), Hooks(objective=FakeObjective))
    assert fresh.read_bytes()[:16] == b"SQLite format 3\x00"
    assert len(trials_of(f"sqlite:///{fresh}")) >= 2, r


def test_two_concurrent_sweeps_share_the_budget_and_never_repeat_a_schedule(storage, tmp_path):
    budget = 10
    procs = [spawn(storage, tmp_path / "results", budget, pause=0.3) for _ in range(2)]
    for p in procs:
        finish(p)
    trials = trials_of(storage)
    assert_accounted(trials, budget)
    assert len({t.user_attrs["worker_pid"] for t in trials if "worker_pid" in t.user_attrs}) == 2
    assert len(trials) <= budget + sum(t.user_attrs.get("stage") == "dedup" for t in trials)
