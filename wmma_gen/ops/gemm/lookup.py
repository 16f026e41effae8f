"""Exported GEMM schedules (<arch>-gemm-<dtype>.json) and their lookup (STYLE rule 8).

The file format, the shared checks (size, nesting, finite numbers, schema, op, arch and dtype
against the file name, validated/source/tflops per entry) and the search path
($WMMA_GEN_SCHEDULES > user dir > shipped) are wmma_gen/schedule_files.py's, as for every op.
A GEMM entry:

    {"bucket": {"m": 1024, "n": 1024, "k": 1024[, "batch": 8]}, "acc": "f32", "layout": "NN",
     ["epilogue": {"bias": "" | "n" | "m", "activation": "" | "gelu" | ...},]
     "schedule": {<every Schedule field>}, "tflops": 51.3, "unit": "TFLOP/s",
     "fraction_of_peak": 0.42, "source": "model" | "hip", "validated": true, ...}

is read back through the same validators as user input: GemmProblem for the bucket (batch 1
when absent), GemmDirective for acc, layout and epilogue (none when absent: what files written
before they existed were tuned on), Schedule.from_dict for the schedule and Schedule.problems
for legality.

`lookup(arch, directive, problem)` picks the entry of the nearest bucket whose schedule is legal for the
directive and whose macro tile fits the problem (`fits`), and returns its Schedule. Only
entries of the call's layout count: a transposed operand is staged by other code (in-register
transposes, byte packing), so a tile tuned on NN says nothing about TT (issue 28: the NN 4096
entry, applied to TN/TT, had 0.68x the main-loop density of Triton's best tile where the default
has 1.24x; results/gemm_vs_triton.md). Nearest: the same accumulator, then the smallest
|log2 M/Mb| + |log2 N/Nb| + |log2 K/Kb| + |log2 batch/batch_b|, then the same epilogue (bias,
activation). A batch-1, no-epilogue call ranks the entries of an older file as before.
Fallback, documented: no file, no legal entry, or a file that fails validation (a ScheduleFileWarning naming the file and field) -> the next file in the search
path, else None, and the caller uses its default schedule. A user-passed schedule always
wins; that is the caller's rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ... import schedule_files as sf
from ...errors import ScheduleError
from ...schedule_files import SCHEMA, SCHEMA_VERSION, SOURCES, ScheduleFileError, ScheduleFileWarning  # noqa: F401
from ...targets import get_target
from .directive import GemmDirective
from .problem import GemmProblem, as_problem
from .schedule import Schedule

OP = "gemm"
DEFAULT_DIR = sf.SHIPPED_DIR     # the shipped files (last in the search path)


@dataclass(frozen=True)
class Entry:
    arch: str
    directive: GemmDirective      # what the entry was tuned for: acc, layout, epilogue
    problem: GemmProblem          # the bucket: the sizes it was tuned on
    schedule: Schedule
    tflops: float
    source: str
    path: str
    extra: dict

    def distance(self, p: GemmProblem) -> float:
        q = self.problem
        return sum(abs(math.log2(x / y)) for x, y in ((p.m, q.m), (p.n, q.n), (p.k, q.k), (p.batch, q.batch)))

    def epilogue_mismatch(self, d: GemmDirective) -> int:
        b = self.directive
        return (b.bias != d.bias) + (b.activation != d.activation)


def file_name(arch: str, op: str, dtype: str) -> str:
    return sf.file_name(arch, op, dtype)


def parse(doc: object, path: str | Path = "<memory>") -> list[Entry]:
    """Validate a schedule document; raises ScheduleFileError naming the first bad field."""
    h = sf.header(doc, path, OP, lambda t: t.dtypes)
    return [_entry(e, at, h, path) for at, e in h.entries]


def _entry(e: dict, at: str, h: sf.Header, path) -> Entry:
    b = e["bucket"]
    sf.need({"m", "n", "k"} <= set(b) <= {"m", "n", "k", "batch"}, path, f"{at}.bucket", b,
            "an object with m, n, k (and optionally batch)")
    epi = e.get("epilogue", {})
    sf.need(isinstance(epi, dict) and set(epi) <= {"bias", "activation"}, path, f"{at}.epilogue", epi,
            "an object with bias ('', 'n' or 'm') and activation")
    try:
        p = GemmProblem(b["m"], b["n"], b["k"], b.get("batch", 1))
        d = GemmDirective(h.dtype, acc=e.get("acc", ""), layout=e.get("layout", "NN"),
                          bias=epi.get("bias", ""), activation=epi.get("activation", ""))
    except (ScheduleError, TypeError) as err:
        field = getattr(err, "field", "bucket")
        field = (f"epilogue.{field}" if field in ("bias", "activation")
                 else f"bucket.{field}" if field in GemmProblem.__dataclass_fields__ else field)
        raise ScheduleFileError(path, f"{at}.{field}", getattr(err, "value", b),
                                getattr(err, "allowed", str(err))) from None
    sched = e["schedule"]
    try:
        s = Schedule.from_dict(sched)
    except (ScheduleError, TypeError) as err:
        field = getattr(err, "field", "schedule")
        raise ScheduleFileError(path, f"{at}.schedule.{field}" if field != "schedule" else f"{at}.schedule",
                                getattr(err, "value", sched), getattr(err, "allowed", str(err))) from None
    problems = s.problems(d, h.target, p)
    sf.need(not problems, path, f"{at}.schedule", sched, "a legal schedule: " + "; ".join(problems))
    extra = {k: v for k, v in e.items()
             if k not in ("bucket", "acc", "layout", "epilogue", "schedule", "tflops", "source")}
    return Entry(h.arch, d, p, s, float(e["tflops"]), e["source"], str(path), extra)


def load_file(path: str | Path) -> list[Entry]:
    """Entries of one file (cached by path, mtime and size); ScheduleFileError if invalid."""
    return sf.load(path, parse)


def lookup_entry(arch: str, directive: GemmDirective, problem, directory: str | Path | None = None,
                 accept: Optional[Callable[[Schedule], bool]] = None) -> Optional[Entry]:
    """The exported entry for the nearest bucket whose schedule is legal for `directive` on
    `problem` (a GemmProblem) and passes `accept` (e.g. "the builder can build it"), or None.
    `directory`: only the file there (else the search path of schedule_files)."""
    t = get_target(arch)
    p = as_problem(problem)

    def pick(entries: list[Entry]) -> Optional[Entry]:
        ranked = sorted((e for e in entries if e.directive.layout == directive.layout),
                        key=lambda e: (e.directive.acc != directive.acc, e.distance(p),
                                       e.epilogue_mismatch(directive)))
        for e in ranked:
            if (fits(e.schedule, p) and not e.schedule.problems(directive, t, p)
                    and (accept is None or accept(e.schedule))):
                return e
        return None

    key = _bucket(Entry(arch, directive, p, None, 0.0, "", "", {}))
    return sf.lookup(OP, arch, directive.dtype, key, pick, load_file=load_file, bucket=_bucket, shipped=DEFAULT_DIR,
                     directory=directory, warning=ScheduleFileWarning)


def _bucket(e: Entry) -> str:
    d, p = e.directive, e.problem
    extra = (f" batch={p.batch}" if p.batch != 1 else "") + (f" bias={d.bias}" if d.bias else "")
    extra += f" activation={d.activation}" if d.activation else ""
    return f"m={p.m} n={p.n} k={p.k} acc={d.acc} layout={d.layout}{extra}"


def fits(s: Schedule, p: GemmProblem) -> bool:
    """The macro tile is no larger than the problem (rounded up to the 16x16 WMMA tile): a
    schedule tuned for large shapes is not applied to a problem it would leave mostly idle."""
    return s.block_m <= -(-p.m // 16) * 16 and s.block_n <= -(-p.n // 16) * 16


def lookup(arch: str, directive: GemmDirective, problem, directory: str | Path | None = None,
           accept: Optional[Callable[[Schedule], bool]] = None) -> Optional[Schedule]:
    """The exported schedule for `directive` on `problem` (a GemmProblem or a mapping of its
    fields) on `arch`, or None (caller uses its default)."""
    e = lookup_entry(arch, directive, problem, directory, accept)
    return e.schedule if e else None
