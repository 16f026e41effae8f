"""The journal's write lock, which a re-run after kill -9 takes at once (task journal5).

Optuna's JournalFileSymlinkLock (optuna/storages/journal/_file.py) is a symlink `<journal>.lock`
that names nobody: a process killed while holding it (kill -9, the OOM killer, a lost SSH session)
leaves it behind, and the next sweep waits out the 30 s grace period before it breaks it (Optuna
logs "taking longer than 10.0 seconds" meanwhile, not why).

OwnedLock is the same lock file, created atomically with its owner inside: a temp file holding
"host boot-id pid start-time nonce" is hard-linked to `<journal>.lock` (link(2) fails with EEXIST
if the lock exists, as symlink(2) does for Optuna's lock, so the two kinds exclude each other;
where hard links fail, a symlink whose target is that line). A waiter that finds a lock naming
this host and boot and a pid that is gone (or reused: the start time in /proc/<pid>/stat differs;
or a zombie) breaks it at once and prints one line naming the holder. A lock from another host or
boot, from a live pid, or without an owner (Optuna's own symlink) keeps Optuna's rule: broken
after `grace_period` seconds without change, also with one line.

Breaking is serialised on this host by an flock on `<journal>.lock.break` (left in place, like the
`.claim` file), and the lock is renamed away only if it is still the file judged stale (same
inode, time and owner line, whose nonce tells a fresh lock on a reused inode apart), so two
re-runs cannot both break it and then remove each other's fresh lock.
"""
from __future__ import annotations

import errno
import fcntl
import os
import socket
import sys
import tempfile
import time
import uuid

from optuna.storages.journal._file import BaseJournalFileLock  # not re-exported; JournalFileBackend takes one

LOCK_SUFFIX = ".lock"          # Optuna's LOCK_FILE_SUFFIX: the same file as its symlink lock
GRACE = 30.0                   # Optuna's default grace_period (JournalFileSymlinkLock)


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks since boot; proc(5)); None if
    there is no such process or no /proc. A zombie counts as gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] == b"Z":
        return None
    return fields[19].decode()


def _alive(pid: int, start: str) -> bool:
    if os.path.isdir("/proc/self"):
        now = _start_time(pid)
        return now is not None and (start == "-" or now == start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _boot_id() -> str:
    """This boot of this machine (/proc/sys/kernel/random/boot_id, random(4)): tells two machines
    with one hostname apart, and a lock from before a reboot."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()[:8] or "-"
    except OSError:
        return "-"


def owner_line() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()} {_boot_id()} {pid} {_start_time(pid) or '-'} {uuid.uuid4().hex}\n"


def ident(lock_file: str) -> tuple | None:
    """What the lock file is now: (inode, device, mtime, content) -- content is the owner line
    of an OwnedLock, the target of Optuna's symlink, or "" if unreadable (another user's lock:
    the grace rule); None if there is no lock file."""
    try:
        st = os.lstat(lock_file)
    except FileNotFoundError:
        return None
    try:
        if os.path.islink(lock_file):
            return st.st_ino, st.st_dev, st.st_mtime_ns, os.readlink(lock_file)
        with open(lock_file) as f:
            st = os.fstat(f.fileno())           # the file read, even if the lock changed since lstat
            return st.st_ino, st.st_dev, st.st_mtime_ns, f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return st.st_ino, st.st_dev, st.st_mtime_ns, ""


def owner_of(content: str) -> tuple[str, str, int, str] | None:
    """(host, boot, pid, start) from an OwnedLock's line; None for Optuna's symlink (a path) or
    anything else."""
    try:
        host, boot, pid, start, _nonce = content.split()
        return host, boot, int(pid), start
    except ValueError:
        return None


def gone(owner: tuple[str, str, int, str]) -> bool:
    """The owner ran on this machine in this boot and its process is gone (or the pid reused)."""
    host, boot, pid, start = owner
    return host == socket.gethostname() and boot == _boot_id() and not _alive(pid, start)


class OwnedLock(BaseJournalFileLock):
    """Optuna journal lock that records its owner; see the module doc."""

    def __init__(self, filepath: str, grace_period: float = GRACE) -> None:
        if grace_period <= 0:
            raise ValueError(f"grace_period={grace_period!r}: must be > 0 seconds")
        self._lock_file = filepath + LOCK_SUFFIX
        self.grace_period = grace_period
        self.broken: str | None = None       # the line printed when a dead owner's lock was taken

    def acquire(self) -> bool:
        sleep, seen, since = 0.001, None, time.monotonic()
        while True:
            if self._try_link():
                return True
            now = ident(self._lock_file)
            if now is None:
                continue                        # released meanwhile: try again at once
            owner = owner_of(now[3])
            if owner and gone(owner):
                self._break(now, f"note: journal lock {self._lock_file} was left by pid {owner[2]} on "
                                 f"{owner[0]}, which is gone; taking it over")
                continue
            if now != seen:
                seen, since = now, time.monotonic()
            elif time.monotonic() - since > self.grace_period:     # Optuna's rule
                holder = f"pid {owner[2]} on {owner[0]}" if owner else "an unknown process"
                self._break(now, f"note: journal lock {self._lock_file} held by {holder} unchanged for "
                                 f"{self.grace_period:g} s; breaking it")
                seen = None
                continue
            time.sleep(sleep)
            sleep = min(sleep * 2, 1.0)

    def release(self) -> None:
        aside = f"{self._lock_file}.{uuid.uuid4().hex}.rename"      # rename first, as Optuna does
        try:
            os.rename(self._lock_file, aside)
        except OSError:
            raise RuntimeError(f"journal lock {self._lock_file} was not held") from None
        os.unlink(aside)

    def _try_link(self) -> bool:
        d, name = os.path.split(os.path.abspath(self._lock_file))
        line = owner_line()
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{name}-owner-")
        try:
            os.write(fd, line.encode())
            os.fchmod(fd, 0o644)                 # other users sharing the journal read the owner
            os.close(fd)
            try:
                os.link(tmp, self._lock_file)
            except OSError as e:
                if e.errno == errno.EEXIST:
                    return False
                os.symlink(line.strip(), self._lock_file)   # no hard links here: the owner as the target
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)

    def _break(self, judged: tuple, line: str) -> None:
        """Remove the lock if it is still the one `judged` stale (one breaker at a time here;
        the owner line's nonce tells a fresh lock on a reused inode apart)."""
        fd = os.open(self._lock_file + ".break", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if ident(self._lock_file) != judged:
                return                           # released, or broken and retaken meanwhile
            aside = f"{self._lock_file}.{uuid.uuid4().hex}.stale"
            os.rename(self._lock_file, aside)
            os.unlink(aside)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self.broken = line
        print(line, file=sys.stderr, flush=True)
