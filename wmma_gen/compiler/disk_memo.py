"""Answers a fresh process would otherwise recompute, remembered on disk under cheap facts.

A cached kernel's first launch needs the compile index's key (ops/compile_op.py): digests of
the sources that build MLIR and the toolchain's identity (compile.toolchain_info). Reading every
source file (~300) or running the linker for its version costs each fresh process tens of ms, so
each answer is stored under `<cache>/<kind>/<sha256 of its facts>.txt`, the facts being what
changes when the answer can (file names, sizes and mtimes; an executable's path, size and mtime),
and recomputed when they differ. `FILES_HASHED` counts the source files read in this process
(a warm launch reads none: tests/compile/test_first_call.py).
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from typing import Callable

from .. import cachedir, cachetrim

FILES_HASHED = [0]             # source files read by tree_hash in this process


def remembered(kind: str, facts: str, compute: Callable[[], str]) -> str:
    """The answer stored under (kind, facts), else compute() -- stored when not empty. An
    unusable cache directory only costs the shortcut (the answer is computed every time)."""
    memo = cachedir.root() / kind / f"{hashlib.sha256(facts.encode()).hexdigest()}.txt"
    try:
        known = memo.read_text().strip()
        if known:
            cachetrim.used(memo)        # last use: what the size cap keeps
            return known
    except OSError:
        pass
    value = compute().strip()
    if value:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=memo.parent, prefix=".tmp-")
            with os.fdopen(fd, "w") as f:
                f.write(value)
            os.replace(tmp, memo)           # atomic: a reader sees the whole answer or none
            cachetrim.wrote(memo, len(value))
        except OSError:
            pass
    return value


def _py_files(folder: str) -> list:
    """(path relative to folder, os.DirEntry) of every .py file under it, sorted by path;
    os.scandir (several times faster than rglob + stat), __pycache__ skipped."""
    listed, todo = [], [("", folder)]
    while todo:
        rel, path = todo.pop()
        with os.scandir(path) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                    todo.append((f"{rel}{e.name}/", e.path))
                elif e.name.endswith(".py") and e.is_file():
                    listed.append((f"{rel}{e.name}", e))
    listed.sort(key=lambda x: x[0])
    return listed


@functools.lru_cache(maxsize=None)
def tree_hash(folder: str) -> str:
    """sha256 of every .py file under `folder` (relative names and bytes), read only when a
    file's name, size or mtime changed since it was last computed (once per process)."""
    listed = _py_files(folder)
    facts = "".join(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0" for rel, st in ((r, e.stat()) for r, e in listed))

    def compute() -> str:
        h = hashlib.sha256()
        for rel, e in listed:
            h.update(rel.encode())
            with open(e.path, "rb") as f:
                h.update(f.read())
            FILES_HASHED[0] += 1
        return h.hexdigest()
    return remembered("tree_hash", f"{folder}\0{facts}", compute)
