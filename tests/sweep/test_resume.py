"""Killing a sweep process mid-run and rerunning keeps every finished trial and adds the rest."""
import os
import signal
import subprocess
import sys
import time

import optuna
from optuna.trial import TrialState

from autotune.study import counted, open_storage

from sweep_helpers import ARCH

TRIALS = 6


def _cmd(results):
    return [sys.executable, "-m", "wmma_gen.cli.main", "sweep", "--arch", ARCH, "--dtypes", "f16",
            "--shapes", "256", "--trials", str(TRIALS), "--device", "emu", "--results", str(results),
            "--no-progress", "--seed", "5"]


def _trials(journal):
    storage = open_storage(str(journal))
    names = optuna.get_all_study_names(storage) if journal.exists() else []
    if not names:
        return []
    return optuna.load_study(study_name=names[0], storage=storage).get_trials()


def test_sigkill_then_rerun_keeps_finished_trials(tmp_path):
    results = tmp_path / "results"
    journal = results / ARCH / "optuna.journal"
    proc = subprocess.Popen(_cmd(results), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            time.sleep(0.2)
            if proc.poll() is not None:
                raise AssertionError(f"sweep ended before it was killed: {proc.stderr.read().decode()[-2000:]}")
            if journal.exists() and sum(counted(t) for t in _trials(journal)) >= 2:
                break
        else:
            raise AssertionError("sweep made no progress in 120 s")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    before = _trials(journal)
    finished = {t.number: (t.state, t.params, t.value) for t in before if counted(t)}
    running = [t.number for t in before if t.state == TrialState.RUNNING]
    assert 2 <= len(finished) < TRIALS

    rerun = subprocess.run(_cmd(results), capture_output=True, text=True, timeout=240)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    after = {t.number: t for t in _trials(journal)}
    for number, (state, params, value) in finished.items():       # nothing finished was lost
        t = after[number]
        assert (t.state, t.params, t.value) == (state, params, value)
    assert sum(counted(t) for t in after.values()) == TRIALS       # and the rest was added
    assert not [t for t in after.values() if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    for number in running:                                          # a killed trial is marked, retried
        assert after[number].state == TrialState.FAIL and after[number].user_attrs.get("interrupted")
        assert any(t.user_attrs.get("retry_of") == number for t in after.values())
    if running:
        assert "re-queued" in rerun.stdout
