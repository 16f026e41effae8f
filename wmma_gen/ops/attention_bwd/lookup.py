"""Exported attention-backward schedules (schedules/<arch>-attention_bwd-<dtype>.json) and
their lookup: the forward's format (ops/attention/lookup.py) with AttentionBwdSchedule
entries, validated by the backward schedule's own named checks. `lookup` returns the entry
with the same head_dim and mask nearest in sequence length, or None (caller: default)."""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

from ...errors import ScheduleError
from ..attention.lookup import DEFAULT_DIR, _need, read_document
from .schedule import AttentionBwdSchedule

SCHEMA = "wmma_gen/attention_bwd_schedules"
SCHEMA_VERSION = 1


class AttentionBwdScheduleFileWarning(UserWarning):
    """An exported backward schedule file was refused; the default schedule is used."""


def file_name(arch: str, dtype: str) -> str:
    return f"{arch}-attention_bwd-{dtype}.json"


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries (shared checks: attention/lookup.read_document; here the
    backward schedule's own named checks)."""
    t, dtype, entries = read_document(doc, path, SCHEMA, SCHEMA_VERSION)
    out = []
    for where, e, seq in entries:
        hd = e.get("head_dim")
        _need(hd in (32, 64, 80, 96, 128, 256), path, f"{where}.head_dim", hd, "32, 64, 80, 96, 128 or 256")
        try:
            s = AttentionBwdSchedule.from_dict(e.get("schedule") or {})
        except (ScheduleError, TypeError) as err:
            _need(False, path, f"{where}.schedule", e.get("schedule"), f"a legal schedule ({err})")
        bad = s.problems(hd, dtype, t)
        _need(not bad, path, f"{where}.schedule", s.to_dict(), "; ".join(bad) or "legal")
        out.append({"head_dim": hd, "causal": bool(e.get("causal")), "seq": seq, "schedule": s})
    return out


def lookup(arch: str, dtype: str, head_dim: int, causal: bool, seq_k: int,
           directory: str | Path | None = None) -> AttentionBwdSchedule | None:
    path = Path(directory or DEFAULT_DIR) / file_name(arch, dtype)
    if not path.is_file():
        return None
    try:
        entries = parse(json.loads(path.read_text()), path)
    except (ScheduleError, ValueError, OSError) as e:
        warnings.warn(f"{path} refused, using the default schedule: {e}", AttentionBwdScheduleFileWarning,
                      stacklevel=2)
        return None
    same = [e for e in entries if e["head_dim"] == head_dim and e["causal"] == causal]
    if not same:
        return None
    return min(same, key=lambda e: abs(math.log2(max(seq_k, 1) / e["seq"])))["schedule"]
