"""A pool of compile worker processes that a hung or crashing compile cannot take down.

    with CompilePool(workers=2, timeout=600) as pool:
        job = pool.submit(fn, *args)        # fn: a module-level (picklable) function
        outcome = pool.result(job)          # Outcome(status="ok" | "error" | "timeout" | "crashed", ...)

Each worker is one process with its own pipe and runs one job at a time, so every outcome
is attributed to exactly the job that caused it -- which `concurrent.futures.ProcessPoolExecutor`
cannot do: one worker killed by a signal breaks the whole executor and fails every pending
future alike, and it has no way to stop a single hung call. Here:

- a job still running `timeout` seconds after its worker began it is killed (SIGKILL, its
  worker only) -> status "timeout" (a new worker's start-up does not count against the limit;
  one that does not begin its job within STARTUP seconds counts as hung);
- a worker that dies mid-job (segfault, os._exit, OOM kill) -> status "crashed" with its exit
  code or signal;
- an exception raised by the job -> status "error" with its text (never re-raised here);
- dead and killed workers are replaced on the next dispatch; other jobs keep running.

Workers start from the "forkserver" context (a clean server process that imports `preload`
once, before anything creates an MLIR context, and forks each worker from there -- the MLIR
bindings are not forked after use), or "spawn" where forkserver does not exist. Nothing is
inherited from the parent but the environment and sys.path. Jobs are dispatched in
submission order; `result()` also services every other worker (dispatch, time limits), so
the pool makes progress whenever the caller waits on any job.
"""
from __future__ import annotations

import itertools
import multiprocessing as mp
import signal
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Callable, Optional, Sequence

from wmma_gen.errors import ScheduleError

__all__ = ["CompilePool", "Outcome"]

STARTUP = 120.0   # seconds a worker may take to begin a job it was sent (start-up on a loaded host)


@dataclass(frozen=True)
class Outcome:
    status: str              # ok | error | timeout | crashed
    seconds: float           # wall seconds the job ran on its worker (timeout: until it was killed)
    value: object = None     # fn's return value (status ok)
    detail: str = ""         # error text, or what happened to the worker
    pid: int = 0             # the worker that ran the job

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _serve(conn) -> None:
    """Worker loop: (job, fn, args) in, (job, status, value, seconds, detail) out; None stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C belongs to the sweep, which stops the pool
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        job, fn, args = msg
        conn.send((job, "started"))                 # the job's time limit runs from here
        t0 = time.perf_counter()
        try:
            value = fn(*args)
            reply = (job, "ok", value, time.perf_counter() - t0, "")
        except BaseException as e:  # the job's failure is its outcome, reported to the parent
            tb = traceback.format_exception_only(type(e), e)
            reply = (job, "error", None, time.perf_counter() - t0, "".join(tb).strip()[:8000])
        conn.send(reply)


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True, name="wmma-gen-compile")
        self.proc.start()
        child.close()
        self.job: Optional[int] = None
        self.sent = 0.0          # when the job was sent
        self.started = None      # when the worker said it began it (None: not yet)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                self.proc.kill()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


def _exit_text(code: Optional[int]) -> str:
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class CompilePool:
    """`workers` compile processes, one job each at a time; see the module doc."""

    def __init__(self, workers: int, timeout: float, method: str | None = None, preload: Sequence[str] = ()):
        if not isinstance(workers, int) or workers < 1:
            raise ScheduleError("compile_workers", workers, "an integer >= 1 for a pool")
        if not timeout or timeout <= 0:
            raise ScheduleError("compile_timeout", timeout, "seconds > 0")
        method = method or ("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
        if method not in ("forkserver", "spawn"):
            raise ScheduleError("method", method, "forkserver or spawn (the MLIR bindings are not fork-safe)")
        self.ctx = mp.get_context(method)
        if method == "forkserver" and preload:
            self.ctx.set_forkserver_preload(list(preload))
        self.workers, self.timeout, self.method = workers, float(timeout), method
        self._pool: list[_Worker] = []
        self._queue: deque = deque()                 # (job, fn, args) not yet on a worker
        self._done: dict[int, Outcome] = {}
        self._ids = itertools.count()
        self.replaced = 0                            # workers killed or lost and replaced

    # ---- public ----------------------------------------------------------------------------
    def submit(self, fn: Callable, *args) -> int:
        job = next(self._ids)
        self._queue.append((job, fn, args))
        self._dispatch()
        return job

    def result(self, job: int) -> Outcome:
        """Block until `job` has an outcome (never raises for what the job or its worker did)."""
        while job not in self._done:
            if not any(w.job == job for w in self._pool) and not any(q[0] == job for q in self._queue):
                raise ScheduleError("job", job, "a job submitted to this pool whose result was not taken yet")
            self._pump()
        return self._done.pop(job)

    def close(self) -> None:
        """Stop every worker (a busy one is killed); queued jobs are dropped."""
        self._queue.clear()
        for w in self._pool:
            w.stop(kill=w.job is not None)
        self._pool.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- internals -----------------------------------------------------------------------
    def _dispatch(self) -> None:
        while self._queue:
            idle = next((w for w in self._pool if w.job is None), None)
            if idle is None:
                if len(self._pool) >= self.workers:
                    return
                idle = _Worker(self.ctx)
                self._pool.append(idle)
            job, fn, args = self._queue.popleft()
            try:
                idle.conn.send((job, fn, args))
            except OSError:            # the idle worker died meanwhile: replace it, send the job again
                self._retire(idle)
                self._queue.appendleft((job, fn, args))
                continue
            idle.job, idle.sent, idle.started = job, time.monotonic(), None

    def _retire(self, w: _Worker, kill: bool = True) -> None:
        self._pool.remove(w)
        w.stop(kill=kill)
        self.replaced += 1

    def _finish(self, w: _Worker, outcome: Outcome) -> None:
        self._done[w.job] = outcome
        w.job = None

    def _deadline(self, w: _Worker) -> float:
        return w.sent + STARTUP + self.timeout if w.started is None else w.started + self.timeout

    def _pump(self) -> None:
        """Collect finished jobs, detect dead and overdue workers, dispatch queued jobs."""
        busy = [w for w in self._pool if w.job is not None]
        if not busy:
            self._dispatch()
            return
        wait_s = max(0.0, min(self._deadline(w) for w in busy) - time.monotonic())
        ready = set(wait([x for w in busy for x in (w.conn, w.proc.sentinel)], timeout=min(wait_s, 1.0) + 0.01))
        for w in busy:
            if w.conn in ready and self._receive(w):
                continue
            now = time.monotonic()
            if w.conn in ready or w.proc.sentinel in ready:
                w.proc.join(5)
                self._finish(w, Outcome("crashed", now - (w.started or w.sent), None,
                                        f"compile worker pid {w.proc.pid} {_exit_text(w.proc.exitcode)} "
                                        "while compiling", w.proc.pid))
                self._retire(w, kill=True)
            elif now >= self._deadline(w):
                pid, began = w.proc.pid, w.started is not None
                self._finish(w, Outcome("timeout", now - (w.started or w.sent), None,
                                        f"compile did not finish within {self.timeout:g} s; worker pid {pid} "
                                        "killed and replaced" if began else
                                        f"worker pid {pid} did not begin the compile within {STARTUP:g} s of "
                                        "start-up; killed and replaced", pid))
                self._retire(w, kill=True)
        self._dispatch()

    def _receive(self, w: _Worker) -> bool:
        """Read what worker `w` sent: True if it is alive and was heard (start or result)."""
        try:
            while w.conn.poll():
                msg = w.conn.recv()
                if msg[1] == "started":
                    w.started = time.monotonic()
                    continue
                job, status, value, seconds, detail = msg
                self._finish(w, Outcome(status, seconds, value, detail, w.proc.pid))
                return True
        except (EOFError, OSError):
            return False                   # it died while (or instead of) replying
        return w.proc.is_alive()
