"""How a published dense attention measurement of docs/calibration/points.csv reads, forward or
backward: config keys with their readers, the Problem values (MHA, Sq = Sk = seq) and the directive
the model estimates it with. Each op's calibration_point.py (ops/calibration_points.py asks the
registry for it beside the op's spec) names its op."""
from __future__ import annotations


def flag(text: str) -> bool:
    """A 0/1 config value."""
    if text not in ("0", "1"):
        raise ValueError(f"{text!r} is not 0 or 1")
    return text == "1"


KEYS = {"batch": int, "heads": int, "seq": int, "head_dim": int, "causal": flag}


def problem(c: dict) -> dict:
    return dict(batch=c["batch"], heads=c["heads"], kv_heads=c["heads"], seq_q=c["seq"], seq_k=c["seq"])


def directive_of(op: str, dtype: str, c: dict):
    from .directive import AttentionDirective
    return AttentionDirective(dtype, c["head_dim"], causal=c["causal"], op=op)
