"""Where wmma_gen keeps a user's files (XDG base directories; issue 25 items 1 and 4).

    data_dir()       $XDG_DATA_HOME/wmma_gen, else ~/.local/share/wmma_gen
    schedules_dir()  <data_dir>/schedules: `wmma-gen export` writes here by default, and the
                     lookup reads it after $WMMA_GEN_SCHEDULES and before the shipped files
    results_dir()    <data_dir>/results: the default `--results` of `wmma-gen sweep` / `ladder`
                     and `--from` of `wmma-gen export` (outside any checkout: a sweep never
                     rewrites tracked files; the bench scripts write the repository's results/)

Computed on every call (the environment may change, e.g. under tests); nothing is created here.
"""
from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """XDG spec: a relative or empty $XDG_DATA_HOME is ignored."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "wmma_gen"


def schedules_dir() -> Path:
    return data_dir() / "schedules"


def results_dir() -> Path:
    return data_dir() / "results"
