"""Where wmma_gen keeps what it builds: compiled kernels (compiler/cache.py, folder kernels/)
and the emulator's compiled WMMA kernel (emu/native, folder native/). The location is
$WMMA_GEN_CACHE_DIR, else $XDG_CACHE_HOME/wmma_gen, else ~/.cache/wmma_gen; its size cap
($WMMA_GEN_CACHE_MAX) is cachetrim.py's."""
from __future__ import annotations

import os
from pathlib import Path


def root() -> Path:
    return Path(os.environ.get("WMMA_GEN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wmma_gen"))
