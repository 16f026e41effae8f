"""Where studies live: check, open and repair a sweep's storage (issue #13 items 1, 6).

    check(url)                 -> None, or StorageError naming the file/URL and what to do
    open_storage(url)          -> Optuna storage (a journal's torn tail is repaired first)
    repair_journal(path)       -> a one-line note if a torn tail was cut, else None
    claim_lock(url)            -> context manager: the host-wide lock every trial claim takes

URL forms
  a path (no "://")   Optuna journal file (append-only JSON lines), the default
                      results/<arch>/optuna.journal. No heartbeat: trials are owned by pid/host.
  sqlite:///rel.db, sqlite:////abs.db
                      RDB on a local file, with heartbeat.
  postgresql://user:password@host:port/database   (pip install 'wmma-gen[db]')
                      RDB on a server, with heartbeat, shared by workers on any number of
                      hosts; reconnects after a lost connection (rdb.py: the URL's options
                      heartbeat=, grace=, reconnect=). mysql://... opens too, without the
                      cross-host claim lock. Any other scheme is a one-line StorageError.

Torn journal tail: a crash or a full disk can cut the last record short. Optuna's reader skips
an unterminated last line, but the next append is glued onto it and from then on every read
dies with a JSONDecodeError. Under the journal's own lock, `repair_journal` keeps the intact
prefix (a complete trailing record without its newline is kept; a record glued behind a torn
one is salvaged), saves the original next to it as `<journal>.torn-<time>.bak`, and prints one
warning line. Anything else that does not read as a journal is a StorageError.

Journal lock: appends and the repair take `<journal>.lock` (journal_lock.OwnedLock, Optuna's lock
file with its owner inside); a re-run after kill -9 breaks a lock whose owner on this host is gone
at once, with one line, instead of waiting out Optuna's 30 s grace period.

Claims: trial claims (budget count + ask + dedup, runner.py) of every process on this host are
serialised by an exclusive flock on `<file>.claim` next to a journal or sqlite file; on
PostgreSQL, of every process on every host, by an advisory lock, with a claims table that keeps
each schedule to one trial even if that lock is lost (claims.py). MySQL has neither; the runner
then checks the budget by trial number.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import optuna

from .storage_error import StorageError  # noqa: F401  (re-exported: callers catch storage.StorageError)

SQLITE_MAGIC = b"SQLite format 3\x00"
RECORD_START = b'{"op_code":'


def is_rdb(url: str) -> bool:
    return "://" in url


def shown(url: str) -> str:
    """The URL with any password hidden."""
    if not is_rdb(url):
        return url
    from .rdb import hide_password
    return hide_password(url)


@functools.lru_cache(maxsize=32)
def rdb_of(url: str):
    """The parsed database URL (rdb.parse; cached: claims ask for it every trial)."""
    from .rdb import parse
    return parse(url)


def local_file(url: str) -> Path | None:
    """The file behind a journal path or a sqlite URL; None for servers and in-memory sqlite."""
    if not is_rdb(url):
        return Path(url)
    if url.startswith("sqlite:"):
        from sqlalchemy.engine import make_url
        try:
            db = make_url(url).database
        except Exception:   # unparsable: check() says why
            return None
        return Path(db) if db and db != ":memory:" else None
    return None


# ---- checks (also the CLI's --storage type function) --------------------------------------
def unwritable(path: Path) -> str | None:
    """Why a file at `path` could not be created (None if it could): the nearest existing
    directory above it must take a new entry -- probed by creating and removing one temp file,
    since permission bits do not tell (root, read-only mounts, /proc)."""
    probe = Path(os.path.abspath(path)).parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a directory"
    try:
        fd, tmp = tempfile.mkstemp(dir=probe, prefix=".wmma_gen_probe_")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        return f"{probe} is not writable ({e.strerror or type(e).__name__})"
    if probe != Path(os.path.abspath(path)).parent:      # what is still missing must be creatable
        try:
            d = Path(tempfile.mkdtemp(dir=probe, prefix=".wmma_gen_probe_"))
            d.rmdir()
        except OSError as e:
            return f"directories cannot be created in {probe} ({e.strerror or type(e).__name__})"
    return None


def _writable_dir(path: Path, what: str) -> None:
    """A file at `path` can be created (nothing is left behind by the check)."""
    why = unwritable(path)
    if why:
        raise StorageError(f"{what} {path}: {why}; choose a writable location")


def check_journal(path: Path, scan: bool = True) -> None:
    if path.exists():
        if not path.is_file():
            raise StorageError(f"journal {path} is not a file: pass a journal file path or an RDB URL")
        if not os.access(path, os.R_OK | os.W_OK):
            raise StorageError(f"journal {path} is not readable and writable: fix its permissions or use another path")
        if scan:
            scan_journal(path.read_bytes(), path)  # raises on damage other than a torn tail
    else:
        _writable_dir(path, "journal")


def check_rdb(url: str, probe: bool = True) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.exc import SQLAlchemyError

    from .rdb import engine_kwargs
    rdb = rdb_of(url)                          # scheme, driver and options: one-line errors
    db = local_file(url)
    if rdb.backend == "sqlite" and db is not None:
        if db.exists():
            # SQLite opens a zero-length file as an empty database, and a second sweep on the same URL can see
            # the file the first one created before its header page is written (CI flake, two concurrent sweeps).
            head = db.read_bytes()[:16] if db.is_file() else None
            if head is None or head not in (b"", SQLITE_MAGIC):
                raise StorageError(f"{rdb.shown}: {db} is not an SQLite database; move it away or name another file")
            if not os.access(db, os.R_OK | os.W_OK):
                raise StorageError(f"{rdb.shown}: {db} is not readable and writable: fix its permissions")
        else:
            _writable_dir(db, f"storage {rdb.shown}:")
        return
    if not probe:
        return
    engine = create_engine(rdb.url, **engine_kwargs(rdb))
    try:
        with engine.connect():
            pass
    except (SQLAlchemyError, OSError) as e:
        from .rdb import _first_line
        raise StorageError(f"cannot reach storage {rdb.shown}: {_first_line(e)}; check host, port, credentials and "
                           "that the server is running") from None
    finally:
        engine.dispose()


def check(url: str, probe: bool = True) -> None:
    if not url or not url.strip():
        raise StorageError("storage URL is empty: pass a journal file path or an RDB URL")
    if is_rdb(url):
        check_rdb(url, probe)
    else:
        check_journal(Path(url))


# ---- journal scan and repair ------------------------------------------------------------
def _record(line: bytes):
    try:
        rec = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("op_code"), int) else None


def _salvage(line: bytes):
    """A record glued behind a torn one: the last '{"op_code":' from which the line parses."""
    at = line.rfind(RECORD_START)
    while at > 0:
        rec = _record(line[at:])
        if rec is not None:
            return line[at:]
        at = line.rfind(RECORD_START, 0, at)
    return None


def scan_journal(data: bytes, path: Path) -> tuple[bytes, int, int]:
    """(repaired bytes, records kept, torn records dropped). Raises StorageError when a line in
    the middle is not a journal record and cannot be salvaged."""
    lines = data.split(b"\n")
    tail = lines.pop()                     # after the last newline: b"" when the file is whole
    kept, dropped = [], 0
    for i, line in enumerate(lines):
        if not line.strip(b"\x00 \r"):
            dropped += bool(line)
            continue
        if _record(line) is not None:
            kept.append(line)
            continue
        fixed = _salvage(line)
        if fixed is not None:
            kept.append(fixed)
            dropped += 1
        elif i == len(lines) - 1 and not tail:
            dropped += 1                   # the last record is garbage: a torn write ended by a newline
        else:
            raise StorageError(f"journal {path} line {i + 1} is not an Optuna journal record (damaged or not a "
                               f"journal): restore it from a backup, move it away to start fresh, or cut it "
                               f"before line {i + 1} (keeps the first {len(kept)} records)")
    if tail.strip(b"\x00 \r"):
        if _record(tail) is not None:
            kept.append(tail)              # complete, only its newline is missing
        else:
            dropped += 1
    out = b"".join(rec + b"\n" for rec in kept)
    return out, len(kept), dropped


def repair_journal(path: str | Path) -> str | None:
    """Cut a torn tail (see module doc); returns the warning line printed, or None if whole."""
    from .journal_lock import OwnedLock
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    data = path.read_bytes()
    if scan_journal(data, path)[0] == data:     # whole (the common case): no lock needed
        return None
    lock = OwnedLock(str(path))
    lock.acquire()                          # no append is in progress while we look and cut
    try:
        data = path.read_bytes()
        fixed, n_kept, dropped = scan_journal(data, path)
        if fixed == data:
            return None
        backup = path.with_name(f"{path.name}.torn-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.bak")
        shutil.copy2(path, backup)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(fixed)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    finally:
        lock.release()
    note = (f"warning: journal {path} had a torn record ({dropped} cut short by a crash or a full disk); "
            f"kept {n_kept} intact records; original saved as {backup.name}")
    print(note, file=sys.stderr, flush=True)
    return note


# ---- open ---------------------------------------------------------------------------------
def open_storage(url: str, repair: bool = True):
    """The Optuna storage for `url`; a journal is repaired first. Raises StorageError."""
    if is_rdb(url):
        return _open_rdb(url)
    from optuna.storages.journal import JournalFileBackend

    from .journal_lock import OwnedLock
    path = Path(url)
    check_journal(path, scan=not repair)          # repair scans (and raises on worse damage)
    path.parent.mkdir(parents=True, exist_ok=True)
    if repair:
        repair_journal(path)
    try:
        storage = optuna.storages.JournalStorage(JournalFileBackend(str(path), lock_obj=OwnedLock(str(path))))
    except Exception as e:
        raise StorageError(f"journal {path} cannot be replayed ({type(e).__name__}: {e}); move it away to start "
                           "fresh or restore a backup") from None
    return storage


def load_studies(storage, url: str) -> list[str]:
    """Names of the studies in `storage` (reads it through once: a damaged one fails here)."""
    try:
        return optuna.get_all_study_names(storage)
    except Exception as e:
        raise StorageError(f"storage {shown(url)} cannot be read ({type(e).__name__}: {e}); move it away "
                           "to start fresh or restore a backup") from None


def _open_rdb(url: str):
    from .rdb import ReconnectingRDBStorage, engine_kwargs, silence_optuna_warnings
    check_rdb(url, probe=False)
    rdb = rdb_of(url)
    silence_optuna_warnings()
    db = local_file(url)
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    try:
        with claim_lock(url):      # two sweeps must not create the schema at once
            if not rdb.server:
                return optuna.storages.RDBStorage(rdb.url, engine_kwargs=engine_kwargs(rdb),
                                                  heartbeat_interval=rdb.options.heartbeat,
                                                  grace_period=rdb.options.grace)
            storage = ReconnectingRDBStorage(rdb)
            if rdb.backend == "postgresql":
                from . import claims
                storage.claims = claims.for_url(rdb)
                storage.claims.create_table()
            return storage
    except StorageError:
        raise
    except Exception as e:   # optuna/sqlalchemy raise many kinds here; all mean "cannot use it"
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise StorageError(f"cannot open storage {rdb.shown}: {first}; check the URL, or start a new "
                           "database (an Optuna schema from another version needs `optuna storage upgrade`)") from None


@contextlib.contextmanager
def claim_lock(url: str):
    """Exclusive lock for trial claims: host-wide flock on a file storage, database-wide
    advisory lock on PostgreSQL (claims.py); a no-op (False) for other servers."""
    f = local_file(url)
    if f is None:
        rdb = rdb_of(url) if is_rdb(url) else None
        if rdb is None or rdb.backend != "postgresql":
            yield False
            return
        from . import claims
        with claims.for_url(rdb).lock():
            yield True
        return
    import fcntl
    f.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(str(f) + ".claim", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
