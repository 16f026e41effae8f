"""The attention row of a recorded problems file (wmma_gen.torch.record_problems asks the registry
for this module beside the op's spec): attention_common/recorded.py's row, op "attention"."""
from __future__ import annotations

from ...attention_common.recorded import row_of


def problem_row(call: dict, p: dict):
    return row_of("attention", call, p)
