"""How a published GEMM measurement of docs/calibration/points.csv reads (ops/calibration_points.py
asks the registry for this module beside the op's spec): its config keys with their readers,
the Problem values it measured and the (sizeless) directive the model estimates it with."""
from __future__ import annotations

KEYS = {"m": int, "n": int, "k": int, "layout": str}   # config key -> how its text reads


def problem(c: dict) -> dict:
    """The Problem values of a point: one (M, N, K) product, batch 1."""
    return dict(m=c["m"], n=c["n"], k=c["k"], batch=1)


def directive(dtype: str, c: dict):
    from .directive import GemmDirective
    return GemmDirective(dtype, layout=c["layout"])
