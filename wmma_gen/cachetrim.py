"""A size cap on wmma_gen's on-disk cache (cachedir.root()): the least recently used entries go first.

Capped: the folders wmma_gen writes rebuildable entries into (FOLDERS: the content cache kernels/,
the compile index index/, the disk memo's answers). Not capped: native/ (the emulator's compiled
WMMA library, one per source and compiler, mapped by running processes) and anything else in the
folder (the test suite keeps torch's and triton's caches there).

Last use is an entry's mtime: a read that serves an entry touches it (`used`). A process that
writes an entry checks the cap (`wrote`) when nobody checked this cache for STAMP_AGE seconds
(the stamp file's mtime) or it has itself written a sixteenth of the cap since its last check; a
check over the cap removes the oldest entries down to LOW_WATER of it. The cap is soft: processes
writing at once can pass it by what they write between checks.

Safe with concurrent processes: one trims at a time (an flock on the stamp file; the others skip),
removal is an unlink (a reader with the file open still reads it, one opening it later sees a miss
and rebuilds), writers replace whole files (os.replace), and a temp file being written is never
removed (names starting ".tmp-", younger than an hour).
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

from . import cachedir

try:
    import fcntl
except ImportError:           # not POSIX: trims run unlocked (each removal is still one unlink)
    fcntl = None

ENV = "WMMA_GEN_CACHE_MAX"
DEFAULT = 2 * 2 ** 30          # 2 GiB
FOLDERS = ("kernels", "index", "tree_hash", "tool_version", "provider_dist")
STAMP = ".trimmed"             # mtime: the last check; also the trimmers' lock
STAMP_AGE = 300.0              # seconds between checks of one cache, unless a process wrote cap / 16
LOW_WATER = 0.9                # a trim over the cap removes down to this fraction of it
TEMP_AGE = 3600.0              # a ".tmp-" file younger than this is a write in progress
_UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
_since = [0]                   # bytes this process wrote into the cache since its last check


def limit_bytes() -> int:
    """The cap from $WMMA_GEN_CACHE_MAX (bytes, or a number with K, M, G, T: binary units, an
    optional "iB"/"B"; 0: no cap), else DEFAULT; ValueError naming the variable otherwise."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return DEFAULT
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{ENV}={text!r} is not allowed: a size in bytes, optionally with K, M, G or T "
                         "(binary units, e.g. 2G, 500MiB), or 0 for no cap")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def used(path) -> None:
    """Mark the entry at `path` as just used (its mtime); a cache we may not write is left as is."""
    try:
        os.utime(path)
    except OSError:
        pass


def wrote(path, nbytes: int) -> None:
    """After writing an entry of `nbytes` at `path`: trim the cache when a check is due."""
    root = cachedir.root()
    if not str(path).startswith(str(root) + os.sep):
        return                 # a cache directory named by the caller (KernelCache(dir)): not ours to cap
    cap = limit_bytes()
    if not cap:
        return
    _since[0] += nbytes
    if _since[0] < cap // 16:
        try:
            if time.time() - os.stat(root / STAMP).st_mtime < STAMP_AGE:
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
    _since[0] = 0
    trim(root, cap)


def _entries(root: Path, now: float) -> list:
    """(mtime, size, path) of every file under FOLDERS, but temp files being written."""
    out, todo = [], [str(root / f) for f in FOLDERS]
    while todo:
        try:
            with os.scandir(todo.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            todo.append(e.path)
                            continue
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if e.name.startswith(".tmp-") and now - st.st_mtime < TEMP_AGE:
                        continue
                    out.append((st.st_mtime, st.st_size, e.path))
        except OSError:        # a folder not there (yet), or not ours to read
            continue
    return out


def trim(root=None, cap: int | None = None) -> tuple[int, int]:
    """Remove the least recently used entries when FOLDERS hold more than `cap` bytes, down to
    LOW_WATER of it; (bytes held before, bytes removed). (0, 0) when another process is trimming."""
    root = Path(root) if root is not None else cachedir.root()
    cap = limit_bytes() if cap is None else cap
    if not cap:
        return 0, 0
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / STAMP, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return 0, 0
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:        # another process is trimming this cache
                return 0, 0
        used(root / STAMP)
        now = time.time()
        entries = _entries(root, now)
        total = sum(size for _, size, _ in entries)
        removed = 0
        if total > cap:
            for _, size, path in sorted(entries):
                if total - removed <= cap * LOW_WATER:
                    break
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass           # gone already (another cleaner): its bytes are gone too
                except OSError:
                    continue
                removed += size
        return total, removed
    finally:
        os.close(fd)           # releases the lock
