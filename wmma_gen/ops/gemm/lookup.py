"""Exported best schedules (schedules/*.json) and their lookup (STYLE rule 8).

One file per (arch, op, dtype), named `<arch>-<op>-<dtype>.json`, written by
`wmma-gen export` (autotune/export.py):

    {"schema": "wmma_gen/schedules", "schema_version": 1, "arch": "gfx1100", "op": "gemm",
     "dtype": "f16", "generated": "...", "wmma_gen_version": "...", "toolchain": {...},
     "entries": [{"bucket": {"m": 1024, "n": 1024, "k": 1024}, "acc": "f32", "layout": "NN",
                  "schedule": {<every Schedule field>}, "tflops": 51.3, "unit": "TFLOP/s",
                  "fraction_of_peak": 0.42, "source": "model" | "hip", "validated": true, ...}]}

Every entry is read back through the same validators as user input: GemmDirective for the
bucket, Schedule.from_dict for the schedule and Schedule.problems for legality; only entries
whose correctness gate passed (`validated: true`) are allowed.

`lookup(arch, directive)` picks the entry of the nearest shape bucket (smallest
|log2 M/Mb| + |log2 N/Nb| + |log2 K/Kb|, preferring the same accumulator and layout) whose
schedule is legal for the directive and whose macro tile fits the problem (`fits`), and
returns its Schedule. Fallback, documented: no file,
no legal entry, or a file that fails validation (a ScheduleFileWarning naming the file and
field) -> None, and the caller uses its default schedule. A user-passed schedule always wins;
that is the caller's rule.
"""
from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ...errors import ScheduleError
from ...targets import get_target
from .directive import GemmDirective
from .schedule import Schedule

SCHEMA = "wmma_gen/schedules"
SCHEMA_VERSION = 1
SOURCES = ("hip", "model")
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "schedules"   # the repo's exported files


class ScheduleFileError(ScheduleError):
    """An exported schedule file failed validation; names the file and the field."""

    def __init__(self, path, field: str, value: object, allowed: str):
        self.path = str(path)
        super().__init__(field, value, allowed)
        self.args = (f"{self.path}: field '{field}' = {value!r} is not allowed: {allowed}",)

    def __str__(self) -> str:
        return self.args[0]


class ScheduleFileWarning(UserWarning):
    """A schedule file was refused; the lookup fell back to the default schedule."""


@dataclass(frozen=True)
class Entry:
    arch: str
    directive: GemmDirective      # the bucket: shape, acc, layout
    schedule: Schedule
    tflops: float
    source: str
    path: str
    extra: dict

    def distance(self, d: GemmDirective) -> float:
        b = self.directive
        return sum(abs(math.log2(x / y)) for x, y in ((d.m, b.m), (d.n, b.n), (d.k, b.k)))


def file_name(arch: str, op: str, dtype: str) -> str:
    return f"{arch}-{op}-{dtype}.json"


def _need(cond: bool, path, field: str, value, allowed: str) -> None:
    if not cond:
        raise ScheduleFileError(path, field, value, allowed)


def parse(doc: object, path: str | Path = "<memory>") -> list[Entry]:
    """Validate a schedule document; raises ScheduleFileError naming the first bad field."""
    _need(isinstance(doc, dict), path, "<root>", type(doc).__name__, "a JSON object")
    _need(doc.get("schema") == SCHEMA, path, "schema", doc.get("schema"), repr(SCHEMA))
    _need(doc.get("schema_version") == SCHEMA_VERSION, path, "schema_version", doc.get("schema_version"),
          f"{SCHEMA_VERSION} (the version this wmma_gen reads)")
    try:
        t = get_target(doc.get("arch"))
    except ScheduleError as e:
        raise ScheduleFileError(path, "arch", doc.get("arch"), e.allowed) from None
    _need(doc.get("op") == "gemm", path, "op", doc.get("op"), "'gemm'")
    _need(doc.get("dtype") in t.dtypes, path, "dtype", doc.get("dtype"), f"one of {', '.join(t.dtypes)}")
    _need(isinstance(doc.get("toolchain"), dict), path, "toolchain", doc.get("toolchain"), "an object of versions")
    entries = doc.get("entries")
    _need(isinstance(entries, list), path, "entries", type(entries).__name__, "a list")
    return [_entry(e, i, doc, t, path) for i, e in enumerate(entries)]


def _entry(e, i: int, doc: dict, t, path) -> Entry:
    at = f"entries[{i}]"
    _need(isinstance(e, dict), path, at, type(e).__name__, "an object")
    b = e.get("bucket")
    _need(isinstance(b, dict) and set(b) == {"m", "n", "k"}, path, f"{at}.bucket", b, "an object with m, n, k")
    try:
        d = GemmDirective(doc["dtype"], b["m"], b["n"], b["k"], acc=e.get("acc", ""), layout=e.get("layout", "NN"))
    except ScheduleError as err:
        raise ScheduleFileError(path, f"{at}.{err.field}", err.value, err.allowed) from None
    sched = e.get("schedule")
    _need(isinstance(sched, dict), path, f"{at}.schedule", sched, "an object of schedule fields")
    try:
        s = Schedule.from_dict(sched)
    except (ScheduleError, TypeError) as err:
        field = getattr(err, "field", "schedule")
        raise ScheduleFileError(path, f"{at}.schedule.{field}" if field != "schedule" else f"{at}.schedule",
                                getattr(err, "value", sched), getattr(err, "allowed", str(err))) from None
    problems = s.problems(d, t)
    _need(not problems, path, f"{at}.schedule", sched, "a legal schedule: " + "; ".join(problems))
    tf = e.get("tflops")
    _need(isinstance(tf, (int, float)) and not isinstance(tf, bool) and tf > 0 and math.isfinite(tf),
          path, f"{at}.tflops", tf, "a positive finite number")
    _need(e.get("source") in SOURCES, path, f"{at}.source", e.get("source"), f"one of {', '.join(SOURCES)}")
    _need(e.get("validated") is True, path, f"{at}.validated", e.get("validated"),
          "true (only schedules that passed the correctness gate are exported)")
    extra = {k: v for k, v in e.items() if k not in ("bucket", "acc", "layout", "schedule", "tflops", "source")}
    return Entry(doc["arch"], d, s, float(tf), e["source"], str(path), extra)


_CACHE: dict[tuple, object] = {}


def load_file(path: str | Path) -> list[Entry]:
    """Entries of one file (cached by path, mtime and size); ScheduleFileError if invalid."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        try:
            doc = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            _CACHE[key] = ScheduleFileError(path, "<json>", getattr(e, "msg", str(e)), "valid JSON")
        else:
            try:
                _CACHE[key] = parse(doc, path)
            except ScheduleFileError as e:
                _CACHE[key] = e
    got = _CACHE[key]
    if isinstance(got, ScheduleFileError):
        raise got
    return got


def lookup_entry(arch: str, directive: GemmDirective, directory: str | Path | None = None,
                 accept: Optional[Callable[[Schedule], bool]] = None) -> Optional[Entry]:
    """The exported entry for the nearest bucket whose schedule is legal for `directive`
    (and passes `accept`, e.g. "the builder can build it"), or None."""
    t = get_target(arch)
    path = Path(directory or DEFAULT_DIR) / file_name(arch, directive.op, directive.dtype)
    if not path.is_file():
        return None
    try:
        entries = load_file(path)
    except ScheduleFileError as e:
        warnings.warn(f"refusing schedule file: {e}; using the default schedule", ScheduleFileWarning, stacklevel=3)
        return None
    if entries and (entries[0].arch != arch or entries[0].directive.dtype != directive.dtype):
        warnings.warn(f"refusing schedule file: {path}: field 'arch'/'dtype' = "
                      f"{entries[0].arch}/{entries[0].directive.dtype} does not match its name; "
                      "using the default schedule", ScheduleFileWarning, stacklevel=3)
        return None
    ranked = sorted(entries, key=lambda e: (e.directive.acc != directive.acc,
                                            e.directive.layout != directive.layout, e.distance(directive)))
    for e in ranked:
        if (fits(e.schedule, directive) and not e.schedule.problems(directive, t)
                and (accept is None or accept(e.schedule))):
            return e
    return None


def fits(s: Schedule, d: GemmDirective) -> bool:
    """The macro tile is no larger than the problem (rounded up to the 16x16 WMMA tile): a
    schedule tuned for large shapes is not applied to a problem it would leave mostly idle."""
    return s.block_m <= -(-d.m // 16) * 16 and s.block_n <= -(-d.n // 16) * 16


def lookup(arch: str, directive: GemmDirective, directory: str | Path | None = None,
           accept: Optional[Callable[[Schedule], bool]] = None) -> Optional[Schedule]:
    """The exported schedule for `directive` on `arch`, or None (caller uses its default)."""
    e = lookup_entry(arch, directive, directory, accept)
    return e.schedule if e else None
