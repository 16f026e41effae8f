"""Content-addressed on-disk cache of compiled kernels.

One JSON file per key, written to a temp file then os.replace'd (no partial entries).
Each entry stores a sha256 digest of its payload; an entry that fails to parse or whose
digest does not match is reported corrupt and rebuilt by the caller, never loaded.

A cache directory that cannot be used (not writable, read-only file system, disk full, a file
where the directory should be) does not stop a compile: the cache turns itself off, prints one
warning line per directory and process to stderr, and every compile runs uncached.
The default directory is size-capped, least recently used entries first (cachetrim.py).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from .. import cachedir, cachetrim

ENTRY_VERSION = 2            # 2: the payload is the code object + its metadata (no ISA text)
_WARNED: set[str] = set()      # directories already reported unusable in this process


def _unusable(directory: Path, err: OSError) -> None:
    if str(directory) not in _WARNED:
        _WARNED.add(str(directory))
        why = err.strerror or type(err).__name__
        print(f"warning: kernel cache {directory} cannot be used ({why}); compiling without a cache "
              "(set WMMA_GEN_CACHE_DIR to a writable directory)", file=sys.stderr, flush=True)


def default_dir() -> Path:
    # Only the cache *location* is configurable; nothing here changes compiled bytes.
    return cachedir.root() / "kernels"


def make_key(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def _digest(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class KernelCache:
    def __init__(self, directory: str | os.PathLike | None = None):
        self.dir = Path(directory) if directory else default_dir()
        self.disabled = False        # set when the directory turned out to be unusable

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def load(self, key: str) -> tuple[str, dict | None]:
        """("hit", payload) | ("miss", None) | ("corrupt", None)."""
        if self.disabled:
            return "miss", None
        p = self.path(key)
        try:
            if not p.exists():
                return "miss", None
        except OSError as e:         # e.g. a directory we may not search
            self.disabled = True
            _unusable(self.dir, e)
            return "miss", None
        try:
            entry = json.loads(p.read_text())
            if entry.get("version") != ENTRY_VERSION:   # an older layout: replaced, not corrupt
                return "miss", None
            payload = entry["payload"]
            if entry.get("key") != key or entry.get("digest") != _digest(payload):
                return "corrupt", None
            payload = dict(payload)
            payload["hsaco"] = base64.b64decode(payload["hsaco"]) if payload.get("hsaco") else None
            cachetrim.used(p)          # last use: what the size cap keeps (cachetrim.py)
            return "hit", payload
        except FileNotFoundError:      # removed since it was seen (the size cap): a miss
            return "miss", None
        except (ValueError, KeyError, TypeError, OSError):
            return "corrupt", None

    def store(self, key: str, payload: dict) -> Path | None:
        """Write the entry atomically; None (and the cache off) if the directory is unusable."""
        if self.disabled:
            return None
        payload = dict(payload)
        payload["hsaco"] = base64.b64encode(payload["hsaco"]).decode() if payload.get("hsaco") else None
        entry = {"version": ENTRY_VERSION, "key": key, "digest": _digest(payload), "payload": payload}
        p = self.path(key)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".json")
        except OSError as e:
            self.disabled = True
            _unusable(self.dir, e)
            return None
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(entry, f)
                size = f.tell()
            os.replace(tmp, p)
            cachetrim.wrote(p, size)
        except OSError as e:         # disk full, quota, ...: the compile itself succeeded
            Path(tmp).unlink(missing_ok=True)
            self.disabled = True
            _unusable(self.dir, e)
            return None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return p
