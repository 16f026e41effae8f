"""Exported attention schedules (<arch>-attention-<dtype>.json) and their lookup.

The format, the shared checks and the search path ($WMMA_GEN_SCHEDULES > user dir > shipped)
are wmma_gen/schedule_files.py's, as for every op. An attention entry:

    {"head_dim": 128, "causal": false, "bucket": {"seq": 4096[, "seq_q": 1024]},
     ["window": true, "varlen": true, "softcap": true,]
     "schedule": {<every AttentionSchedule field>}, "tflops": 61.2, "unit": "TFLOP/s",
     "source": "model" | "hip", "validated": true, "isa_hash": "...", ...}

`seq` is the key length Sk; `seq_q` (absent: Sq = Sk, what older files were tuned on) the query
length; `window` / `varlen` / `softcap` (absent: false) the kind of problem tuned. Read back through the same
validators as user input (AttentionDirective, AttentionSchedule.from_dict and its named checks
against the directive and target). `lookup(arch, directive, seq_k, seq_q=None)` returns the
schedule of the entry with the same head_dim and mask, legal for the directive, ranked by
(same softcap flag, same window flag, same varlen flag, |log2 Sk/seq|, |log2 Sq/seq_q| when seq_q is given),
from the first file in the search path that has one, or None -- the caller then uses its
default. For a call without window/varlen and without seq_q this is the nearest |log2 Sk/seq|,
as before. A file that fails validation is skipped with a warning naming the file and field
(never a crash).
"""
from __future__ import annotations

from pathlib import Path

from ... import schedule_files as sf
from ...errors import ScheduleError
from ...schedule_files import SCHEMA, SCHEMA_VERSION, SOURCES, ScheduleFileError, ScheduleFileWarning  # noqa: F401
from ...targets import get_target
from ...attention_common.lookup_key import DTYPES, bucket, entry_extra, entry_key, nearest  # noqa: F401
from .schedule import AttentionSchedule

OP = "attention"
DEFAULT_DIR = sf.SHIPPED_DIR     # the shipped files (last in the search path)


class AttentionScheduleFileWarning(ScheduleFileWarning):
    """An exported attention schedule file was refused; the next file or the default is used."""


def file_name(arch: str, dtype: str) -> str:
    return sf.file_name(arch, OP, dtype)


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries of a document (ScheduleFileError naming file and field otherwise)."""
    from ...attention_common.directive import AttentionDirective
    h = sf.header(doc, path, OP, DTYPES)
    out = []
    for where, e in h.entries:
        hd, causal, seq = entry_key(e, where, path)
        try:
            d = AttentionDirective(h.dtype, hd, causal=causal)
            s = AttentionSchedule.from_dict(e["schedule"])
        except (ScheduleError, TypeError) as err:
            raise ScheduleFileError(path, f"{where}.schedule", e["schedule"], f"a legal schedule ({err})") from None
        bad = s.problems(d, h.target)
        sf.need(not bad, path, f"{where}.schedule", s.to_dict(), "; ".join(bad) or "legal")
        out.append({"head_dim": hd, "causal": causal, "seq": seq, **entry_extra(e, where, path, seq), "schedule": s,
                    "tflops": float(e["tflops"]), "source": e["source"]})
    return out


def load_file(path) -> list[dict]:
    return sf.load(path, parse)


def lookup(arch: str, d, seq_k: int, directory: str | Path | None = None,
           seq_q: int | None = None) -> AttentionSchedule | None:
    t = get_target(arch)

    def pick(entries):
        same = [e for e in entries if e["head_dim"] == d.head_dim and e["causal"] == d.causal
                and not e["schedule"].problems(d, t)]
        return nearest(same, seq_k, seq_q, d.window, d.varlen, getattr(d, "softcap", False)) if same else None

    key = f"head_dim={d.head_dim} causal={d.causal} window={d.window} varlen={d.varlen} seq_k={seq_k}"
    key += " softcap=True" if getattr(d, "softcap", False) else ""
    key += f" seq_q={seq_q}" if seq_q is not None else ""
    e = sf.lookup(OP, arch, d.dtype, key, pick, load_file=load_file, bucket=bucket, shipped=DEFAULT_DIR,
                  directory=directory, warning=AttentionScheduleFileWarning)
    return e["schedule"] if e else None
