"""The backward's recorded calls read as the forward's (ops/attention/recorded.py); only the
row's op differs."""
from __future__ import annotations

from ..attention.recorded import row_of


def problem_row(call: dict, p: dict):
    return row_of("attention_bwd", call, p)
