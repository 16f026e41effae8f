"""Pipelined trial loop: compile the next candidates in a process pool while this process
gates and times the current one (issue #10 item 6).

    run_study_pooled(study, objective, pool=CompilePool(...), submit=..., trials=..., ...)

The loop keeps `pool.workers + 1` trials claimed (runner._claim: budget, dedup, heartbeat,
exactly as the sequential loop): the oldest is evaluated while the others compile. Per trial:

  claim (ask + propose) -> submit compile_candidate(op, directive, schedule JSON, arch) ->
  ... -> outcome of that compile:
    ok      the worker wrote the code object to the shared on-disk compile cache; the
            objective runs unchanged in this process, and its compile stage loads those very
            bytes (same content key) -- so the object gated is the object timed and exported.
    error   the compile raised (CompileError, builder refusal, ...): the objective runs
            unchanged and meets the same error, so the trial is pruned with exactly the
            diagnostics a sequential sweep records.
    timeout / crashed
            the objective is not run (it would hang or crash this process): the trial is
            PRUNED at stage `compile` with the reason (limit, worker pid, exit code or signal)
            in `pruned_reason` and `compile_diagnostics`; the pool replaced the worker.
Every evaluated trial records `compile_worker_seconds` (the compile's wall time in its worker)
and `compile_wait_seconds` (how long this process waited for it).

Trials claimed ahead but not evaluated when the deadline passes, or when the loop is
interrupted, are failed as `interrupted` and re-queued (reconcile.fail_and_requeue), so a
rerun evaluates them; they do not use budget. Samplers see up to `workers` more trials
RUNNING than a sequential sweep would (constant liar is on, sampler.py); start-up and
enqueued trials are proposed the same either way.
"""
from __future__ import annotations

import contextlib
import json
import time
from collections import deque
from typing import Callable, Optional

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from . import reconcile as rec
from .compile_pool import CompilePool, Outcome
from .runner import KEY, RunStats, _claim, _evaluate, _lost, _poll_seconds, _tell

__all__ = ["compile_candidate", "run_study_pooled"]


def compile_candidate(op: str, item, schedule_json: str, arch: str) -> float:
    """Pool job: compile one candidate of study item (directive, problem) through
    ops/compile_op.py -- the objective's compile path, which fills the on-disk cache and its
    index -- and return the seconds it took. Runs in a worker process."""
    from wmma_gen.ops import registry
    from wmma_gen.ops.compile_op import compile_op
    spec = registry.get(op)
    d, p = item
    s = spec.schedule.from_dict(json.loads(schedule_json))
    t0 = time.perf_counter()
    compile_op(spec, d, s, spec.key_of(d, s, spec.make_problem(p)), arch)
    return time.perf_counter() - t0


def _heartbeat(study, trial):
    from optuna.storages._heartbeat import get_heartbeat_thread
    stack = contextlib.ExitStack()
    stack.enter_context(get_heartbeat_thread(trial._trial_id, study._storage))
    return stack


def _prune_unbuilt(study, trial, outcome: Outcome, stats: RunStats) -> FrozenTrial:
    """A compile that timed out or killed its worker: PRUNED with the reason, objective not run."""
    key = trial.user_attrs.get(KEY, "")
    what = "timed out" if outcome.status == "timeout" else "crashed its worker"
    reason = f"compile {what}: {outcome.detail}"
    try:
        trial.set_user_attr("schedule", json.loads(key))
    except ValueError:
        pass
    trial.set_user_attr("stage", "compile")
    trial.set_user_attr("pruned_reason", reason[:2000])
    ua = study.user_attrs
    trial.set_user_attr("compile_diagnostics", "\n".join([
        reason, f"op: {ua.get('op')}  arch: {ua.get('arch')}", f"directive: {json.dumps(ua.get('directive'))}",
        f"problem: {json.dumps(ua.get('problem'))}", f"schedule: {key}", f"seconds on the worker: {outcome.seconds:.1f}",
        "repro (one process, no time limit): autotune.pipeline.compile_candidate(op, (directive, problem), schedule, "
        "arch), "
        "or the sweep with --compile-workers 0"]))
    return _tell(study, trial, stats, state=TrialState.PRUNED)


def _requeue(study, trial, hb, why: str) -> None:
    hb.close()
    frozen = study._storage.get_trial(trial._trial_id)
    if frozen.state == TrialState.RUNNING:
        rec.fail_and_requeue(study, frozen, why, lost=False)


def run_study_pooled(study: optuna.Study, objective: Callable, *, pool: CompilePool, submit: Callable,
                     trials: int, propose: Callable, lock: Callable = contextlib.nullcontext,
                     deadline: float | None = None, on_trial: Callable | None = None) -> RunStats:
    """runner.run_study with compiles ahead in `pool`; submit(trial) -> pool job for the
    trial's schedule (its canonical JSON is trial.user_attrs[KEY]). See the module doc."""
    stats = RunStats()
    pending: deque = deque()          # (trial, job, heartbeat) claimed, compiling or compiled
    claiming = True
    try:
        while True:
            while claiming and len(pending) < pool.workers + 1:
                if deadline is not None and time.time() >= deadline:
                    claiming = False
                    break
                trial, why = _claim(study, trials, propose, lock, stats)
                if why == "budget":
                    claiming = False
                elif why == "wait":
                    if pending:
                        break                  # evaluate what we have; ask again afterwards
                    pause = _poll_seconds(study)
                    if deadline is not None:
                        pause = max(0.0, min(pause, deadline - time.time()))
                    time.sleep(pause)
                    stats.waited += pause
                elif why == "dedup":
                    if on_trial:
                        on_trial(study, trial)
                else:
                    hb = _heartbeat(study, trial)
                    pending.append((trial, submit(trial), hb))
            if not pending:
                if not claiming:
                    break
                continue
            if deadline is not None and time.time() >= deadline:
                break                          # the finally block re-queues what is left
            trial, job, hb = pending[0]
            t0 = time.perf_counter()
            outcome = pool.result(job)         # also dispatches the next queued compile
            pending.popleft()                  # (not before: interrupted while waiting, it is re-queued)
            hb.close()
            frozen = _run_one(study, trial, objective, outcome, time.perf_counter() - t0, stats)
            stats.evaluated += 1
            if on_trial and frozen is not None:
                on_trial(study, frozen)
    finally:
        while pending:
            trial, _, hb = pending.popleft()
            _requeue(study, trial, hb, "claimed ahead by a pooled sweep that stopped (deadline or interrupt) "
                                       "before evaluating it")
    return stats


def _run_one(study, trial, objective, outcome: Outcome, waited: float, stats: RunStats) -> Optional[FrozenTrial]:
    try:
        trial.set_user_attr("compile_worker_seconds", round(outcome.seconds, 4))
        trial.set_user_attr("compile_wait_seconds", round(waited, 4))
        if outcome.status in ("timeout", "crashed"):
            return _prune_unbuilt(study, trial, outcome, stats)
    except UpdateFinishedTrialError:       # failed by another worker while it compiled
        return _lost(study, trial, stats)
    return _evaluate(study, trial, objective, stats)
