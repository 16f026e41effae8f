"""The trial loop of one study: claim under the budget, dedup, evaluate, record (issues #13, #16).

    run_study(study, objective, trials=..., propose=..., lock=...) -> RunStats

Each trial is *claimed* inside `lock` (storage.claim_lock: a host-wide flock for journal and
sqlite files, a database-wide advisory lock on PostgreSQL), so every process -- on PostgreSQL
every process on every host -- sees every other's claims:
  1. reconcile stale RUNNING trials (reconcile.py);
  2. budget: COMPLETE + PRUNED + FAIL with an error + RUNNING >= trials -> stop
     (an interrupted or over-budget FAIL does not count; its retry does);
  3. study.ask(); on a heartbeat storage record the trial's first heartbeat; stamp the owner
     (pid/host); `propose(trial)` suggests the parameters and returns the schedule's canonical
     JSON, recorded as user attr `schedule_key`;
  4. dedup: if a taken trial (counted, or RUNNING) has the same key -- on PostgreSQL, also if
     the claims table (claims.py) gives the key to another trial -- the new trial is not
     evaluated: it is PRUNED with stage `dedup` and the trial it repeats (it uses budget, so
     a space with nothing new left ends the study instead of spinning).
On PostgreSQL only steps 1-2, the ask and the trial's first heartbeat run under the lock; the
stamp, the proposal and step 4 follow after it is released: the claims table is what keeps a
schedule to one trial there, a trial's liveness is its heartbeat (recorded before the lock is
released, so the "unstamped under the lock" rule of reconcile.py is not used), and the stamp
and a dozen suggested parameters are most of a claim's queries.
Then, outside the lock, the objective runs (with the RDB heartbeat thread) and the outcome is
told: value -> COMPLETE, TrialPruned -> PRUNED, any other exception -> FAIL with its text in
`error` (the objective records it; recorded here if it did not), KeyboardInterrupt -> FAIL
`interrupted`, params re-queued, re-raised. A StorageError (the database is gone for good,
rdb.py) ends the loop. If another worker failed the trial while it ran (its heartbeat lapsed
past the grace period, e.g. the database was unreachable that long), the result is dropped
(`RunStats.lost`): the retry that worker queued evaluates the schedule.

When the budget is reached while other workers' trials are still RUNNING, the loop waits
(polling every few seconds) as long as one of them may still need a retry -- its owner is
alive on this host, or the storage has a heartbeat -- so the trial of a worker killed near the
end is failed and retried by a worker that is still there, not left for the next sweep. On a
journal, trials of other hosts cannot be judged and are not waited for.

Without a lock (MySQL) a claim can race another host's; on every server RDB, as a second guard
behind the lock, a trial whose number lies past the budget among the counted trials before it
is FAILed as `over_budget` (not counted) after ask and the loop stops, so the budget holds.
"""
from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from . import reconcile as rec
from .rdb import ReconnectingRDBStorage, backend_of
from .storage import StorageError

KEY = "schedule_key"


@dataclass
class RunStats:
    evaluated: int = 0
    deduplicated: int = 0
    recovered: int = 0
    over_budget: int = 0
    lost: int = 0          # evaluated, but failed by another worker meanwhile: result dropped
    waited: float = 0.0    # seconds spent waiting for other workers' last trials


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


def _in_use(study, trial_id: int) -> Optional[int]:
    """Number of trial `trial_id` if it still uses budget (claims.Claims.claim asks)."""
    try:
        t = study._storage.get_trial(trial_id)
    except KeyError:
        return None
    return t.number if uses_budget(t) else None


def _others_pending(study, trials) -> bool:
    """A RUNNING trial of another worker that may still need a retry (module doc)."""
    hb = rec.has_heartbeat(study)
    return any(t.state == TrialState.RUNNING and (hb or rec.owner_alive(t.user_attrs)) for t in trials)


def _reserve(study, trials: int, locked: bool, stats: RunStats):
    """Steps 1-3 up to the ask (and the first heartbeat): (trial, None, trials seen), or
    (None, 'budget' | 'wait', trials seen)."""
    all_trials = study.get_trials(deepcopy=False)
    n = rec.reconcile(study, all_trials, locked)
    if n:
        stats.recovered += n
        all_trials = study.get_trials(deepcopy=False)
    if sum(uses_budget(t) for t in all_trials) >= trials:
        return None, ("wait" if _others_pending(study, all_trials) else "budget"), all_trials
    trial = study.ask()
    if rec.has_heartbeat(study):         # before the stamp: a stamped trial always has a heartbeat
        study._storage.record_heartbeat(trial._trial_id)
    return trial, None, all_trials


def _admit(study, trial, trials: int, locked: bool, seen, stats: RunStats):
    """Step 3's stamp and, on a server RDB or without a lock, the budget counted by trial
    number: (trials to dedup against, None), or (None, 'budget') for a trial over budget."""
    rec.stamp(trial)
    if isinstance(backend_of(study._storage), ReconnectingRDBStorage) or not locked:
        before = [t for t in study.get_trials(deepcopy=False) if t.number < trial.number]
        if sum(uses_budget(t) for t in before) >= trials:
            trial.set_user_attr("over_budget", True)
            study.tell(trial, state=TrialState.FAIL)
            stats.over_budget += 1
            return None, "budget"
        if not locked:
            seen = before
    return seen, None


def _propose(study, trial, propose, all_trials, claims, stats: RunStats):
    """Step 3's proposal and step 4: (trial, None) to evaluate or (frozen trial, 'dedup')."""
    key = propose(trial)
    trial.set_user_attr(KEY, key)
    dup = taken(all_trials, key, trial.number)
    if dup is None and claims is not None:
        dup = claims.claim(study._study_id, key, trial._trial_id, trial.number, lambda tid: _in_use(study, tid))
    if dup is not None:
        trial.set_user_attr("stage", "dedup")
        trial.set_user_attr("pruned_reason", f"same schedule as trial {dup}: not evaluated twice")
        stats.deduplicated += 1
        return study.tell(trial, state=TrialState.PRUNED), "dedup"
    return trial, None


def _claim(study, trials: int, propose, lock, stats: RunStats):
    """(trial, None) to evaluate, (None, 'budget') to stop, (None, 'wait') to wait for other
    workers' last trials, or (frozen trial, 'dedup') for a repeat. With a claims table
    (PostgreSQL) only the count, the ask and the first heartbeat run under the lock (module doc)."""
    claims = getattr(backend_of(study._storage), "claims", None)
    with lock() as locked:
        trial, why, seen = _reserve(study, trials, bool(locked), stats)
        if why is None and claims is None:
            seen, why = _admit(study, trial, trials, bool(locked), seen, stats)
            return (None, why) if why else _propose(study, trial, propose, seen, None, stats)
    if why is not None:
        return None, why
    seen, why = _admit(study, trial, trials, True, seen, stats)
    return (None, why) if why else _propose(study, trial, propose, seen, claims, stats)


def _lost(study, trial, stats: RunStats) -> FrozenTrial:
    frozen = study._storage.get_trial(trial._trial_id)
    stats.lost += 1
    why = frozen.user_attrs.get("interrupted") or frozen.user_attrs.get("lost") or "finished elsewhere"
    print(f"warning: trial {trial.number} of {study.study_name} was failed by another worker while this one ran it "
          f"({why}); its result is dropped and its retry evaluates the schedule", file=sys.stderr, flush=True)
    return frozen


def _tell(study, trial, stats: RunStats, value=None, state=None) -> FrozenTrial:
    try:
        return study.tell(trial, value, state=state)
    except (ValueError, UpdateFinishedTrialError):
        if study._storage.get_trial(trial._trial_id).state.is_finished():
            return _lost(study, trial, stats)
        raise


def _evaluate(study, trial, objective, stats: RunStats) -> FrozenTrial:
    from optuna.storages._heartbeat import get_heartbeat_thread
    with get_heartbeat_thread(trial._trial_id, study._storage):
        try:
            value = objective(trial)
        except optuna.TrialPruned:
            return _tell(study, trial, stats, state=TrialState.PRUNED)
        except KeyboardInterrupt:
            frozen = study._storage.get_trial(trial._trial_id)
            rec.fail_and_requeue(study, frozen, "interrupted by the user (KeyboardInterrupt)", lost=False)
            raise
        except StorageError:
            raise
        except UpdateFinishedTrialError:       # the objective wrote to a trial failed meanwhile
            return _lost(study, trial, stats)
        except Exception as e:  # the objective boundary: recorded, never an inf
            try:
                if "error" not in trial.user_attrs:
                    trial.set_user_attr("error", f"{type(e).__name__}: {e}"[:4000])
            except UpdateFinishedTrialError:
                return _lost(study, trial, stats)
            return _tell(study, trial, stats, state=TrialState.FAIL)
    return _tell(study, trial, stats, value)


def _poll_seconds(study) -> float:
    hb = study._storage.get_heartbeat_interval() if rec.has_heartbeat(study) else None
    return float(min(5, hb)) if hb else 0.5


def run_study(study: optuna.Study, objective: Callable, *, trials: int, propose: Callable,
              lock: Callable = contextlib.nullcontext, deadline: float | None = None,
              on_trial: Callable | None = None) -> RunStats:
    """Claim and evaluate trials of `study` until its budget (counted in the storage) or `deadline`.

    propose(trial) -> canonical JSON of the schedule the trial will evaluate (it suggests the
    params, which the objective then reads back unchanged). lock() -> context manager whose
    value says whether claims are serialised (storage.claim_lock)."""
    stats = RunStats()
    while deadline is None or time.time() < deadline:
        trial, why = _claim(study, trials, propose, lock, stats)
        if why == "budget":
            break
        if why == "wait":
            pause = _poll_seconds(study)
            if deadline is not None:
                pause = max(0.0, min(pause, deadline - time.time()))
            time.sleep(pause)
            stats.waited += pause
            continue
        if why == "dedup":
            if on_trial:
                on_trial(study, trial)
            continue
        frozen = _evaluate(study, trial, objective, stats)
        stats.evaluated += 1
        if on_trial:
            on_trial(study, frozen)
    return stats
