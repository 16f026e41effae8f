"""The trial loop of one study: claim under the budget, dedup, evaluate, record (issue #13 item 2).

    run_study(study, objective, trials=..., propose=..., lock=...) -> RunStats

Each trial is *claimed* inside `lock` (storage.claim_lock: one host-wide flock for journal and
sqlite files), so every process on the host sees every other's claims:
  1. reconcile stale RUNNING trials (reconcile.py);
  2. budget: COMPLETE + PRUNED + FAIL with an error + RUNNING >= trials -> stop
     (an interrupted or over-budget FAIL does not count; its retry does);
  3. study.ask(), stamp the owner (pid/host), `propose(trial)` suggests the parameters and
     returns the schedule's canonical JSON, recorded as user attr `schedule_key`;
  4. dedup: if a taken trial (counted, or RUNNING) has the same key, the new trial is not
     evaluated: it is PRUNED with stage `dedup` and the trial it repeats (it uses budget, so
     a space with nothing new left ends the study instead of spinning).
Then, outside the lock, the objective runs (with the RDB heartbeat thread) and the outcome is
told: value -> COMPLETE, TrialPruned -> PRUNED, any other exception -> FAIL with its text in
`error` (the objective records it; recorded here if it did not), KeyboardInterrupt -> FAIL
`interrupted`, params re-queued, re-raised.

Without a lock (a server RDB) a claim can race another host's: after ask, a trial whose
number lies past the budget among the counted trials before it is FAILed as `over_budget`
(not counted) and the loop stops, so the budget still holds.
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from typing import Callable, Optional

import optuna
from optuna.trial import FrozenTrial, TrialState

from . import reconcile as rec

KEY = "schedule_key"


@dataclass
class RunStats:
    evaluated: int = 0
    deduplicated: int = 0
    recovered: int = 0
    over_budget: int = 0


def counted(t: FrozenTrial) -> bool:
    """Finished and uses budget (COMPLETE, PRUNED, or FAIL with a recorded error -- unless it
    was interrupted before Optuna heard of the error: then its retry is what counts)."""
    if t.state in (TrialState.COMPLETE, TrialState.PRUNED):
        return True
    return t.state == TrialState.FAIL and "error" in t.user_attrs and "interrupted" not in t.user_attrs


def uses_budget(t: FrozenTrial) -> bool:
    return counted(t) or t.state == TrialState.RUNNING


def key_of(t: FrozenTrial) -> str:
    """The canonical schedule JSON of a trial (older trials: their schedule attr or params)."""
    ua = t.user_attrs
    if KEY in ua:
        return ua[KEY]
    if isinstance(ua.get("schedule"), dict):
        return json.dumps(ua["schedule"], sort_keys=True)
    return json.dumps({"params": t.params}, sort_keys=True, default=str)


def taken(trials, key: str, number: int) -> Optional[int]:
    """Number of a trial other than `number` that evaluated (or is evaluating) `key`."""
    for t in trials:
        if t.number != number and uses_budget(t) and key_of(t) == key:
            return t.number
    return None


def _claim(study, trials: int, propose, locked: bool, stats: RunStats):
    """(trial, None) to evaluate, (None, 'budget') to stop, or (frozen trial, 'dedup') for a repeat."""
    all_trials = study.get_trials(deepcopy=False)
    n = rec.reconcile(study, all_trials, locked)
    if n:
        stats.recovered += n
        all_trials = study.get_trials(deepcopy=False)
    if sum(uses_budget(t) for t in all_trials) >= trials:
        return None, "budget"
    trial = study.ask()
    rec.stamp(trial)
    if not locked:      # a server RDB: count the claims before ours, by trial number
        before = [t for t in study.get_trials(deepcopy=False) if t.number < trial.number]
        if sum(uses_budget(t) for t in before) >= trials:
            trial.set_user_attr("over_budget", True)
            study.tell(trial, state=TrialState.FAIL)
            stats.over_budget += 1
            return None, "budget"
        all_trials = before
    key = propose(trial)
    trial.set_user_attr(KEY, key)
    dup = taken(all_trials, key, trial.number)
    if dup is not None:
        trial.set_user_attr("stage", "dedup")
        trial.set_user_attr("pruned_reason", f"same schedule as trial {dup}: not evaluated twice")
        stats.deduplicated += 1
        return study.tell(trial, state=TrialState.PRUNED), "dedup"
    return trial, None


def _evaluate(study, trial, objective) -> FrozenTrial:
    from optuna.storages._heartbeat import get_heartbeat_thread
    with get_heartbeat_thread(trial._trial_id, study._storage):
        try:
            value = objective(trial)
        except optuna.TrialPruned:
            return study.tell(trial, state=TrialState.PRUNED)
        except KeyboardInterrupt:
            frozen = study._storage.get_trial(trial._trial_id)
            rec.fail_and_requeue(study, frozen, "interrupted by the user (KeyboardInterrupt)")
            raise
        except Exception as e:  # the objective boundary: recorded, never an inf
            if "error" not in trial.user_attrs:
                trial.set_user_attr("error", f"{type(e).__name__}: {e}"[:4000])
            return study.tell(trial, state=TrialState.FAIL)
    return study.tell(trial, value)


def run_study(study: optuna.Study, objective: Callable, *, trials: int, propose: Callable,
              lock: Callable = contextlib.nullcontext, deadline: float | None = None,
              on_trial: Callable | None = None) -> RunStats:
    """Claim and evaluate trials of `study` until its budget (counted in the storage) or `deadline`.

    propose(trial) -> canonical JSON of the schedule the trial will evaluate (it suggests the
    params, which the objective then reads back unchanged). lock() -> context manager whose
    value says whether claims are serialised (storage.claim_lock)."""
    stats = RunStats()
    while deadline is None or time.time() < deadline:
        with lock() as locked:
            trial, why = _claim(study, trials, propose, bool(locked), stats)
        if why == "budget":
            break
        if why == "dedup":
            if on_trial:
                on_trial(study, trial)
            continue
        frozen = _evaluate(study, trial, objective)
        stats.evaluated += 1
        if on_trial:
            on_trial(study, frozen)
    return stats
