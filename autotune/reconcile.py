"""Stale RUNNING trials: find them, fail them, re-queue their parameters (issue #13 item 1).

Every trial is stamped, the moment it is claimed, with its owner in user attrs:
    worker_pid, worker_host, worker_started (the process start time from /proc, so a reused
    pid is not mistaken for the owner)
A RUNNING trial is stale when
  * its owner ran on this host and that process is gone (or is a zombie, or the pid now
    belongs to a younger process) -- works on every storage, immediately after a kill -9;
  * the storage has a heartbeat (RDB) and the trial's heartbeat expired (owner on any host);
  * its owner stamp is missing or incomplete and either the caller holds the claim lock
    (storage.claim_lock: every claim stamps its trial before releasing that lock, so an
    unstamped RUNNING trial seen under it was claimed by a process that died mid-claim) or
    it started more than GRACE_SECONDS ago (e.g. a sweep from before the stamp existed).
A trial owned by a live process, or by another host on a journal (no heartbeat), is left alone.

`reconcile` marks each stale trial `interrupted` (the reason), sets it FAIL and enqueues its
parameters (those it had: possibly none, if it died before suggesting) again with `retry_of`;
a FAIL without `error` does not use budget, so the retry runs. Two processes reconciling at
once cannot both succeed on one trial: a finished trial refuses updates
(UpdateFinishedTrialError), and claims on file storages are serialised by storage.claim_lock.
"""
from __future__ import annotations

import datetime as _dt
import os
import socket
from typing import Iterable

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from .storage import GRACE_SECONDS

PID, HOST, STARTED = "worker_pid", "worker_host", "worker_started"


def process_started(pid: int) -> str:
    """Start time of `pid` in clock ticks since boot ('' where /proc is unavailable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()       # field 22 of stat(5); [0] here is field 3 (state)
    except (OSError, IndexError):
        return ""


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def owner() -> dict:
    """This process's owner stamp."""
    return {PID: os.getpid(), HOST: socket.gethostname(), STARTED: process_started(os.getpid())}


def stamp(trial: optuna.Trial) -> None:
    for k, v in owner().items():
        trial.set_user_attr(k, v)


def owner_alive(attrs: dict) -> bool | None:
    """True/False for an owner on this host; None when it cannot be told (no stamp, other host)."""
    if PID not in attrs or attrs.get(HOST) != socket.gethostname():
        return None
    pid = int(attrs[PID])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass                              # alive, another user's
    if _zombie(pid):
        return False
    started = attrs.get(STARTED) or ""
    now = process_started(pid)
    return not (started and now and now != started)


def _age(t: FrozenTrial) -> float:
    if t.datetime_start is None:
        return 0.0
    start = t.datetime_start
    now = _dt.datetime.now(start.tzinfo) if start.tzinfo else _dt.datetime.now()
    return (now - start).total_seconds()


def heartbeat_stale(study: optuna.Study) -> set[int]:
    """Trial ids whose RDB heartbeat expired (empty for storages without heartbeat)."""
    from optuna.storages._heartbeat import is_heartbeat_enabled
    storage = study._storage
    if not is_heartbeat_enabled(storage):
        return set()
    return set(storage._get_stale_trial_ids(study._study_id))


def stale_reason(t: FrozenTrial, hb_stale: set[int], locked: bool = False) -> str | None:
    if t.state != TrialState.RUNNING:
        return None
    ua = t.user_attrs
    alive = owner_alive(ua)
    if alive is False:
        return f"owner pid {ua[PID]} on {ua[HOST]} is gone"
    if t._trial_id in hb_stale:
        return "heartbeat expired"
    if PID in ua and HOST in ua:
        return None
    if locked:
        return "claimed but never stamped: its process died while claiming it"
    if _age(t) > GRACE_SECONDS:
        return f"no owner recorded and started {_age(t):.0f} s ago"
    return None


def fail_and_requeue(study: optuna.Study, t: FrozenTrial, reason: str) -> bool:
    """Mark `t` interrupted, FAIL it and enqueue its params; False if someone else got there first."""
    storage = study._storage
    try:
        storage.set_trial_user_attr(t._trial_id, "interrupted", reason)
        if not storage.set_trial_state_values(t._trial_id, TrialState.FAIL):
            return False
    except UpdateFinishedTrialError:
        return False
    params = dict(t.params) or dict(t.system_attrs.get("fixed_params") or {})   # popped, not yet suggested
    study.enqueue_trial(params, user_attrs={"retry_of": t.number})
    return True


def reconcile(study: optuna.Study, trials: Iterable[FrozenTrial] | None = None, locked: bool = False) -> int:
    """Fail and re-queue every stale RUNNING trial of `study`; returns how many. `locked`: the
    caller holds the storage's claim lock (see stale_reason)."""
    trials = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)) if trials is None else trials
    running = [t for t in trials if t.state == TrialState.RUNNING]
    if not running:
        return 0
    hb = heartbeat_stale(study)
    n = 0
    for t in running:
        reason = stale_reason(t, hb, locked)
        if reason and fail_and_requeue(study, t, reason):
            n += 1
    return n
