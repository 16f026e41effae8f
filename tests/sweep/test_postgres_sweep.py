"""Sweeps shared by several workers on a real PostgreSQL (issue #16): every trial run exactly
once, the budget exact, a killed worker's trial failed by heartbeat and retried by the other
worker, ladders rebuilt from the database alone; the journal file still serves one host.

The workers are separate processes (test_postgres_server.spawn) with a fake objective: what is
under test is coordination. Each test counts: evaluations (a log written by the objective,
outside the database), trials per state, claims-table rows and ladder rows."""
from __future__ import annotations

import collections
import threading

import optuna
import pytest
from optuna.trial import TrialState

from autotune import reconcile as rec
from autotune.rebuild import ladders
from autotune.runner import counted, key_of
from autotune.storage import open_storage

from test_postgres_server import (evaluations, finish, kill9, pg_server, pg_url, spawn, the_study,  # noqa: F401
                                  wait_for, with_options)


def assert_every_schedule_once(trials, log, budget: int) -> None:
    """Budget exact, nothing RUNNING, every evaluation logged once per schedule and matching a
    finished trial, and every interrupted trial retried exactly once."""
    trials = list(trials)
    assert sum(counted(t) for t in trials) == budget
    assert not [t.number for t in trials if t.state == TrialState.RUNNING]
    evals = evaluations(log)
    finished = {t.number for t in trials if "evaluated_by" in t.user_attrs and "interrupted" not in t.user_attrs}
    done = [e for e in evals if e["trial"] in finished]
    assert len({e["key"] for e in done}) == len(done) == len(finished), "a schedule was evaluated twice"
    retries = collections.Counter(t.user_attrs["retry_of"] for t in trials if "retry_of" in t.user_attrs)
    assert set(retries) == {t.number for t in trials if "interrupted" in t.user_attrs}
    assert set(retries.values()) <= {1}


def assert_ladder_complete(url: str, study: optuna.Study, results) -> None:
    """The ladder rebuilt from the database alone holds every COMPLETE trial once (top_k large)."""
    (df,) = ladders(url, arch="gfx1100", op="gemm", top_k=1000).values()
    complete = sorted(t.number for t in study.get_trials() if t.state == TrialState.COMPLETE)
    assert sorted(df["trial"]) == complete
    assert not df.duplicated(["study", "trial"]).any()
    knobs = [c for c in df.columns if c.startswith(("block_", "waves_", "lds", "buffers", "load_bits", "raster",
                                                    "group_m", "split_k", "k_unroll"))]
    assert not df.duplicated(["study"] + knobs).any(), "one schedule holds two ladder rows"
    assert list(df["rank"]) == list(range(1, len(df) + 1))


def test_two_workers_share_one_study_every_trial_runs_once_and_the_ladder_rebuilds(pg_url, tmp_path):
    budget, log, meet = 12, tmp_path / "evals.log", tmp_path / "meet"
    meet.mkdir()
    procs = [spawn(pg_url, tmp_path / f"r{i}", budget, pause=0.3, log=str(log), meet=str(meet), parties=2)
             for i in range(2)]
    for p in procs:
        finish(p)
    study = the_study(pg_url)
    trials = study.get_trials()
    assert_every_schedule_once(trials, log, budget)
    assert len({t.user_attrs["worker_pid"] for t in trials if "evaluated_by" in t.user_attrs}) == 2
    claims = study._storage._backend.claims.rows(study._study_id)
    owners = {r["trial_number"]: r["schedule_key"] for r in claims}
    for t in trials:                          # the claims table gives each evaluated schedule to its trial
        if "evaluated_by" in t.user_attrs:
            assert owners[t.number] == key_of(t)
    assert len(claims) == len({r["schedule_key"] for r in claims})
    assert_ladder_complete(pg_url, study, tmp_path)


def test_kill_9_one_worker_its_trial_fails_by_heartbeat_and_the_other_worker_retries_it(pg_url, tmp_path):
    """The two workers play two hosts (their stamps name different machines), so the only way
    to find the killed one dead is its heartbeat."""
    url = with_options(pg_url, heartbeat=1, grace=3)
    budget, log, mark, meet = 8, tmp_path / "evals.log", tmp_path / "hanging", tmp_path / "meet"
    meet.mkdir()
    both = {"log": str(log), "meet": str(meet), "parties": 2}
    a = spawn(url, tmp_path / "a", budget, host="host-a", hang_at=2, mark=str(mark), pause=0.1, **both)
    b = spawn(url, tmp_path / "b", budget, host="host-b", pause=0.5, **both)
    wait_for(mark, [a, b], "worker a's second evaluation")
    killed = int(mark.read_text())
    kill9(a)
    assert finish(b)["recovered"] >= 1
    study = the_study(url)
    trials = {t.number: t for t in study.get_trials()}
    dead = trials[killed]
    assert dead.state == TrialState.FAIL and dead.user_attrs["interrupted"] == "heartbeat expired"
    assert dead.user_attrs[rec.HOST] == "host-a"
    (retry,) = [t for t in trials.values() if t.user_attrs.get("retry_of") == killed]
    assert retry.user_attrs[rec.HOST] == "host-b" and counted(retry) and retry.params == dead.params
    assert retry.user_attrs["lost_before"] == 1
    assert_every_schedule_once(trials.values(), log, budget)
    assert_ladder_complete(url, study, tmp_path)


def test_a_retry_whose_worker_is_lost_again_is_not_retried_a_second_time(pg_url):
    """Retried once: a schedule that kills every worker running it must not take the sweep down."""
    storage = open_storage(with_options(pg_url, heartbeat=1, grace=2))
    study = optuna.create_study(storage=storage, study_name="s", direction="maximize")
    gone = {rec.PID: 2 ** 22 + 7, rec.HOST: rec.host(), rec.STARTED: "1", rec.PIDNS: rec.pid_namespace()}
    first = study.ask({"x": optuna.distributions.IntDistribution(0, 9)})
    for k, v in gone.items():
        first.set_user_attr(k, v)
    assert rec.reconcile(study) == 1
    retry = study.ask()                                              # pops the re-queued params
    assert retry.user_attrs["retry_of"] == first.number
    assert retry.suggest_int("x", 0, 9) == first.params["x"]
    for k, v in gone.items():
        retry.set_user_attr(k, v)
    assert rec.reconcile(study) == 1
    t = study._storage.get_trial(retry._trial_id)
    assert t.state == TrialState.FAIL and counted(t) and "not retried a second time" in t.user_attrs["error"]
    assert not study.get_trials(states=(TrialState.WAITING,))      # nothing re-queued
    assert not [x for x in study.get_trials() if x.user_attrs.get("retry_of") == retry.number]


def test_the_claims_table_gives_a_schedule_to_one_trial_even_without_the_lock(pg_url):
    """Eight claims of one schedule at once, none holding the lock: exactly one trial owns it;
    when its owner is interrupted, the retry takes the row over, and only it."""
    storage = open_storage(pg_url)
    study = optuna.create_study(storage=storage, study_name="s", direction="maximize")
    claims, key = storage.claims, '{"block_m": 64}'
    trials = [study.ask() for _ in range(8)]

    def in_use(trial_id):
        t = storage.get_trial(trial_id)
        return t.number if t.state == TrialState.RUNNING else None
    results, barrier = {}, threading.Barrier(len(trials))

    def claim(t):
        barrier.wait()
        results[t.number] = claims.claim(study._study_id, key, t._trial_id, t.number, in_use)
    threads = [threading.Thread(target=claim, args=(t,)) for t in trials]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    winners = [n for n, dup in results.items() if dup is None]
    assert len(winners) == 1 and {dup for dup in results.values() if dup is not None} == set(winners)
    owner = next(t for t in trials if t.number == winners[0])
    study.tell(owner, state=TrialState.FAIL)                         # interrupted: no longer uses budget
    others = [t for t in trials if t is not owner]
    assert claims.claim(study._study_id, key, others[0]._trial_id, others[0].number, in_use) is None
    assert claims.claim(study._study_id, key, others[1]._trial_id, others[1].number, in_use) == others[0].number
    (row,) = claims.rows(study._study_id)
    assert row["trial_number"] == others[0].number


def test_the_journal_file_still_serves_two_workers_on_one_host(tmp_path):
    journal = str(tmp_path / "results" / "gfx1100" / "optuna.journal")
    budget, log = 8, tmp_path / "evals.log"
    procs = [spawn(journal, tmp_path / "results", budget, pause=0.2, log=str(log)) for _ in range(2)]
    for p in procs:
        finish(p)
    study = the_study(journal)
    assert_every_schedule_once(study.get_trials(), log, budget)
    assert_ladder_complete(journal, study, tmp_path)


@pytest.mark.parametrize("url,needle", [
    ("redis://localhost:6379/0", "scheme 'redis' is not supported"),
    ("http://example.invalid/db", "scheme 'http' is not supported"),
    ("mongodb+srv://u:secret@host/db", "scheme 'mongodb+srv' is not supported"),
    ("postgresql://u:secret@127.0.0.1:notaport/db", "cannot be parsed"),
    ("postgresql+asyncpg://u:secret@127.0.0.1/db", "asyncpg"),
    ("postgresql+nosuchdriver://u@127.0.0.1/db", "driver 'postgresql+nosuchdriver' is unknown"),
    ("sqlite://", "in-memory SQLite"),
    ("sqlite:///:memory:", "in-memory SQLite"),
    ("postgresql://u:secret@127.0.0.1:1/db", "cannot reach storage"),
    ("postgresql://u@127.0.0.1/db?heartbeat=0", "heartbeat='0' is not allowed"),
    ("postgresql://u@127.0.0.1/db?heartbeat=10&grace=5", "grace=5 must exceed heartbeat=10"),
])
def test_a_bad_storage_url_is_one_line_naming_the_scheme_and_what_is_supported(url, needle):
    import psycopg  # noqa: F401  (the driver is part of the test extra)
    from autotune.storage import StorageError, check
    with pytest.raises(StorageError) as e:
        check(url)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg
    assert "secret" not in msg                                       # the password is never shown
    if "not supported" in needle or "unknown" in needle or "parsed" in needle:
        assert "postgresql://USER:PASSWORD@HOST:PORT/DATABASE" in msg and "sqlite:///FILE.db" in msg


def test_the_url_options_are_taken_out_and_postgres_is_an_alias():
    import psycopg  # noqa: F401  (the driver is part of the test extra)
    from sqlalchemy.engine import make_url

    from autotune.rdb import parse
    r = parse("postgres://tuner:pw@db.example:5433/sweeps?heartbeat=5&grace=20&reconnect=7.5&sslmode=disable")
    u = make_url(r.url)
    assert (r.backend, u.drivername, u.host, u.port, u.database) == ("postgresql", "postgresql+psycopg",
                                                                      "db.example", 5433, "sweeps")
    assert dict(u.query) == {"sslmode": "disable"} and u.password == "pw"
    assert (r.options.heartbeat, r.options.grace, r.options.reconnect) == (5, 20, 7.5)
    assert r.shown.startswith("postgres://tuner:***@db.example:5433/sweeps?") and ":pw@" not in r.shown
    assert (parse("postgresql://h/db").options.heartbeat, parse("postgresql://h/db").options.grace) == (30, 120)
