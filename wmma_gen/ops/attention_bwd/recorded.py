"""The backward's row of a recorded problems file (registry.light_module): attention_common/recorded.py's
row, op "attention_bwd"."""
from __future__ import annotations

from ...attention_common.recorded import row_of


def problem_row(call: dict, p: dict):
    return row_of("attention_bwd", call, p)
