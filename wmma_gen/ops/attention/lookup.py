"""Exported attention schedules (schedules/<arch>-attention-<dtype>.json) and their lookup.

    {"schema": "wmma_gen/attention_schedules", "schema_version": 1, "arch": "gfx1100",
     "op": "attention", "dtype": "f16", "generated": "...", "wmma_gen_version": "...",
     "entries": [{"head_dim": 128, "causal": false, "bucket": {"seq": 4096},
                  "schedule": {<every AttentionSchedule field>}, "tflops": 61.2, "unit": "TFLOP/s",
                  "source": "model" | "hip", "validated": true, "isa_hash": "...", ...}]}

Entries are read back through the same validators as user input (AttentionSchedule.from_dict
and its named checks against the directive and target). `lookup(arch, directive, seq_k)`
returns the schedule of the entry with the same head_dim and mask whose sequence bucket is
nearest (|log2 Sk/bucket|), or None -- the caller then uses its default. A file that fails
validation is refused with a warning naming the file and field (never a crash).
"""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

from ...errors import ScheduleError
from ...targets import get_target
from .schedule import AttentionSchedule

SCHEMA = "wmma_gen/attention_schedules"
SCHEMA_VERSION = 1
SOURCES = ("hip", "model")
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "schedules"


class AttentionScheduleFileWarning(UserWarning):
    """An exported attention schedule file was refused; the default schedule is used."""


def file_name(arch: str, dtype: str) -> str:
    return f"{arch}-attention-{dtype}.json"


def _need(ok: bool, path, field: str, value, allowed: str) -> None:
    if not ok:
        raise ScheduleError(f"{path}: {field}", value, allowed)


def read_document(doc, path, schema: str, version: int):
    """The checks every attention schedule document shares (header, and per entry: validated,
    source, bucket): returns (target, dtype, [(where, entry, seq)]) or raises ScheduleError
    naming the file and field. Op-specific schedule checks are the caller's."""
    _need(isinstance(doc, dict), path, "document", type(doc).__name__, "a JSON object")
    _need(doc.get("schema") == schema, path, "schema", doc.get("schema"), repr(schema))
    _need(doc.get("schema_version") == version, path, "schema_version", doc.get("schema_version"), str(version))
    arch, dtype = doc.get("arch"), doc.get("dtype")
    try:
        t = get_target(arch)
    except ScheduleError:
        _need(False, path, "arch", arch, "a known target")
    _need(dtype in ("f16", "bf16"), path, "dtype", dtype, "f16 or bf16")
    entries = doc.get("entries")
    _need(isinstance(entries, list), path, "entries", type(entries).__name__, "a list")
    out = []
    for i, e in enumerate(entries):
        where = f"entries[{i}]"
        _need(isinstance(e, dict), path, where, type(e).__name__, "an object")
        _need(e.get("validated") is True, path, f"{where}.validated", e.get("validated"),
              "true (only schedules whose correctness gate passed are exported)")
        _need(e.get("source") in SOURCES, path, f"{where}.source", e.get("source"), " or ".join(SOURCES))
        seq = (e.get("bucket") or {}).get("seq")
        _need(isinstance(seq, int) and seq > 0, path, f"{where}.bucket.seq", seq, "a positive integer")
        out.append((where, e, seq))
    return t, dtype, out


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries of a document (ScheduleError naming file and field otherwise)."""
    from .directive import AttentionDirective
    t, dtype, entries = read_document(doc, path, SCHEMA, SCHEMA_VERSION)
    out = []
    for where, e, seq in entries:
        try:
            d = AttentionDirective(dtype, e.get("head_dim"), causal=e.get("causal"))
            s = AttentionSchedule.from_dict(e.get("schedule") or {})
        except (ScheduleError, TypeError) as err:
            _need(False, path, f"{where}.schedule", e.get("schedule"), f"a legal schedule ({err})")
        bad = s.problems(d, t)
        _need(not bad, path, f"{where}.schedule", s.to_dict(), "; ".join(bad) or "legal")
        out.append({"head_dim": d.head_dim, "causal": d.causal, "seq": seq, "schedule": s})
    return out


def lookup(arch: str, d, seq_k: int, directory: str | Path | None = None) -> AttentionSchedule | None:
    path = Path(directory or DEFAULT_DIR) / file_name(arch, d.dtype)
    if not path.is_file():
        return None
    try:
        entries = parse(json.loads(path.read_text()), path)
    except (ScheduleError, ValueError, OSError) as e:
        warnings.warn(f"{path} refused, using the default schedule: {e}", AttentionScheduleFileWarning, stacklevel=2)
        return None
    same = [e for e in entries if e["head_dim"] == d.head_dim and e["causal"] == d.causal]
    t = get_target(arch)
    same = [e for e in same if not e["schedule"].problems(d, t)]   # e.g. window/varlen flags differ
    if not same:
        return None
    best = min(same, key=lambda e: abs(math.log2(max(seq_k, 1) / e["seq"])))
    return best["schedule"]
