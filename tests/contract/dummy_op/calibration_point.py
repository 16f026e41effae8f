"""How a calibration point of the dummy op reads (model/calibration.py finds it beside spec.py)."""
from __future__ import annotations

KEYS = {"n": int}


def problem(c: dict) -> dict:
    return {"n": c["n"]}


def directive(dtype: str, c: dict):
    from .spec import AxpyDirective
    return AxpyDirective(dtype)
