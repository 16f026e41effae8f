"""The entry key both dense attention ops' schedule files share (ops/attention/lookup.py,
ops/attention_bwd/lookup.py): head_dim, causal and bucket.seq, with the optional bucket.seq_q,
window, varlen and softcap fields, checked through schedule_files' named checks; `nearest` ranks
entries for a call and `bucket` names one."""
from __future__ import annotations

import math

from .. import schedule_files as sf
from .directive import HEAD_DIMS     # the directive's table: what a file's head_dim may be

DTYPES = ("f16", "bf16")


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
