"""Database storages: the URL (scheme, driver, wmma_gen's own options) and a storage that
survives a lost server connection (issue #16).

    parse(url)                -> Rdb(url for SQLAlchemy, backend, options, shown)  or StorageError
    ReconnectingRDBStorage    Optuna's RDBStorage whose every call is retried on a lost connection
    Reconnector.call(fn, ...) fn(...), retried with backoff for `reconnect` seconds, then StorageError

Schemes: sqlite:///FILE.db, postgresql://USER:PASSWORD@HOST:PORT/DATABASE (`postgres://` is
taken as its alias; the driver is psycopg 3, else psycopg2: `pip install 'wmma-gen[db]'`), and
mysql://... (opens, but claims on it have no cross-host lock: see claims.py). Anything else is a
one-line StorageError naming the scheme and these.

wmma_gen's options ride in the URL's query and are removed before the driver sees it, so every
worker of a study, on any host, gets them from the one URL they share:
    heartbeat=S   seconds between a running trial's heartbeats (default 30)
    grace=S       a RUNNING trial whose heartbeat is older than this is failed and retried
                  (default 120; must exceed heartbeat)
    reconnect=S   how long a worker keeps retrying a lost server connection (default 60)
e.g. postgresql://tuner@db:5432/sweeps?heartbeat=10&grace=40

A lost connection (the server restarts, the network drops) raises from any storage call; the
call is retried after 0.25 s, 0.5 s, 1 s, ... (doubling, at most 10 s apart, jittered) until
`reconnect` seconds have passed, then the worker stops with one StorageError line saying so.
Once it has given up, every later call fails at once (the worker is on its way out). Reads and
attribute writes are idempotent; a state change or a parameter whose first try committed before
the connection dropped is recognised on retry (the trial already has that state or value). A trial created
by a try whose answer was lost stays RUNNING without an owner or heartbeat; it is failed and
re-queued once the grace period has passed (reconcile.py).
"""
from __future__ import annotations

import functools
import importlib.util
import os
import random
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.storages import RDBStorage

from .storage_error import StorageError

HEARTBEAT_SECONDS, GRACE_SECONDS, RECONNECT_SECONDS = 30, 120, 60.0
OPTION_NAMES = ("heartbeat", "grace", "reconnect")
SUPPORTED = ("use a journal file path, sqlite:///FILE.db or postgresql://USER:PASSWORD@HOST:PORT/DATABASE "
             "(mysql://... opens too, without the cross-host claim lock)")
SERVERS = ("postgresql", "mysql")
ALIASES = {"postgres": "postgresql"}
DRIVERS = {"postgresql": ("psycopg", "psycopg2")}       # tried in this order for a bare postgresql://
INSTALL = {"postgresql": "the psycopg driver: pip install 'wmma-gen[db]'",
           "mysql": "a MySQL driver: pip install mysqlclient (or pymysql, as mysql+pymysql://)"}


def _error(msg: str):
    return StorageError(msg)


@dataclass(frozen=True)
class Options:
    heartbeat: int = HEARTBEAT_SECONDS
    grace: int = GRACE_SECONDS
    reconnect: float = RECONNECT_SECONDS


@dataclass(frozen=True)
class Rdb:
    url: str          # what SQLAlchemy gets: options removed, driver chosen, password kept
    backend: str      # sqlite | postgresql | mysql
    options: Options
    shown: str        # the URL as given, password hidden

    @property
    def server(self) -> bool:
        return self.backend in SERVERS


def hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # unparsable: mask whatever stands between "user:" and "@"
        return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def _options(query: dict, shown: str) -> tuple[dict, Options]:
    rest = dict(query)
    vals = {}
    for name in OPTION_NAMES:
        if name not in rest:
            continue
        text = rest.pop(name)
        text = text[-1] if isinstance(text, tuple) else text
        try:
            v = float(text) if name == "reconnect" else int(text)
        except ValueError:
            v = -1
        if v <= 0:
            raise _error(f"storage URL {shown}: option {name}={text!r} is not allowed: a positive "
                         f"{'number of' if name == 'reconnect' else 'whole number of'} seconds")
        vals[name] = v
    opts = Options(**vals)
    if opts.grace <= opts.heartbeat:
        raise _error(f"storage URL {shown}: grace={opts.grace} must exceed heartbeat={opts.heartbeat} "
                     "(a live trial records a heartbeat every `heartbeat` seconds)")
    return rest, opts


def _driver(u, backend: str, shown: str):
    """`u` with a driver that imports (bare postgresql:// -> psycopg, else psycopg2)."""
    from sqlalchemy.exc import NoSuchModuleError
    if "+" not in u.drivername and backend in DRIVERS:
        for mod in DRIVERS[backend]:
            if importlib.util.find_spec(mod) is not None:
                return u.set(drivername=f"{backend}+{mod}")
        raise _error(f"storage URL {shown} needs {INSTALL[backend]}")
    try:
        dialect = u.get_dialect()
    except NoSuchModuleError:
        raise _error(f"storage URL {shown}: driver {u.drivername!r} is unknown; {SUPPORTED}") from None
    if getattr(dialect, "is_async", False):
        raise _error(f"storage URL {shown}: driver {u.drivername!r} is asynchronous, which Optuna cannot use; "
                     f"{SUPPORTED}")
    try:
        dialect.import_dbapi()
    except ImportError as e:
        raise _error(f"storage URL {shown} needs {INSTALL.get(backend, 'its driver')} ({e})") from None
    return u


def parse(url: str) -> Rdb:
    """The URL checked and split (module doc); raises a one-line StorageError."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError
    shown = hide_password(url)
    scheme = url.split("://", 1)[0]
    try:
        u = make_url(url)
    except (ArgumentError, ValueError) as e:
        raise _error(f"storage URL {shown} cannot be parsed ({str(e).splitlines()[0]}); {SUPPORTED}") from None
    name = u.drivername.split("+", 1)[0]
    backend = ALIASES.get(name, name)
    if backend not in ("sqlite",) + SERVERS:
        raise _error(f"storage URL {shown}: scheme {scheme!r} is not supported; {SUPPORTED}")
    if name != backend:
        u = u.set(drivername=u.drivername.replace(name, backend, 1))
    query, opts = _options(u.query, shown)
    u = u.set(query=query)
    if backend == "sqlite":
        if not u.database or u.database == ":memory:":
            raise _error(f"storage URL {shown}: an in-memory SQLite database lives and dies with one process; "
                         "name a file: sqlite:///FILE.db (or use a journal file path)")
        return Rdb(u.render_as_string(hide_password=False), backend, opts, shown)
    u = _driver(u, backend, shown)
    return Rdb(u.render_as_string(hide_password=False), backend, opts, shown)


def worker_name() -> str:
    return f"wmma-gen {os.getpid()}@{socket.gethostname()}"[:63]


def engine_kwargs(rdb: Rdb) -> dict:
    if rdb.backend == "sqlite":
        return {"connect_args": {"timeout": 60}}          # concurrent sweeps wait, not fail
    args: dict = {"connect_timeout": 10}
    if rdb.backend == "postgresql":
        # client-side keepalives notice a vanished server during a long wait; the server-side
        # ones (options) end the session of a vanished worker, releasing its locks
        args.update(application_name=worker_name(), keepalives=1, keepalives_idle=15, keepalives_interval=5,
                    keepalives_count=3,
                    options="-c tcp_keepalives_idle=15 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3")
    return {"connect_args": args}


# ---- lost connections ----------------------------------------------------------------------
def lost_connection(e: BaseException | None) -> bool:
    """True if `e` (or what caused it) says the server connection is gone or refused, or the
    server aborted a transaction it asks to be retried (deadlock, serialization)."""
    from sqlalchemy import exc
    seen = 0
    while e is not None and seen < 8:
        if isinstance(e, exc.TimeoutError):                 # no pooled connection came back in time
            return True
        if isinstance(e, exc.DBAPIError):
            if e.connection_invalidated:
                return True
            state = getattr(e.orig, "sqlstate", None) or getattr(e.orig, "pgcode", None)
            if isinstance(e, (exc.OperationalError, exc.InterfaceError)):
                # no SQLSTATE: the client could not talk to a server at all; 08: connection
                # exception; 57P: the server shut down; 40: retry the transaction
                return state is None or state[:2] in ("08", "40") or state.startswith("57P")
            return False
        e = e.__cause__
        seen += 1
    return False


class Reconnector:
    """The retry policy of one storage URL in one process (module doc); `for_rdb` shares it
    between the Optuna storage and the claim layer, so once one gives up both do."""
    _BY_URL: dict[str, "Reconnector"] = {}

    @classmethod
    def for_rdb(cls, rdb: Rdb) -> "Reconnector":
        r = cls._BY_URL.get(rdb.url)
        if r is None:
            r = cls._BY_URL[rdb.url] = cls(rdb.shown, rdb.options.reconnect)
        return r

    def __init__(self, shown: str, seconds: float):
        self.shown, self.seconds = shown, seconds
        self.dead: str | None = None
        self._local = threading.local()

    def call(self, fn, *args, **kw):
        if self.dead:
            raise _error(self.dead)
        if getattr(self._local, "inside", False):      # a storage call made by another one
            return fn(*args, **kw)
        self._local.inside = True
        try:
            return self._retry(fn, args, kw)
        finally:
            self._local.inside = False

    def _retry(self, fn, args, kw):
        from sqlalchemy.exc import SQLAlchemyError
        first, tries, delay = None, 0, 0.25
        while True:
            try:
                out = fn(*args, **kw)
            except (SQLAlchemyError, optuna.exceptions.StorageInternalError) as e:
                if not lost_connection(e):
                    raise
                tries += 1
                now = time.monotonic()
                if first is None:
                    first = now
                    print(f"warning: lost the connection to storage {self.shown} "
                          f"({_first_line(e)}); retrying for up to {self.seconds:g} s", file=sys.stderr, flush=True)
                if now - first + delay > self.seconds:
                    self.dead = (f"lost the connection to storage {self.shown} and could not get it back: gave up "
                                 f"after {tries} tries over {now - first:.1f} s (last error: {_first_line(e)}); "
                                 "check the server and the network, then run the same command again -- finished "
                                 "trials are kept, and this worker's running trial is failed and retried")
                    raise _error(self.dead) from None
                time.sleep(delay * (0.8 + 0.4 * random.random()))
                delay = min(2 * delay, 10.0)
                continue
            if first is not None:
                print(f"storage {self.shown}: connection back after {time.monotonic() - first:.1f} s "
                      f"({tries} retries)", file=sys.stderr, flush=True)
            return out


def _first_line(e: BaseException) -> str:
    cause = e
    while getattr(cause, "__cause__", None) is not None and not str(cause).strip():
        cause = cause.__cause__
    orig = getattr(cause, "orig", None) or getattr(e.__cause__, "orig", None)
    text = str(orig if orig is not None else cause).strip()
    return (text.splitlines() or [type(e).__name__])[0][:300]


# Optuna's RDBStorage methods that talk to the database (public ones and the private ones its
# cache wrapper calls); each is retried as a whole, the outermost call only.
RETRIED = ("create_new_study", "delete_study", "set_study_user_attr", "set_study_system_attr",
           "get_study_id_from_name", "get_study_name_from_id", "get_study_directions", "get_study_user_attrs",
           "get_study_system_attrs", "get_trial_user_attrs", "get_trial_system_attrs", "get_all_studies",
           "create_new_trial", "_create_new_trial", "get_trial_param",
           "set_trial_intermediate_value", "set_trial_user_attr", "set_trial_system_attr",
           "get_trial_id_from_study_id_trial_number", "get_trial", "get_all_trials", "_get_trials",
           "get_best_trial", "_get_best_trial_id", "_get_stale_trial_ids")


class ReconnectingRDBStorage(RDBStorage):
    """Optuna's RDBStorage for a server database, each call retried on a lost connection
    (module doc). `claims` is the cross-host claim layer (claims.py) or None."""

    def __init__(self, rdb: Rdb, **kw):
        self.rdb = rdb
        self.claims = None
        self._reconnect = Reconnector.for_rdb(rdb)
        super().__init__(rdb.url, engine_kwargs=engine_kwargs(rdb), heartbeat_interval=rdb.options.heartbeat,
                         grace_period=rdb.options.grace, **kw)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_reconnect", None)
        state["claims"] = None
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._reconnect = Reconnector.for_rdb(self.rdb)

    def set_trial_state_values(self, trial_id, state, values=None) -> bool:
        tries = [0]

        def once():
            tries[0] += 1
            try:
                return RDBStorage.set_trial_state_values(self, trial_id, state, values)
            except UpdateFinishedTrialError:
                if tries[0] > 1 and RDBStorage.get_trial(self, trial_id).state == state:
                    return True     # the try whose answer was lost had committed it
                raise
        return self._reconnect.call(once)

    def _set_trial_param(self, trial_id, param_name, param_value_internal, distribution,
                         previous_distribution=None) -> None:
        from sqlalchemy.exc import IntegrityError
        tries = [0]

        def once():
            tries[0] += 1
            try:
                RDBStorage._set_trial_param(self, trial_id, param_name, param_value_internal, distribution,
                                            previous_distribution)
            except IntegrityError:     # (trial, name) exists: fine if the lost try wrote this value
                if tries[0] == 1 or RDBStorage.get_trial_param(self, trial_id, param_name) != param_value_internal:
                    raise
        self._reconnect.call(once)

    def set_trial_param(self, trial_id, param_name, param_value_internal, distribution) -> None:
        self._set_trial_param(trial_id, param_name, param_value_internal, distribution)

    def record_heartbeat(self, trial_id: int) -> None:
        try:
            self._reconnect.call(RDBStorage.record_heartbeat, self, trial_id)
        except StorageError:
            if threading.current_thread() is not threading.main_thread():
                return      # the heartbeat thread: the worker's own next call reports it and stops
            raise


def _retried(name: str):
    base = getattr(RDBStorage, name)

    @functools.wraps(base)
    def method(self, *args, **kw):
        return self._reconnect.call(base, self, *args, **kw)
    return method


for _name in RETRIED:
    setattr(ReconnectingRDBStorage, _name, _retried(_name))


def backend_of(storage):
    """The RDBStorage behind an Optuna storage (through its cache wrapper), or None."""
    inner = getattr(storage, "_backend", storage)
    return inner if isinstance(inner, RDBStorage) else None


def grace_of(storage) -> int:
    """Seconds after which an unowned or silent RUNNING trial counts as stale."""
    inner = backend_of(storage)
    g = getattr(inner, "grace_period", None) if inner is not None else None
    return int(g) if g else GRACE_SECONDS


def silence_optuna_warnings() -> None:
    """The heartbeat arguments are 'experimental' and ask() with a heartbeat storage warns that
    heartbeats are meant for optimize(); the runner starts the heartbeat itself."""
    import warnings
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")
