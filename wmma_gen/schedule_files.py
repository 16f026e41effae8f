"""Schedule files: one format, one reader and one search path for every op (issues 24, 25, 26).

One file per (arch, op, dtype), named `<arch>-<op>-<dtype>.json`, written by `wmma-gen export`:

    {"schema": "wmma_gen/schedules", "schema_version": 1, "arch": "gfx1100", "op": "gemm",
     "dtype": "f16", "generated": "...", "wmma_gen_version": "...", "toolchain": {...},
     "entries": [{"bucket": {<the op's key: gemm m, n, k; attention seq>}, "schedule": {...},
                  "tflops": 51.3, "unit": "TFLOP/s", "source": "model" | "hip",
                  "validated": true, ...}]}

Checked here for every op (`read`, `header`), before any op-specific field:
  - the file: at most MAX_BYTES of UTF-8 JSON nested at most MAX_DEPTH deep (counted before
    parsing, so a 100,000-deep file is one clear error, never a RecursionError);
  - every number in the document is finite (NaN / Infinity / 1e999 are refused by JSON path);
  - schema (or a legacy name, LEGACY), schema_version, op, arch (a known target), dtype (one
    the op takes), and arch/op/dtype agree with the file name;
  - entries: a list of objects, each `validated: true`, `source` hip|model, `tflops` > 0,
    `bucket` an object. The op's lookup (ops/<op>/lookup.py `parse`) checks the bucket's
    fields and the schedule's legality with the same validators as user input.
Every refusal is a ScheduleFileError: "<file>: field '<field>' = <value> is not allowed: <what is>".

Search path (`search_dirs`): each directory of $WMMA_GEN_SCHEDULES (os.pathsep-separated) >
the user dir (userdirs.schedules_dir(): $XDG_DATA_HOME/wmma_gen/schedules) > the files shipped
in the package (SHIPPED_DIR). `lookup` gives the op's `pick` the entries of every file of that
name at once, in that order: the best-matching bucket across all files wins, and file precedence
only breaks ties (every op's pick ranks with a stable sort / min, so of equally good entries the
earlier file's is kept). A two-entry user file therefore no longer shadows a shipped file whose
bucket is nearer the call (issue 37: gemm 4096^3 ran a user file's 2048 tile). A refused file is
skipped with a ScheduleFileWarning naming file and field; no entry anywhere -> None and the
caller uses its default schedule.

WMMA_GEN_LOG=schedules (a comma-separated list of topics) prints one line to stderr per new
(op, arch, dtype, key): the file and bucket used, or "default" and why, and one line per other
file saying why it lost (its best bucket matches the call less well; an equal match in a
later file; no entry for the call; refused).
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from . import userdirs
from .errors import ScheduleError
from .targets import get_target

SCHEMA = "wmma_gen/schedules"
SCHEMA_VERSION = 1
LEGACY = {"wmma_gen/attention_schedules": "attention", "wmma_gen/attention_bwd_schedules": "attention_bwd"}
SOURCES = ("hip", "model")
MAX_DEPTH = 16                 # an export nests 4 deep (root, entries, entry, schedule/bucket)
MAX_BYTES = 16 << 20
SHIPPED_DIR = Path(__file__).resolve().parent / "schedules"   # package data (-> the repo's schedules/)
ENV_DIRS = "WMMA_GEN_SCHEDULES"
NAME = re.compile(r"^([A-Za-z0-9_.]+)-([A-Za-z0-9_]+)-([A-Za-z0-9_]+)\.json$")


class ScheduleFileError(ScheduleError):
    """A schedule file failed validation; names the file, the field, the value and what is allowed."""

    def __init__(self, path, field: str, value: object, allowed: str):
        self.path = str(path)
        super().__init__(field, value, allowed)
        self.args = (f"{self.path}: field '{field}' = {_short(value)} is not allowed: {allowed}",)

    def __str__(self) -> str:
        return self.args[0]


class ScheduleFileWarning(UserWarning):
    """A schedule file was refused; the lookup went on without it (next file, else the default)."""


def _short(value: object, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def need(ok: bool, path, field: str, value, allowed: str) -> None:
    if not ok:
        raise ScheduleFileError(path, field, value, allowed)


def file_name(arch: str, op: str, dtype: str) -> str:
    return f"{arch}-{op}-{dtype}.json"


def name_parts(path: str | Path) -> Optional[tuple[str, str, str]]:
    """(arch, op, dtype) from a file named <arch>-<op>-<dtype>.json, else None."""
    m = NAME.match(Path(path).name)
    return (m.group(1), m.group(2), m.group(3)) if m else None


# ---- reading: size, depth, JSON, finite numbers ----------------------------------------------
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def check_depth(text: str, path) -> None:
    """Refuse nesting deeper than MAX_DEPTH without recursing (strings are skipped)."""
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                need(False, path, "<json>", f"nesting deeper than {MAX_DEPTH} at line {line}",
                     f"JSON nested at most {MAX_DEPTH} deep (a schedule file nests 4 deep)")
        elif c in "]}":
            depth -= 1


def check_finite(doc, path, where: str = "") -> None:
    """Every number in the document is finite (depth is already bounded)."""
    if isinstance(doc, float):
        need(math.isfinite(doc), path, where or "<root>", doc, "a finite number")
    elif isinstance(doc, dict):
        for k, v in doc.items():
            check_finite(v, path, f"{where}.{k}" if where else str(k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            check_finite(v, path, f"{where}[{i}]")


def read(path: str | Path) -> object:
    """The parsed document of a schedule file (bounded size and depth, finite numbers)."""
    path = Path(path)
    try:
        st = path.stat()
        need(stat.S_ISREG(st.st_mode), path, "<file>", "not a regular file", "a regular file (a FIFO or device "
             "is never opened)")
        size = st.st_size
        need(size <= MAX_BYTES, path, "<file>", f"{size} bytes", f"at most {MAX_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ScheduleFileError(path, "<file>", e.reason, "UTF-8 JSON text") from None
    except OSError as e:
        raise ScheduleFileError(path, "<file>", e.strerror or type(e).__name__, "a readable file") from None
    return loads(text, path)


def loads(text: str, path="<memory>") -> object:
    check_depth(text, path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScheduleFileError(path, "<json>", f"{e.msg} at line {e.lineno} column {e.colno}", "valid JSON") from None
    except RecursionError:       # unreachable after check_depth; kept as the last line of defence
        raise ScheduleFileError(path, "<json>", "too deeply nested", f"JSON nested at most {MAX_DEPTH} deep") from None
    check_finite(doc, path)
    return doc


# ---- the shared header and entry checks ------------------------------------------------------
@dataclass(frozen=True)
class Header:
    path: str
    arch: str
    op: str
    dtype: str
    target: object
    entries: tuple          # ((where, entry dict), ...)


def header(doc: object, path, op: str, dtypes: Sequence[str] | Callable[[object], Sequence[str]]) -> Header:
    """The checks every op's file shares (see the module doc); `dtypes`: the op's input dtypes,
    or a function of the Target giving them."""
    need(isinstance(doc, dict), path, "<root>", type(doc).__name__, "a JSON object")
    schema = doc.get("schema")
    legacy_op = LEGACY.get(schema) if isinstance(schema, str) else None
    need(schema == SCHEMA or legacy_op == op, path, "schema", schema,
         repr(SCHEMA) + "".join(f" (or the older {s!r})" for s, o in LEGACY.items() if o == op))
    need(doc.get("schema_version") == SCHEMA_VERSION and not isinstance(doc.get("schema_version"), bool), path,
         "schema_version", doc.get("schema_version"), f"{SCHEMA_VERSION} (the version this wmma_gen reads)")
    got_op = doc.get("op", legacy_op)      # the older attention files named the op by their schema
    need(got_op == op, path, "op", got_op, repr(op))
    arch, dtype = doc.get("arch"), doc.get("dtype")
    need(isinstance(arch, str), path, "arch", arch, "a target name (string)")
    try:
        t = get_target(arch)
    except ScheduleError as e:
        raise ScheduleFileError(path, "arch", arch, e.allowed) from None
    allowed = tuple(dtypes(t) if callable(dtypes) else dtypes)
    need(dtype in allowed, path, "dtype", dtype, f"one of {', '.join(allowed)} ({op} on {arch})")
    named = name_parts(path)
    if named is not None:
        for field, want, got in zip(("arch", "op", "dtype"), named, (arch, got_op, dtype)):
            need(got == want, path, field, got, f"{want!r}, as the file name {Path(path).name} says")
    tc = doc.get("toolchain", {})
    need(isinstance(tc, dict), path, "toolchain", tc, "an object of versions")
    entries = doc.get("entries")
    need(isinstance(entries, list), path, "entries", type(entries).__name__, "a list")
    return Header(str(path), arch, op, dtype, t, tuple(_entry(e, f"entries[{i}]", path) for i, e in enumerate(entries)))


def _entry(e, where: str, path) -> tuple[str, dict]:
    need(isinstance(e, dict), path, where, type(e).__name__, "an object")
    need(e.get("validated") is True, path, f"{where}.validated", e.get("validated"),
         "true (only schedules whose correctness gate passed are exported)")
    need(e.get("source") in SOURCES, path, f"{where}.source", e.get("source"), f"one of {', '.join(SOURCES)}")
    tf = e.get("tflops")
    need(isinstance(tf, (int, float)) and not isinstance(tf, bool) and math.isfinite(tf) and tf > 0,
         path, f"{where}.tflops", tf, "a positive finite number")
    need(isinstance(e.get("bucket"), dict), path, f"{where}.bucket", e.get("bucket"), "an object (the op's key)")
    need(isinstance(e.get("schedule"), dict), path, f"{where}.schedule", e.get("schedule"),
         "an object of schedule fields")
    return where, e


_CACHE: dict[tuple, object] = {}


def load(path: str | Path, parse: Callable[[object, Path], list]) -> list:
    """`parse(read(path), path)`, cached by (path, mtime, size, parse); ScheduleFileError if refused."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as e:
        raise ScheduleFileError(path, "<file>", e.strerror or type(e).__name__, "a readable file") from None
    key = (os.path.abspath(path), st.st_ino, st.st_mtime_ns, st.st_size, parse.__module__, parse.__qualname__)
    if key not in _CACHE:
        try:
            _CACHE[key] = parse(read(path), path)
        except ScheduleFileError as e:
            _CACHE[key] = e
    got = _CACHE[key]
    if isinstance(got, ScheduleFileError):
        raise got
    return got


# ---- where files live, and the lookup ---------------------------------------------------------
def search_dirs(shipped: str | Path | None = None) -> list[tuple[Path, str]]:
    """(directory, origin) in lookup order: $WMMA_GEN_SCHEDULES entries, user, shipped
    (directories need not exist; a directory named twice keeps its first place). Read from
    the environment on every call; memoised on the variables it depends on."""
    env = os.environ
    return list(_search_dirs(env.get(ENV_DIRS, ""), env.get("XDG_DATA_HOME", ""), env.get("HOME", ""),
                             str(shipped or SHIPPED_DIR)))


@functools.lru_cache(maxsize=16)
def _search_dirs(env_dirs: str, _xdg: str, _home: str, shipped: str) -> tuple[tuple[Path, str], ...]:
    dirs = [(Path(p).expanduser(), ENV_DIRS) for p in env_dirs.split(os.pathsep) if p.strip()]
    dirs += [(userdirs.schedules_dir(), "user"), (Path(shipped), "shipped")]
    seen, out = set(), []
    for d, origin in dirs:
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            out.append((d, origin))
    return tuple(out)


def lookup(op: str, arch: str, dtype: str, key: str, pick: Callable[[list], object], *,
           load_file: Callable[[Path], list], bucket: Callable[[object], str], shipped=None, directory=None,
           warning: type = ScheduleFileWarning):
    """The first entry `pick` finds in the files for (arch, op, dtype), in lookup order, or None.
    `key` names the call for the log line; `bucket(entry)` names the entry that was used."""
    dirs = [(Path(directory), "given")] if directory is not None else search_dirs(shipped)
    name = file_name(arch, op, dtype)
    files = [(d / name, origin) for d, origin in dirs if (d / name).is_file()]
    loaded, why_not = [], {}
    for path, origin in files:
        try:
            loaded.append((path, origin, list(load_file(path))))
        except ScheduleFileError as e:
            warnings.warn(f"refusing schedule file: {e}; using the other files or the default schedule",
                          warning, stacklevel=3)
            why_not[path] = f"refused ({e.args[0].split(': ', 1)[-1][:120]})"
    hit = pick([e for _, _, entries in loaded for e in entries])    # file order: precedence breaks ties
    if hit is None:
        why = (f"no entry for this call in {len(files)} file(s)" if files
               else f"no {name} in {os.pathsep.join(str(d) for d, _ in dirs)}")
        note(op, arch, dtype, key, f"default ({why})")
        return None
    won = next((p, o) for p, o, entries in loaded if any(e is hit for e in entries))
    note(op, arch, dtype, key, f"{won[0]} ({won[1]}) bucket {bucket(hit)}")
    if logging_on():
        for path, origin in files:
            if path != won[0]:
                entries = next((en for p, _, en in loaded if p == path), None)
                note_lost(op, arch, dtype, key, path, origin, why_not.get(path) or _lost(pick, hit, entries, bucket,
                                                                                        files, won[0], path))
    return hit


def _lost(pick, hit, entries, bucket, files, won, path) -> str:
    """Why a loaded file's entries lost to `hit` (pick asked on the two best, in both orders)."""
    best = pick(entries)
    if best is None:
        return "no entry for this call"
    order = [p for p, _ in files]
    if pick([best, hit]) is best and pick([hit, best]) is hit:
        return (f"its bucket {bucket(best)} matches as well; the winner's file comes first in the search path"
                if order.index(won) < order.index(path) else f"its bucket {bucket(best)} ties")
    return f"its best bucket {bucket(best)} matches the call less well"


_LOGGED: set[tuple] = set()


def logging_on(topic: str = "schedules") -> bool:
    return topic in {t.strip() for t in os.environ.get("WMMA_GEN_LOG", "").split(",")}


def note(op: str, arch: str, dtype: str, key: str, used: str) -> None:
    """One stderr line per new (op, arch, dtype, key) when WMMA_GEN_LOG names 'schedules'."""
    if not logging_on() or (op, arch, dtype, key) in _LOGGED:
        return
    _LOGGED.add((op, arch, dtype, key))
    print(f"wmma_gen schedules: {op} {arch} {dtype} {key} -> {used}", file=sys.stderr, flush=True)


def note_lost(op: str, arch: str, dtype: str, key: str, path, origin: str, why: str) -> None:
    """One stderr line per (op, arch, dtype, key, losing file) under WMMA_GEN_LOG=schedules."""
    if (op, arch, dtype, key, str(path)) in _LOGGED:
        return
    _LOGGED.add((op, arch, dtype, key, str(path)))
    print(f"wmma_gen schedules: {op} {arch} {dtype} {key} -- not {path} ({origin}): {why}", file=sys.stderr,
          flush=True)


def forget_logged() -> None:
    """Log every key again (tests; a long-running process that wants the lines anew)."""
    _LOGGED.clear()


def all_files(shipped=None) -> Iterable[tuple[Path, str]]:
    """Every regular *.json file in every search directory, in lookup order (`wmma-gen schedules
    list`); FIFOs, sockets and devices named *.json are skipped, never opened (a FIFO blocks)."""
    for d, origin in search_dirs(shipped):
        if d.is_dir():
            for p in sorted(d.glob("*.json")):
                if p.is_file():
                    yield p, origin
