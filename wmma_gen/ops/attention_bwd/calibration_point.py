"""The backward's calibration points read as the forward's (ops/attention/calibration_point.py);
only the directive's op differs."""
from __future__ import annotations

from ..attention.calibration_point import KEYS, directive_of, problem  # noqa: F401  (the forward's reading)


def directive(dtype: str, c: dict):
    return directive_of("attention_bwd", dtype, c)
