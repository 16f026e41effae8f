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

import math
from pathlib import Path

from ... import schedule_files as sf
from ...errors import ScheduleError
from ...schedule_files import SCHEMA, SCHEMA_VERSION, SOURCES, ScheduleFileError, ScheduleFileWarning  # noqa: F401
from ...targets import get_target
from .directive import HEAD_DIMS     # the op's own table: what a file's head_dim may be
from .schedule import AttentionSchedule

OP = "attention"
DTYPES = ("f16", "bf16")
DEFAULT_DIR = sf.SHIPPED_DIR     # the shipped files (last in the search path)


class AttentionScheduleFileWarning(ScheduleFileWarning):
    """An exported attention schedule file was refused; the next file or the default is used."""


def file_name(arch: str, dtype: str) -> str:
    return sf.file_name(arch, OP, dtype)


def entry_key(e: dict, where: str, path) -> tuple[int, bool, int]:
    """(head_dim, causal, seq) of an entry -- the key both attention ops' files share."""
    hd, causal, seq = e.get("head_dim"), e.get("causal"), e["bucket"].get("seq")
    sf.need(hd in HEAD_DIMS and not isinstance(hd, bool), path, f"{where}.head_dim", hd,
            f"one of {', '.join(map(str, HEAD_DIMS))}")
    sf.need(isinstance(causal, bool), path, f"{where}.causal", causal, "true or false")
    sf.need(isinstance(seq, int) and not isinstance(seq, bool) and seq > 0, path, f"{where}.bucket.seq", seq,
            "a positive integer")
    return hd, causal, seq


def entry_extra(e: dict, where: str, path, seq: int) -> dict:
    """The optional key fields: bucket.seq_q (default seq), window, varlen and softcap (default false)."""
    b = e["bucket"]
    sf.need(set(b) <= {"seq", "seq_q"}, path, f"{where}.bucket", b, "an object with seq (and optionally seq_q)")
    seq_q = b.get("seq_q", seq)
    sf.need(isinstance(seq_q, int) and not isinstance(seq_q, bool) and seq_q > 0, path, f"{where}.bucket.seq_q",
            seq_q, "a positive integer")
    for name in ("window", "varlen", "softcap"):
        sf.need(isinstance(e.get(name, False), bool), path, f"{where}.{name}", e.get(name), "true or false")
    return {"seq_q": seq_q, **{n: e.get(n, False) for n in ("window", "varlen", "softcap")}}


def parse(doc, path="<memory>") -> list[dict]:
    """The validated entries of a document (ScheduleFileError naming file and field otherwise)."""
    from .directive import AttentionDirective
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


def nearest(entries: list[dict], seq_k: int, seq_q: int | None = None, window: bool = False,
            varlen: bool = False, softcap: bool = False) -> dict:
    """The best-ranked entry (see the module doc); entries without the optional key fields
    carry their defaults (parse)."""
    def rank(e):
        far_q = abs(math.log2(max(seq_q, 1) / e.get("seq_q", e["seq"]))) if seq_q is not None else 0.0
        return (e.get("softcap", False) != softcap, e.get("window", False) != window, e.get("varlen", False) != varlen,
                abs(math.log2(max(seq_k, 1) / e["seq"])), far_q)
    return min(entries, key=rank)


def bucket(e: dict) -> str:
    extra = (f" seq_q={e['seq_q']}" if e.get("seq_q", e["seq"]) != e["seq"] else "")
    extra += "".join(f" {n}=True" for n in ("window", "varlen", "softcap") if e.get(n))
    return f"head_dim={e['head_dim']} causal={e['causal']} seq={e['seq']}{extra}"


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
