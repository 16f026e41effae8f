"""How a published attention measurement of docs/calibration/points.csv reads (ops/calibration_points.py
asks the registry for this module beside the op's spec): config keys with their readers, the
Problem values (MHA, Sq = Sk = seq) and the directive the model estimates it with. The backward's
points read the same way (ops/attention_bwd/calibration_point.py)."""
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


def directive(dtype: str, c: dict):
    return directive_of("attention", dtype, c)
