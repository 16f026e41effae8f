"""Toolchain discovery: the MLIR bindings (compiler/mlir_api.py picks the provider) and an
ld.lld for `gpu-module-to-binary{format=bin}`.

`gpu-module-to-binary` runs `<toolkit>/llvm/bin/ld.lld` to link the code object
(DESIGN.md, verified toolchain facts). Providers, in order: $ROCM_PATH or /opt/rocm,
an `ld.lld` on PATH, then the PyPI package `ziglang` (`zig ld.lld`). We build a small
toolkit folder whose llvm/bin/ld.lld forwards to the chosen one, in a per-user private directory
(0700, owner checked: `private_dir`) and verified before use (`_trusted`): a predictable path in
the shared temp dir could otherwise be planted by another user and run by our compile.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import CompileError
from .disk_memo import remembered, tree_hash


@dataclass(frozen=True)
class Linker:
    provider: str      # "rocm" | "path" | "ziglang"
    command: tuple     # argv prefix that behaves as ld.lld
    version: str
    toolkit: str       # folder holding llvm/bin/ld.lld for gpu-module-to-binary


def _version(cmd: tuple) -> str:
    """`cmd --version`'s first line ("" if it does not run), remembered on disk under the
    executable's path, size and mtime (disk_memo): the answer is part of every compile-index key,
    and running the linker (zig's ld.lld: tens of ms) would otherwise cost each fresh process's
    first cached launch that much."""
    def run() -> str:
        try:
            out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return ""
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""
    try:
        st = os.stat(cmd[0])
    except OSError:
        return run()
    return remembered("tool_version", repr((cmd, st.st_size, st.st_mtime_ns)), run)


def _candidates():
    rocm = os.environ.get("ROCM_PATH") or "/opt/rocm"
    yield "rocm", (str(Path(rocm) / "llvm" / "bin" / "ld.lld"),)
    on_path = shutil.which("ld.lld")
    if on_path:
        yield "path", (on_path,)
    # PyPI package shipping a zig binary with lld inside: found, not imported (nothing in it is used)
    spec = importlib.util.find_spec("ziglang")
    if spec is not None and spec.submodule_search_locations:
        zig = Path(list(spec.submodule_search_locations)[0]) / "zig"
        if zig.exists():
            yield "ziglang", (str(zig), "ld.lld")


def _private(p: Path) -> bool:
    """p is a real directory (not a symlink) owned by this user and closed to everyone else."""
    try:
        st = os.lstat(p)
    except OSError:
        return False
    uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
    return stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077


def private_dir() -> Path:
    """This user's toolkit directory: <tmp>/wmma_gen_toolkit-<uid>, created 0700 and checked
    (owner, mode, not a symlink). The shared temp dir is writable by every user, so a folder
    someone else made there (or one left open to others) is never used: then a fresh
    unpredictable 0700 directory from mkdtemp is (one per process)."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    base = Path(tempfile.gettempdir()) / f"wmma_gen_toolkit-{uid}"
    try:
        base.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return _fresh_dir()
    return base if _private(base) else _fresh_dir()


@functools.lru_cache(maxsize=1)
def _fresh_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="wmma_gen_toolkit-"))


def _shim_text(cmd: tuple) -> str:
    args = " ".join("'" + c.replace("'", "'\\''") + "'" for c in cmd)
    return f"#!/bin/sh\nexec {args} \"$@\"\n"


def _toolkit_for(cmd: tuple) -> str:
    """A folder with llvm/bin/ld.lld running `cmd` (keyed by cmd so it is reused), inside the
    user's private directory (private_dir). An existing shim is used only if it is a regular
    file owned by this user, not writable by others, with exactly the expected text; otherwise
    it is rewritten (temp file + os.replace)."""
    tag = hashlib.sha256(repr(cmd).encode()).hexdigest()[:12]
    root = private_dir() / tag
    exe = root / "llvm" / "bin" / "ld.lld"
    text = _shim_text(cmd)
    if not _trusted(exe, text):
        exe.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = exe.with_suffix(f".tmp{os.getpid()}")
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, exe)
    return str(root)


def _trusted(exe: Path, text: str) -> bool:
    try:
        st = os.lstat(exe)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022 or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return False
        return exe.read_text() == text
    except (OSError, UnicodeDecodeError):
        return False


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
    package and the LLVM version it was built from (mlir_api.Provider.identity): the loaded
    provider's, or before any MLIR is built the one it would load, read from its files
    (provider_id: a cached kernel's launch does not import the bindings)."""
    mod = sys.modules.get(f"{__package__}.mlir_api")
    if mod is None:
        from .provider_id import static_identity
        found = static_identity()
        if found is not None:
            return found
        from . import mlir_api as mod           # nothing found by files: the import names what is missing
    return mod.provider().identity


def sources_hash() -> str:
    """Hash of wmma_gen's compiler sources (this folder's .py files: names and bytes): a change
    there invalidates cached binaries. Remembered under the files' stats (disk_memo.tree_hash)."""
    return tree_hash(str(Path(__file__).resolve().parent))[:16]



def toolchain_info() -> dict:
    """What besides the MLIR text changes the bytes; every entry is part of the cache key.
    `mlir` names the bindings' distribution, provider package and LLVM version (mlir_api), so
    objects built by two providers (WMMA_GEN_MLIR_PROVIDER) never share a key."""
    linker = find_linker()
    return {"mlir": mlir_version(), "lld": linker.version, "lld_provider": linker.provider,
            "wmma_gen_compiler": sources_hash()}


# --- does the loaded provider's LLVM know the chip? -------------------------------------------
# An LLVM that does not know a processor only prints "'gfx1171' is not a recognized processor for
# this target (ignoring processor)" on stderr and goes on with generic features; the first WMMA
# then aborts the whole process ("LLVM ERROR: Do not know how to split this operator's operand",
# seen with mlir-gml 0.0.4 / LLVM 23.0.0git for gfx1171, which FlyDSL's LLVM 24.0.0git knows).
# So a trivial kernel for the chip is compiled first, with stderr captured, and checked.
_UNRECOGNIZED = "is not a recognized processor"


@contextlib.contextmanager
def _stderr_captured():
    """Redirect file descriptor 2 (where LLVM's errs() writes) to a temporary file; yields it."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            yield f
        finally:
            os.dup2(saved, 2)
            os.close(saved)


@functools.lru_cache(maxsize=None)
def chip_problem(arch: str) -> str:
    """Why the loaded MLIR provider's LLVM cannot compile for `arch` ("" if it can)."""
    from . import mlir_api
    text = ('module attributes {gpu.container_module} { gpu.module @probe [#rocdl.target<chip = "%s">] '
            '{ llvm.func @k() attributes {rocdl.kernel} { llvm.return } } }' % arch)
    with _stderr_captured() as err:
        try:
            with mlir_api.ir.Context():
                module = mlir_api.ir.Module.parse(text)
                mlir_api.passmanager.PassManager.parse("builtin.module(gpu-module-to-binary{format=isa})").run(
                    module.operation)
        except Exception as e:  # the binding's own failure text is the answer
            return f"{type(e).__name__}: {str(e).strip()[:300]}"
        err.seek(0)
        said = err.read().decode(errors="replace")
    lines = [ln.strip() for ln in said.splitlines() if _UNRECOGNIZED in ln]
    return lines[0] if lines else ""


def _other_providers_knowing(arch: str) -> list[str]:
    """Installed providers other than the loaded one whose LLVM knows `arch` (each asked in a
    subprocess, since one process loads one provider; only run on the error path)."""
    from . import mlir_api
    found = []
    for name in mlir_api.PROVIDERS:
        if name == mlir_api.NAME:
            continue
        code = f"from wmma_gen.compiler import toolchain; print('OK' if not toolchain.chip_problem({arch!r}) else 'NO')"
        env = {**os.environ, mlir_api.SETTING: name}
        try:
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip().endswith("OK"):
            found.append(name)
    return found


def require_chip(arch: str) -> None:
    """Raise CompileError naming the arch, the loaded provider and the provider(s) that know it
    when the loaded provider's LLVM does not know `arch` (instead of letting LLVM abort)."""
    why = chip_problem(arch)
    if not why:
        return
    from . import mlir_api
    p = mlir_api.provider()
    others = _other_providers_knowing(arch)
    fix = (f"set {mlir_api.SETTING}={others[0]} (provider '{others[0]}' knows {arch})" if others else
           f"no installed provider knows {arch}: install one whose LLVM does (`pip install flydsl` brings LLVM 24)")
    raise CompileError(f"arch={arch} is not supported by MLIR provider '{p.name}' ({p.identity}): its LLVM does "
                       f"not know the processor", diagnostics=f"{why}\nfix: {fix}")
