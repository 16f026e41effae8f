"""Compiled kernels for the emulator's hottest instruction, built on first use.

The 16x16x16 WMMA with f32 or i32 accumulators (wmma.c: f16, bf16, iu8, iu4 inputs) costs ~8
numpy passes over strided views per call; in C it is one pass per wave in cache. The source is compiled once per machine with
the system C compiler (`$CC`, default `cc`, as Triton builds its launcher stubs), cached next
to the kernel cache (`$WMMA_GEN_CACHE_DIR` or ~/.cache/wmma_gen, folder native/) under a key
of source, compiler and CPU, and loaded with ctypes. Without a compiler, or with
WMMA_GEN_EMU_NATIVE=0, `library()` is None and the numpy paths run: the same bits, slower
(tests/emu/test_wmma_native.py runs both). A failed build prints one warning line.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ... import cachedir

SOURCE = Path(__file__).with_name("wmma.c")
FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-fno-fast-math")
ABI = 3             # layout of the parameter block (wmma.c ABI); a library with another is not used
_state: dict = {}


def _cpu_id() -> str:
    try:   # -march=native code must not be reused on another CPU sharing the cache folder
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    import platform
    return platform.processor() + platform.machine()


def _compiler_version(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else cc


def _build() -> Path:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise FileNotFoundError(f"no C compiler {cc!r} on PATH (set CC)")
    key = hashlib.sha256("\0".join((SOURCE.read_text(), _compiler_version(cc), " ".join(FLAGS),
                                    _cpu_id())).encode()).hexdigest()[:24]
    out = cachedir.root() / "native" / f"wmma-{key}.so"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=out.parent)
    os.close(fd)
    try:
        r = subprocess.run([cc, *FLAGS, "-o", tmp, str(SOURCE)], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"{cc} failed: {r.stderr.strip()[:500]}")
        os.replace(tmp, out)       # concurrent builders: each renames a whole file over the other
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    lib.wmma_native_abi.restype = ctypes.c_int
    if lib.wmma_native_abi() != ABI:     # a source edited under a running process, say
        raise RuntimeError(f"library ABI {lib.wmma_native_abi()} != {ABI} expected by this wmma_gen")
    lib.wmma_native_call.restype = ctypes.c_int
    lib.wmma_native_call.argtypes = [ctypes.c_void_p]     # the int64 parameter block (see the .c)
    return lib


def library() -> ctypes.CDLL | None:
    """The loaded library, or None (numpy paths) -- built and loaded once per process."""
    if "lib" not in _state:
        _state["lib"], _state["why"] = None, "disabled by WMMA_GEN_EMU_NATIVE=0"
        if os.environ.get("WMMA_GEN_EMU_NATIVE", "1") != "0":
            try:
                path = _build()
                _state["lib"], _state["why"] = _bind(ctypes.CDLL(str(path))), f"loaded {path}"
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                _state["why"] = f"not built ({e})"
                print(f"warning: emulator native WMMA kernel {_state['why']}; using the numpy path "
                      "(same results, slower)", file=sys.stderr, flush=True)
    return _state["lib"]


def status() -> str:
    """One line for benches and reports: which WMMA path the emulator runs and why."""
    lib = library()
    return ("native (C, " if lib is not None else "numpy (") + _state["why"] + ")"


@contextlib.contextmanager
def disabled():
    """Run the numpy paths while inside (benches and tests compare the two side by side)."""
    saved = dict(_state)
    _state.update(lib=None, why="disabled for a comparison")
    try:
        yield
    finally:
        _state.clear()
        _state.update(saved)
