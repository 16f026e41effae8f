"""Content-addressed on-disk cache of compiled kernels.

One JSON file per key, written to a temp file then os.replace'd (no partial entries).
Each entry stores a sha256 digest of its payload; an entry that fails to parse or whose
digest does not match is reported corrupt and rebuilt by the caller, never loaded.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from pathlib import Path

ENTRY_VERSION = 1


def default_dir() -> Path:
    # Only the cache *location* is configurable; nothing here changes compiled bytes.
    root = os.environ.get("WMMA_GEN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wmma_gen")
    return Path(root) / "kernels"


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

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def load(self, key: str) -> tuple[str, dict | None]:
        """("hit", payload) | ("miss", None) | ("corrupt", None)."""
        p = self.path(key)
        if not p.exists():
            return "miss", None
        try:
            entry = json.loads(p.read_text())
            payload = entry["payload"]
            if entry.get("version") != ENTRY_VERSION or entry.get("key") != key or entry.get("digest") != _digest(payload):
                return "corrupt", None
            payload = dict(payload)
            payload["hsaco"] = base64.b64decode(payload["hsaco"]) if payload.get("hsaco") else None
            return "hit", payload
        except (ValueError, KeyError, TypeError, OSError):
            return "corrupt", None

    def store(self, key: str, payload: dict) -> Path:
        payload = dict(payload)
        payload["hsaco"] = base64.b64encode(payload["hsaco"]).decode() if payload.get("hsaco") else None
        entry = {"version": ENTRY_VERSION, "key": key, "digest": _digest(payload), "payload": payload}
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(entry, f)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return p
