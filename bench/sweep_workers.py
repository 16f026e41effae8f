"""Sweep coordination: trials per second with 1 and 2 worker processes on one study, side by side.

    python bench/sweep_workers.py [--storage postgresql://...] [--trials 16] [--pause 0.5]

Each worker is a separate process running the sweep loop (autotune/runner.py: claim under the
lock, dedup, evaluate, tell) on one small GEMM study, with the objective replaced by a fixed
sleep of --pause seconds (tests/sweep/test_postgres_server.Fake), so what is measured is the
coordination: claims, the lock, the storage round trips. Throughput is the counted trials over
the span from the first trial's start to the last one's end, read from the storage (interpreter
start-up is not in it). "sleep-bound" is what workers/pause would give if coordination cost
nothing; "worker CPU" is the workers' own process time per trial (Optuna's storage calls, the
sampler, the claim), the part that competes for cores. Storages: a journal file (one host) and
PostgreSQL -- --storage, else
$WMMA_GEN_TEST_PG_URL, else a throwaway local server (initdb; skipped if it cannot start).
Host wall time on whatever else the machine is doing: compare the rows of one run.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "sweep"))

from test_postgres_server import ENV, finish, spawn, start_server, the_study  # noqa: E402

from autotune.runner import counted  # noqa: E402


def fresh_database(server: str) -> str:
    import psycopg
    from sqlalchemy.engine import make_url
    name = f"wmma_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return make_url(server).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str, server: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')


def measure(storage: str, workers: int, trials: int, pause: float, work: Path) -> dict:
    procs = [spawn(storage, work / "results", trials, pause=pause, pause_all=True) for _ in range(workers)]
    cpu = sum(finish(p, timeout=1800)["cpu"] for p in procs)
    done = [t for t in the_study(storage).get_trials() if counted(t)]
    span = (max(t.datetime_complete for t in done) - min(t.datetime_start for t in done)).total_seconds()
    return {"workers": workers, "trials": len(done), "seconds": span, "per_s": len(done) / span,
            "cpu_per_trial": cpu / len(done)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--storage", default=os.environ.get(ENV, ""), help="a PostgreSQL server URL (its database is "
                    "left alone: each run uses a fresh database on that server)")
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--pause", type=float, default=0.5, help="seconds each fake trial sleeps")
    args = ap.parse_args()
    stop = None
    server = args.storage
    if not server:
        try:
            server, stop = start_server()
        except RuntimeError as e:
            print(f"PostgreSQL skipped: {e}")
    rows = []
    try:
        for kind in ("journal", "postgresql"):
            if kind == "postgresql" and not server:
                continue
            for workers in (1, 2):
                with tempfile.TemporaryDirectory(prefix="wmma-bench-") as tmp:
                    url = str(Path(tmp) / "optuna.journal") if kind == "journal" else fresh_database(server)
                    try:
                        rows.append({"storage": kind, **measure(url, workers, args.trials, args.pause, Path(tmp))})
                    finally:
                        if kind == "postgresql":
                            drop_database(url, server)
    finally:
        if stop:
            stop()
    print(f"{args.trials} trials per study, fake objective sleeping {args.pause} s (coordination only)\n")
    print(f"{'storage':10} {'workers':>7} {'trials':>6} {'seconds':>8} {'trials/s':>9} {'vs 1 worker':>11} "
          f"{'sleep-bound':>11} {'worker CPU s/trial':>18}")
    for r in rows:
        one = next(x for x in rows if x["storage"] == r["storage"] and x["workers"] == 1)
        print(f"{r['storage']:10} {r['workers']:>7} {r['trials']:>6} {r['seconds']:>8.1f} {r['per_s']:>9.2f} "
              f"{r['per_s'] / one['per_s']:>10.2f}x {r['workers'] / args.pause:>11.2f} {r['cpu_per_trial']:>18.3f}")
    print(f"\n(worker CPU: process time of the workers' sweep loops per counted trial, start-up excluded; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
