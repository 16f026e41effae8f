"""The backward's calibration points (registry.light_module): attention_common/calibration_point.py's
reading, op "attention_bwd"."""
from __future__ import annotations

from ...attention_common.calibration_point import KEYS, directive_of, problem  # noqa: F401


def directive(dtype: str, c: dict):
    return directive_of("attention_bwd", dtype, c)
