"""Stale RUNNING trials: find them, fail them, re-queue their parameters (issue #13 item 1).

Every trial is stamped, the moment it is claimed, with its owner in user attrs:
    worker_pid, worker_host, worker_started (the process start time from /proc, so a reused
    pid is not mistaken for the owner), worker_pidns (the pid namespace: a container on the
    same host with the same host name cannot judge another's pids)
On a heartbeat storage (RDB) the claim also records the trial's first heartbeat before the
stamp, so every stamped trial there has one. A RUNNING trial is stale when
  * its owner ran on this host and that process is gone (or is a zombie, or the pid now
    belongs to a younger process) -- works on every storage, immediately after a kill -9;
  * the storage has a heartbeat (RDB) and the trial's heartbeat is older than the grace period
    (owner on any host: this is how a worker on another machine is found dead);
  * on a heartbeat storage, it is stamped but has no heartbeat at all and started more than
    the grace period ago (a sweep from before heartbeats were recorded at claim time);
  * its owner stamp is missing or incomplete and either the caller holds the claim lock of a
    file storage (storage.claim_lock: every claim there stamps its trial before releasing that
    lock, so an unstamped RUNNING trial seen under it was claimed by a process that died
    mid-claim) or it started more than the grace period ago (e.g. a sweep from before the
    stamp existed, or a PostgreSQL worker that died between its claim and its stamp).
A trial owned by a live process, or by another host on a journal (no heartbeat), is left alone.

`reconcile` marks each stale trial `interrupted` (the reason), sets it FAIL and enqueues its
parameters (those it had: possibly none, if it died before suggesting) again with `retry_of`;
a FAIL without `error` does not use budget, so the retry runs. A trial is retried once for a
lost worker: when the retry's worker is lost too (`lost_before` >= MAX_LOST), the retry is
FAILed with an `error` instead -- it uses budget and its schedule is never run again, so a
schedule that kills every worker that runs it cannot take the whole sweep down. (An
interruption by the user, KeyboardInterrupt, always re-queues and does not count as lost.)
Two processes reconciling at once cannot both succeed on one trial: a finished trial refuses
updates (UpdateFinishedTrialError), and claims are serialised by storage.claim_lock.
"""
from __future__ import annotations

import datetime as _dt
import os
import socket
from typing import Iterable

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from .rdb import GRACE_SECONDS, backend_of, grace_of

PID, HOST, STARTED, PIDNS = "worker_pid", "worker_host", "worker_started", "worker_pidns"
MAX_LOST = 1          # retries of a trial whose worker was lost


def host() -> str:
    """This machine's name as stamped on trials (a function: the tests play two hosts)."""
    return socket.gethostname()


def pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


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
    return {PID: os.getpid(), HOST: host(), STARTED: process_started(os.getpid()), PIDNS: pid_namespace()}


def stamp(trial: optuna.Trial) -> None:
    for k, v in owner().items():
        trial.set_user_attr(k, v)


def owner_alive(attrs: dict) -> bool | None:
    """True/False for an owner on this host; None when it cannot be told (no stamp, other host)."""
    if PID not in attrs or attrs.get(HOST) != host():
        return None
    if attrs.get(PIDNS) and attrs[PIDNS] != pid_namespace():
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


def has_heartbeat(study: optuna.Study) -> bool:
    from optuna.storages._heartbeat import is_heartbeat_enabled
    return is_heartbeat_enabled(study._storage)


def heartbeat_stale(study: optuna.Study) -> set[int]:
    """Trial ids whose RDB heartbeat expired (empty for storages without heartbeat)."""
    if not has_heartbeat(study):
        return set()
    return set(study._storage._get_stale_trial_ids(study._study_id))


def without_heartbeat(study: optuna.Study, trial_ids: Iterable[int]) -> set[int]:
    """Those of `trial_ids` that have no heartbeat row at all (RDB storages only)."""
    ids = set(trial_ids)
    backend = backend_of(study._storage)
    if not ids or backend is None or not has_heartbeat(study):
        return set()
    from optuna.storages._rdb import models
    from sqlalchemy import select
    col = models.TrialHeartbeatModel.trial_id

    def query():
        with backend.engine.connect() as c:
            return {r[0] for r in c.execute(select(col).where(col.in_(sorted(ids))))}
    reconnect = getattr(backend, "_reconnect", None)
    return ids - (reconnect.call(query) if reconnect else query())


def stale_reason(t: FrozenTrial, hb_stale: set[int], locked: bool = False, hb_missing: set[int] = frozenset(),
                 grace: float = GRACE_SECONDS) -> str | None:
    if t.state != TrialState.RUNNING:
        return None
    ua = t.user_attrs
    alive = owner_alive(ua)
    if alive is False:
        return f"owner pid {ua[PID]} on {ua[HOST]} is gone"
    if t._trial_id in hb_stale:
        return "heartbeat expired"
    if PID in ua and HOST in ua:
        if not alive and t._trial_id in hb_missing and _age(t) > grace:
            return f"no heartbeat recorded and started {_age(t):.0f} s ago"
        return None
    if locked:
        return "claimed but never stamped: its process died while claiming it"
    if _age(t) > grace:
        return f"no owner recorded and started {_age(t):.0f} s ago"
    return None


def fail_and_requeue(study: optuna.Study, t: FrozenTrial, reason: str, lost: bool = True) -> bool:
    """Mark `t` interrupted, FAIL it and enqueue its params; False if someone else got there
    first. `lost`: its worker was lost (not a user interrupt) -- the second time for one
    schedule it is FAILed with an error and not re-queued (module doc)."""
    storage = study._storage
    before = int(t.user_attrs.get("lost_before", 0))
    try:
        if lost and before >= MAX_LOST:
            storage.set_trial_user_attr(t._trial_id, "error", f"worker lost again ({reason}) on a retry of trial "
                                        f"{t.user_attrs.get('retry_of')}: not retried a second time")
            storage.set_trial_user_attr(t._trial_id, "lost", reason)
            return bool(storage.set_trial_state_values(t._trial_id, TrialState.FAIL))
        storage.set_trial_user_attr(t._trial_id, "interrupted", reason)
        if not storage.set_trial_state_values(t._trial_id, TrialState.FAIL):
            return False
    except UpdateFinishedTrialError:
        return False
    params = dict(t.params) or dict(t.system_attrs.get("fixed_params") or {})   # popped, not yet suggested
    study.enqueue_trial(params, user_attrs={"retry_of": t.number, "lost_before": before + lost})
    return True


def reconcile(study: optuna.Study, trials: Iterable[FrozenTrial] | None = None, locked: bool = False) -> int:
    """Fail and re-queue every stale RUNNING trial of `study`; returns how many. `locked`: the
    caller holds the storage's claim lock (see stale_reason). On PostgreSQL (a claims table)
    a trial is stamped after that lock is released (runner.py), so there the lock says nothing
    about an unstamped trial: its heartbeat does."""
    if getattr(backend_of(study._storage), "claims", None) is not None:
        locked = False
    trials = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)) if trials is None else trials
    running = [t for t in trials if t.state == TrialState.RUNNING]
    if not running:
        return 0
    hb = heartbeat_stale(study)
    missing = without_heartbeat(study, [t._trial_id for t in running if PID in t.user_attrs and t._trial_id not in hb])
    grace = grace_of(study._storage)
    n = 0
    for t in running:
        reason = stale_reason(t, hb, locked, missing, grace)
        if reason and fail_and_requeue(study, t, reason):
            n += 1
    return n
