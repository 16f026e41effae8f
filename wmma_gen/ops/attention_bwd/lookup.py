"""Exported attention-backward schedules (<arch>-attention_bwd-<dtype>.json) and their lookup:
the shared format and search path (wmma_gen/schedule_files.py) with the forward's entry key
(head_dim, causal, bucket.seq; attention_common/lookup_key.py) and AttentionBwdSchedule entries,
validated by the backward schedule's own named checks. `lookup` returns the entry with the
same head_dim and mask nearest in sequence length from the first file in the search path
that has one, or None (caller: default)."""
from __future__ import annotations

from pathlib import Path

from ... import schedule_files as sf
from ...errors import ScheduleError
from ...schedule_files import SCHEMA, SCHEMA_VERSION, SOURCES, ScheduleFileError, ScheduleFileWarning  # noqa: F401
from ...targets import get_target
from ...attention_common.lookup_key import DTYPES, bucket, entry_extra, entry_key, nearest
from .schedule import AttentionBwdSchedule

OP = "attention_bwd"
DEFAULT_DIR = sf.SHIPPED_DIR     # the shipped files (last in the search path)


class AttentionBwdScheduleFileWarning(ScheduleFileWarning):
    """An exported backward schedule file was refused; the next file or the default is used."""


def file_name(arch: str, dtype: str) -> str:
    return sf.file_name(arch, OP, dtype)


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries (shared checks: schedule_files.header and the forward's entry key;
    here the backward schedule's own named checks)."""
    h = sf.header(doc, path, OP, DTYPES)
    out = []
    for where, e in h.entries:
        hd, causal, seq = entry_key(e, where, path)
        try:
            s = AttentionBwdSchedule.from_dict(e["schedule"])
        except (ScheduleError, TypeError) as err:
            raise ScheduleFileError(path, f"{where}.schedule", e["schedule"], f"a legal schedule ({err})") from None
        bad = s.problems(hd, h.dtype, h.target)
        sf.need(not bad, path, f"{where}.schedule", s.to_dict(), "; ".join(bad) or "legal")
        out.append({"head_dim": hd, "causal": causal, "seq": seq, **entry_extra(e, where, path, seq), "schedule": s,
                    "tflops": float(e["tflops"]), "source": e["source"]})
    return out


def load_file(path) -> list[dict]:
    return sf.load(path, parse)


def lookup(arch: str, dtype: str, head_dim: int, causal: bool, seq_k: int,
           directory: str | Path | None = None, *, seq_q: int | None = None, window: bool = False,
           varlen: bool = False) -> AttentionBwdSchedule | None:
    """Ranked as the forward's (attention_common/lookup_key.py `nearest`): same window and varlen flags
    first, then |log2 Sk/seq|, then |log2 Sq/seq_q| when seq_q is given."""
    get_target(arch)

    def pick(entries):
        same = [e for e in entries if e["head_dim"] == head_dim and e["causal"] == causal]
        return nearest(same, seq_k, seq_q, window, varlen) if same else None

    key = f"head_dim={head_dim} causal={causal} seq_k={seq_k}"
    key += (f" window={window}" if window else "") + (f" varlen={varlen}" if varlen else "")
    key += f" seq_q={seq_q}" if seq_q is not None else ""
    e = sf.lookup(OP, arch, dtype, key, pick, load_file=load_file, bucket=bucket, shipped=DEFAULT_DIR,
                  directory=directory, warning=AttentionBwdScheduleFileWarning)
    return e["schedule"] if e else None
