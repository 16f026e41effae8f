"""Toolchain discovery: the MLIR bindings (compiler/mlir_api.py picks the provider) and an
ld.lld for `gpu-module-to-binary{format=bin}`.

`gpu-module-to-binary` runs `<toolkit>/llvm/bin/ld.lld` to link the code object
(DESIGN.md, verified toolchain facts). Providers, in order: $ROCM_PATH or /opt/rocm,
an `ld.lld` on PATH, then the PyPI package `ziglang` (`zig ld.lld`). We build a small
toolkit folder whose llvm/bin/ld.lld forwards to the chosen one.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import CompileError


@dataclass(frozen=True)
class Linker:
    provider: str      # "rocm" | "path" | "ziglang"
    command: tuple     # argv prefix that behaves as ld.lld
    version: str
    toolkit: str       # folder holding llvm/bin/ld.lld for gpu-module-to-binary


def _version(cmd: tuple) -> str:
    try:
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _candidates():
    rocm = os.environ.get("ROCM_PATH") or "/opt/rocm"
    yield "rocm", (str(Path(rocm) / "llvm" / "bin" / "ld.lld"),)
    on_path = shutil.which("ld.lld")
    if on_path:
        yield "path", (on_path,)
    try:
        import ziglang  # noqa: F401  (PyPI package shipping a zig binary with lld inside)
        zig = Path(ziglang.__file__).parent / "zig"
        if zig.exists():
            yield "ziglang", (str(zig), "ld.lld")
    except ImportError:
        pass


def _toolkit_for(cmd: tuple) -> str:
    """A folder with llvm/bin/ld.lld running `cmd` (keyed by cmd so it is reused)."""
    tag = hashlib.sha256(repr(cmd).encode()).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / f"wmma_gen_toolkit_{tag}"
    exe = root / "llvm" / "bin" / "ld.lld"
    if not exe.exists():
        exe.parent.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_suffix(f".tmp{os.getpid()}")
        args = " ".join(f"'{c}'" for c in cmd)
        tmp.write_text(f"#!/bin/sh\nexec {args} \"$@\"\n")
        tmp.chmod(0o755)
        os.replace(tmp, exe)
    return str(root)


@functools.lru_cache(maxsize=1)
def find_linker() -> Linker:
    tried = []
    for provider, cmd in _candidates():
        if provider == "rocm" and not Path(cmd[0]).exists():
            tried.append(f"{provider}: {cmd[0]} missing")
            continue
        ver = _version(cmd)
        if ver:
            root = str(Path(cmd[0]).parents[2]) if provider == "rocm" else _toolkit_for(cmd)
            return Linker(provider, cmd, ver, root)
        tried.append(f"{provider}: {' '.join(cmd)} did not run")
    raise CompileError("no ld.lld found to link the AMD code object",
                       diagnostics="tried: " + "; ".join(tried) +
                       "\nfix: `pip install ziglang`, or `apt-get install lld`, or install ROCm")


def mlir_version() -> str:
    """Identity of the MLIR bindings for the cache key and exports: distribution, provider
    package and the LLVM version it was built from (mlir_api.Provider.identity)."""
    from . import mlir_api
    return mlir_api.provider().identity


@functools.lru_cache(maxsize=1)
def sources_hash() -> str:
    """Hash of wmma_gen's compiler sources: a change there invalidates cached binaries."""
    h = hashlib.sha256()
    for p in sorted(Path(__file__).parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]

