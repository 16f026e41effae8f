"""compile_op(spec, d, s, key, arch) -> CompiledSet: the one compile path of every op.

    memory LRU   (op, sizeless directive, schedule, key, arch) -> CompiledSet      MEMORY entries
    disk index   the same, hashed with the sources that build MLIR -> [(kernel name, content key)]
    disk cache   content key -> code object + metadata (compiler/cache.py, keyed by the MLIR text)
    build        spec.build(d, s, target, key) -> MLIR -> compile_mlir (only on an index miss)

A sweep that meets a schedule it (or its compile pool, or an earlier run) compiled before
finds the code objects through the index without building MLIR text; the KernelSources
(MLIR + Signature) are built when first asked for (CompiledSet.sources). The index is keyed
by the sources of wmma_gen and of the op's folder as well, so an edited builder misses.

The index verifies what it serves: an entry records the request it answers (op, directive,
schedule, key, arch) and, per kernel, its name, content key, the sha256 of its code object and
the code object's kernel symbol, under a digest of the whole entry. An entry whose digest,
request, kernel list (empty, renamed, duplicated) or objects (a content key naming another
object, bytes whose hash differs) do not match is not served: the set is rebuilt, the entry
rewritten, and one warning line says why.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import cachedir, cachetrim
from ..compiler.cache import KernelCache
from ..compiler.disk_memo import tree_hash
from ..compiler.kernel import CompiledKernel
from ..compiler.toolchain import toolchain_info
from ..compiler.metadata import KernelMetadata
from ..errors import ScheduleError
from ..targets import get_target


@dataclass(frozen=True)
class CompiledSet:
    """The compiled kernels of one (op, directive, schedule, key, arch), in launch order: what
    compile_op returns and an OpSpec's check / estimate receive (ops/contract.py).

    `compiled` is always present; `sources` (MLIR + Signature) are built on first use, so a
    disk-index hit (compile_op below) returns the code objects without rebuilding any MLIR.
    `pairs()` hands out each kernel's Signature from the op's `signatures` hook (OpSpec: the
    declarations the builder uses, no MLIR) while the sources are not built: a cached kernel's
    first launch in a process neither builds MLIR nor imports the MLIR provider."""
    op: str
    arch: str
    key: Any
    compiled: tuple            # ((name, CompiledKernel), ...)
    directive: Any
    schedule: Any
    _sources: Callable = field(repr=False, compare=False)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)
    _signatures: Callable | None = field(default=None, repr=False, compare=False)   # () -> {name: Signature}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.compiled)

    @property
    def sources(self) -> dict:
        if "sources" not in self._memo:
            self._memo["sources"] = dict(self._sources())
        return self._memo["sources"]

    def kernel(self, name: str):
        for n, ck in self.compiled:
            if n == name:
                return ck
        raise ScheduleError("kernel", name, f"one of {', '.join(self.names)}")

    def signatures(self) -> dict:
        """{name: Signature}: from the built sources when they exist, else the op's hook (no MLIR)."""
        if "sources" not in self._memo and self._signatures is not None:
            if "signatures" not in self._memo:
                self._memo["signatures"] = dict(self._signatures())
            return self._memo["signatures"]
        return {n: src.signature for n, src in self.sources.items()}

    def pairs(self) -> dict:
        """{name: (KernelSource, CompiledKernel)}: what the tuner's stages and launchers take.
        Before the sources are built (an index hit of an op with a `signatures` hook) each
        source is a LazySource: its signature is at hand, its MLIR text builds on first use."""
        if "sources" not in self._memo and self._signatures is not None:
            sigs = self.signatures()
            return {n: (LazySource(self, n, ck.name, sigs[n]), ck) for n, ck in self.compiled}
        src = self.sources
        return {n: (src[n], ck) for n, ck in self.compiled}

    @property
    def isa_hash(self) -> str:
        keys = [ck.key for _, ck in self.compiled]
        return keys[0] if len(keys) == 1 else "+".join(k[:16] for k in keys)


class LazySource:
    """A KernelSource whose name, arch and signature are known without building the MLIR:
    any other attribute (mlir, ...) builds the set's sources once and reads the real one."""
    __slots__ = ("_cs", "_kernel", "name", "arch", "signature")

    def __init__(self, cs: CompiledSet, kernel: str, symbol: str, signature):
        self._cs, self._kernel, self.name, self.arch, self.signature = cs, kernel, symbol, cs.arch, signature

    def __getattr__(self, attr: str):
        return getattr(self._cs.sources[self._kernel], attr)


MEMORY = 64                      # code-object sets kept in memory (a sweep revisits few; bounded)
_LRU: OrderedDict = OrderedDict()
STATS = {"memory": 0, "index": 0, "built": 0}   # how compile_op answered, this process


def index_dir() -> Path:
    return cachedir.root() / "index"


def _builder_sources(spec) -> str:
    """What builds the MLIR: the wmma_gen package and the folder of the op's builder (a test's
    op outside the package included). Each digest is remembered on disk under its files' names,
    sizes and mtimes (compiler/disk_memo.py): a fresh process stats the files, reads none."""
    pkg = str(Path(__file__).resolve().parent.parent)
    mod = sys.modules.get(getattr(spec.build, "__module__", ""), None)
    own = str(Path(mod.__file__).resolve().parent) if getattr(mod, "__file__", None) else pkg
    return tree_hash(pkg) + ("" if own.startswith(pkg) else tree_hash(own))


def memory_key(spec, d, s, key, arch: str) -> tuple:
    return (spec.name, d.to_json(), s.to_json(), repr(key), get_target(arch).arch)


def _index_path(mkey: tuple, spec) -> Path:
    tc = toolchain_info()
    text = json.dumps([list(mkey), _builder_sources(spec), sorted(tc.items())], default=str)
    h = hashlib.sha256(text.encode()).hexdigest()
    return index_dir() / h[:2] / f"{h}.json"


INDEX_VERSION = 2      # 2: request, per-kernel object hash and symbol, entry digest


class IndexMismatch(Exception):
    """An index entry that does not answer this request (the reason is the message)."""


def _entry_digest(entry: dict) -> str:
    body = {k: v for k, v in entry.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def _request(mkey: tuple) -> list:
    return json.loads(json.dumps(list(mkey), default=str))


def _from_index(path: Path, arch: str, mkey: tuple) -> tuple | None:
    """The set the index names, read from the content-addressed cache and verified against
    the entry; None when an object is missing from the cache (a plain miss), IndexMismatch
    when the entry does not answer this request."""
    try:
        entry = json.loads(path.read_text())
    except FileNotFoundError:
        return None                                   # removed since it was seen (cachetrim): a miss
    except (OSError, ValueError) as e:
        raise IndexMismatch(f"unreadable ({type(e).__name__})") from None
    if not isinstance(entry, dict) or entry.get("version") != INDEX_VERSION:
        return None                                   # an older layout: replaced, not a mismatch
    if entry.get("digest") != _entry_digest(entry):
        raise IndexMismatch("its digest does not match its content")
    if entry.get("request") != _request(mkey):
        raise IndexMismatch("it answers another request (op, directive, schedule, key, arch)")
    try:
        kernels = [(str(n), str(k), str(h), str(sym)) for n, k, h, sym in entry["kernels"]]
    except (KeyError, TypeError, ValueError):
        raise IndexMismatch("its kernel list is malformed") from None
    names = [n for n, *_ in kernels]
    if not kernels or len(set(names)) != len(names):
        raise IndexMismatch(f"its kernel list {names} is empty or repeats a name")
    store, tc, out = KernelCache(), toolchain_info(), []
    for name, key, sha, symbol in kernels:
        status, payload = store.load(key)
        if status != "hit" or not payload.get("hsaco"):
            return None
        if hashlib.sha256(payload["hsaco"]).hexdigest() != sha:
            raise IndexMismatch(f"kernel {name!r}: the object under {key[:16]} is not the one indexed (sha256 differs)")
        meta = KernelMetadata.from_dict(payload["metadata"])
        if payload["name"] != symbol or meta.name != symbol:
            raise IndexMismatch(f"kernel {name!r}: the object's symbol {payload['name']!r} is not {symbol!r}")
        # mlir "" : the text is not rebuilt on this path; CompiledSet.sources builds it on demand
        out.append((name, CompiledKernel(payload["name"], arch, "", payload["hsaco"], meta, key, tc, "hit", 0.0)))
    cachetrim.used(path)                              # last use: what the size cap keeps
    return tuple(out)


def _write_index(path: Path, op: str, mkey: tuple, compiled) -> None:
    """Atomic write (temp file + os.replace); an unusable directory only costs the shortcut."""
    entry = {"version": INDEX_VERSION, "op": op, "request": _request(mkey),
             "kernels": [[n, ck.key, ck.sha256, ck.name] for n, ck in compiled]}
    entry["digest"] = _entry_digest(entry)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(entry, f)
            size = f.tell()
        os.replace(tmp, path)
        cachetrim.wrote(path, size)
    except OSError:
        pass


def compile_op(spec, d, s, key, arch: str, cache: KernelCache | None | bool = None) -> CompiledSet:
    """The CompiledSet of (d, s, key) for `arch`. cache=False compiles uncached (no LRU, no index,
    no disk cache), a KernelCache uses that directory and skips the LRU and index."""
    t = get_target(arch)
    mkey = memory_key(spec, d, s, key, t.arch)
    build = functools.partial(_build, spec, d, s, t, key)
    if cache is None and mkey in _LRU:
        _LRU.move_to_end(mkey)
        STATS["memory"] += 1
        return _LRU[mkey]
    path = _index_path(mkey, spec) if cache is None else None
    found = None
    if path is not None and path.is_file():
        try:
            found = _from_index(path, t.arch, mkey)
        except IndexMismatch as e:
            print(f"warning: compile index entry {path} not served: {e}; rebuilding {spec.name}",
                  file=sys.stderr, flush=True)
    if found is not None:
        hook = getattr(spec, "signatures", None)
        sigs = None if hook is None else functools.partial(hook, d, s, t, key, {n: ck.name for n, ck in found})
        cs = CompiledSet(spec.name, t.arch, key, found, d, s, build, _signatures=sigs)
        STATS["index"] += 1
    else:
        from ..compiler.compile import compile_mlir      # the compile stages load on a build only
        sources = build()
        compiled = tuple((n, compile_mlir(src.mlir, t.arch, cache=cache)) for n, src in sources.items())
        cs = CompiledSet(spec.name, t.arch, key, compiled, d, s, lambda: sources)
        STATS["built"] += 1
        if path is not None and all(ck.cache != "miss" or KernelCache().path(ck.key).is_file() for _, ck in compiled):
            _write_index(path, spec.name, mkey, compiled)
    if cache is None:
        _LRU[mkey] = cs
        while len(_LRU) > MEMORY:
            _LRU.popitem(last=False)
    return cs


def _build(spec, d, s, t, key) -> dict:
    out = spec.build(d, s, t, key)
    return dict(out.items() if hasattr(out, "items") else out)


def clear_memory() -> None:
    """Forget the in-memory sets (tests; the disk index and cache stay)."""
    _LRU.clear()
