"""Cross-host trial claims on PostgreSQL (issue #16): an advisory lock keeps the budget, a
unique row per (study, schedule) keeps every schedule to one evaluation.

Why both, and why each:
  * The budget is a count over Optuna's own tables (COMPLETE + PRUNED + FAIL with an error +
    RUNNING, less interrupted trials, runner.py): no constraint can express it, so counting and
    asking must not interleave between workers. Every claim therefore runs under one
    session-level advisory lock, pg_advisory_lock(LOCK_SPACE, LOCK_CLAIMS), taken on a
    connection of its own -- the cross-host twin of the flock next to a journal file. The
    server drops it when the holder's session ends, so a kill -9, a crash or a lost host
    (server-side TCP keepalives, set per session in rdb.engine_kwargs) never leaves it held. A
    claim that waits more than LOCK_WAIT seconds stops with an error naming the holder.
  * Dedup must hold even if that lock is lost in the middle of a claim (its connection drops
    and a second worker gets in). The table wmma_gen_claims has the primary key
    (study_id, sha256 of the canonical schedule JSON): two trials can never both own a schedule.
    A row passes to another trial only by compare-and-swap (UPDATE ... WHERE trial_id = the
    previous owner) and only when the previous owner no longer uses budget -- an interrupted
    trial's retry takes over its row; a finished or running owner keeps it.
The same lock also serialises schema creation and study set-up (storage.open_storage,
study.open_study). It is one lock per database, not per study: a claim is a few queries and a
sampler step (tens of milliseconds), far shorter than any trial.
"""
from __future__ import annotations

import contextlib
import hashlib
import sys
from typing import Callable, Optional

from .rdb import Rdb, Reconnector, engine_kwargs, lost_connection, worker_name
from .storage_error import StorageError

LOCK_SPACE = 0x776D6D61          # "wmma": the first key of every wmma_gen advisory lock
LOCK_CLAIMS = 1
LOCK_WAIT = 300                  # seconds a claim waits for the lock before it stops
TABLE = "wmma_gen_claims"

_CLAIMS: dict[str, "Claims"] = {}


def _table():
    from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Text, func
    meta = MetaData()
    return Table(TABLE, meta,
                 Column("study_id", Integer, primary_key=True, autoincrement=False),
                 Column("key_hash", String(64), primary_key=True),
                 Column("trial_id", Integer, nullable=False),
                 Column("trial_number", Integer, nullable=False),
                 Column("schedule_key", Text, nullable=False),
                 Column("worker", String(255), nullable=False),
                 Column("claimed_at", DateTime, nullable=False, server_default=func.now()))


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def for_url(rdb: Rdb) -> "Claims":
    """The one Claims object of this process for a PostgreSQL URL."""
    c = _CLAIMS.get(rdb.url)
    if c is None:
        c = _CLAIMS[rdb.url] = Claims(rdb, Reconnector.for_rdb(rdb))
    return c


class Claims:
    def __init__(self, rdb: Rdb, reconnect: Reconnector):
        self.rdb, self.reconnect = rdb, reconnect
        self.table = _table()
        self._engine = None

    @property
    def engine(self):
        if self._engine is None:
            from sqlalchemy import create_engine
            self._engine = create_engine(self.rdb.url, isolation_level="AUTOCOMMIT", pool_size=1, max_overflow=2,
                                         **engine_kwargs(self.rdb))
        return self._engine

    def create_table(self) -> None:
        self.reconnect.call(self.table.create, self.engine, checkfirst=True)

    # ---- the lock --------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self):
        conn = self.reconnect.call(self._acquire)
        try:
            yield True
        finally:
            self._release(conn)

    def _acquire(self):
        from sqlalchemy import text
        from sqlalchemy.exc import OperationalError
        conn = self.engine.connect()
        try:
            conn.execute(text(f"SET lock_timeout = '{LOCK_WAIT}s'"))
            conn.execute(text("SELECT pg_advisory_lock(:s, :k)"), {"s": LOCK_SPACE, "k": LOCK_CLAIMS})
            conn.execute(text("SET lock_timeout = 0"))
        except OperationalError as e:
            conn.close()
            if lost_connection(e):
                raise
            raise StorageError(f"storage {self.rdb.shown}: the claim lock was not granted within {LOCK_WAIT} s; "
                               f"held by {self._holder() or 'an unknown session'} -- stop that worker if it hangs"
                               ) from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _holder(self) -> str:
        from sqlalchemy import text
        from sqlalchemy.exc import SQLAlchemyError
        try:
            with self.engine.connect() as c:
                row = c.execute(text(
                    "SELECT a.application_name, a.client_addr, a.pid FROM pg_locks l JOIN pg_stat_activity a "
                    "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.classid = :s "
                    "AND l.objid = :k"), {"s": LOCK_SPACE, "k": LOCK_CLAIMS}).first()
        except SQLAlchemyError:   # only for the message
            return ""
        return f"{row[0] or 'a client'} (server pid {row[2]}, from {row[1] or 'a local socket'})" if row else ""

    def _release(self, conn) -> None:
        from sqlalchemy import text
        from sqlalchemy.exc import SQLAlchemyError
        try:
            held = conn.execute(text("SELECT pg_advisory_unlock(:s, :k)"), {"s": LOCK_SPACE, "k": LOCK_CLAIMS}).scalar()
        except SQLAlchemyError as e:
            if not lost_connection(e):
                raise
            held = False
            conn.invalidate()
        finally:
            conn.close()
        if not held:
            print(f"warning: the claim lock on storage {self.rdb.shown} was lost during a claim (its connection "
                  "dropped); the claims table still kept every schedule to one trial and the trial-number check "
                  "kept the budget", file=sys.stderr, flush=True)

    # ---- the table -------------------------------------------------------------------------
    def claim(self, study_id: int, key: str, trial_id: int, number: int,
              owner_in_use: Callable[[int], Optional[int]]) -> Optional[int]:
        """Make trial `trial_id` the owner of (study, key). Returns None when it is, or the number
        of the trial that owns it and still uses budget (`owner_in_use(trial_id)` gives that
        number, or None when the owner was interrupted, went over budget, or is gone)."""
        return self.reconnect.call(self._claim, study_id, key, trial_id, number, owner_in_use)

    def _claim(self, study_id, key, trial_id, number, owner_in_use):
        from sqlalchemy import func, insert, select, update
        from sqlalchemy.exc import IntegrityError
        t, h = self.table, key_hash(key)
        where = (t.c.study_id == study_id) & (t.c.key_hash == h)
        for _ in range(8):
            try:
                with self.engine.connect() as c:
                    c.execute(insert(t).values(study_id=study_id, key_hash=h, trial_id=trial_id, trial_number=number,
                                               schedule_key=key, worker=worker_name()))
                return None
            except IntegrityError:
                pass
            with self.engine.connect() as c:
                row = c.execute(select(t.c.trial_id).where(where)).first()
            if row is None:
                continue
            if row.trial_id == trial_id:
                return None
            held_by = owner_in_use(row.trial_id)
            if held_by is not None:
                return held_by
            with self.engine.connect() as c:
                swapped = c.execute(update(t).where(where & (t.c.trial_id == row.trial_id)).values(
                    trial_id=trial_id, trial_number=number, worker=worker_name(), claimed_at=func.now())).rowcount
            if swapped == 1:
                return None
        raise RuntimeError(f"claims table {TABLE}: the row of study {study_id} kept changing owner")

    def rows(self, study_id: int) -> list[dict]:
        """Every claim of a study (tests and diagnostics)."""
        from sqlalchemy import select
        t = self.table
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(select(t).where(t.c.study_id == study_id))]

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
