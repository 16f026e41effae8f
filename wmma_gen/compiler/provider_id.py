"""The MLIR provider's identity (distribution, package, LLVM version) without importing it.

A cached kernel's first launch in a fresh process needs the compile index's key, which holds
the provider's identity (toolchain_info), but no MLIR: importing the bindings costs 0.3-1.6 s
(flydsl's native libraries). `static_identity()` finds the provider `mlir_api` would select
from the installed files alone and names it as `mlir_api.Provider.identity` does;
`toolchain.mlir_version` uses it until `mlir_api` is imported (then the loaded provider's own).
"""
from __future__ import annotations

import functools
import glob
import importlib.util
import os
import re
from pathlib import Path

from .disk_memo import remembered

PROVIDERS = ("flydsl", "mlir")                     # the order `auto` tries them in: the default first
SETTING = "WMMA_GEN_MLIR_PROVIDER"
_PACKAGE = {"flydsl": "flydsl._mlir", "mlir": "mlir"}
DISTRIBUTIONS = {"flydsl": ("flydsl",), "mlir": ("mlir-gml", "mlir-python-bindings", "mlir")}


def identity(name: str, llvm_version: str) -> str:
    """What the compile cache key and exported schedules record, e.g.
    "flydsl==0.5.0 (flydsl._mlir, LLVM 24.0.0git)"."""
    return f"{_distribution(name)} ({_PACKAGE[name]}, LLVM {llvm_version})"


@functools.lru_cache(maxsize=None)
def _distribution(name: str) -> str:
    """"dist==version" of provider `name`: read from the `<dist>-<version>.dist-info` folder
    beside its package when there is one (importing importlib.metadata costs a fresh process
    0.1-0.2 s), remembered on disk under the site folder's mtime (an install or removal there
    changes it: disk_memo), else importlib.metadata's answer."""
    folder = _package_dir(name)
    if folder is not None:
        site = folder.parents[len(_PACKAGE[name].split(".")) - 1]
        try:
            facts = f"{site}\0{os.stat(site).st_mtime_ns}\0{name}"
        except OSError:
            facts = None
        found = remembered("provider_dist", facts, lambda: _from_dist_info(site, name)) if facts else \
            _from_dist_info(site, name)
        if found:
            return found
    from importlib import metadata
    for dist in DISTRIBUTIONS[name]:
        try:
            return f"{dist}=={metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def _from_dist_info(site: Path, name: str) -> str:
    """"dist==version" from the one `<dist>-<version>.dist-info` folder of provider `name` in `site`, else ""."""
    for dist in DISTRIBUTIONS[name]:
        want = re.sub(r"[-_.]+", "_", dist).lower()
        found = [d.name[:-len(".dist-info")].partition("-")[2] for d in site.glob("*.dist-info")
                 if d.name.partition("-")[0].lower() == want]
        if len(found) == 1 and found[0]:
            return f"{dist}=={found[0]}"
    return ""


_SUFFIX_RE = re.compile(r"\.so\.(\d+\.\d+(?:\.\d+)?(?:git)?)$")
_VERSION_RE = re.compile(rb"(?:LLVM version |\0)(\d{2,3}\.\d+\.\d+(?:git)?)\0")


@functools.lru_cache(maxsize=None)
def _llvm_version(libs: Path) -> str:
    """LLVM version of the native libraries under `libs`: from a versioned file name
    (libFoo.so.24.0git) or, failing that, from the version string inside LLVM's Support
    library (mlir-gml ships unversioned names); "unknown" if neither is found."""
    names = sorted(glob.glob(str(libs / "_mlir_libs" / "*.so.*")))
    for n in names:
        m = _SUFFIX_RE.search(n)
        if m:
            return m.group(1) if m.group(1).count(".") == 2 else m.group(1).replace("git", ".0git")
    pats = ("_mlir_libs/*LLVMSupport*.so*", "_mlir_libs/*MLIRPythonCAPI*.so*", "../.mlir_libs/*llvm_Slib*Support.so")
    for pat in pats:
        for f in sorted(glob.glob(str(libs / pat))):
            m = _VERSION_RE.search(Path(f).read_bytes())
            if m:
                return m.group(1).decode()
    return "unknown"


def _package_dir(name: str) -> Path | None:
    """The folder of provider `name`'s package, found without importing it (nor its parent:
    flydsl/__init__ imports torch) -- None when it is not installed."""
    top, _, rest = _PACKAGE[name].partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]).joinpath(*rest.split(".")) if rest else \
        Path(list(spec.submodule_search_locations)[0])
    return folder if (folder / "ir.py").is_file() else None


@functools.lru_cache(maxsize=1)
def static_identity() -> str | None:
    """The identity of the provider `mlir_api` would load (its setting, else the first of
    PROVIDERS installed), from files only; None when none is found (the import then explains)."""
    want = os.environ.get(SETTING, "").strip().lower() or "auto"
    for name in (PROVIDERS if want == "auto" else (want,) if want in PROVIDERS else ()):
        folder = _package_dir(name)
        if folder is not None:
            return identity(name, _llvm_version(folder))
    return None
