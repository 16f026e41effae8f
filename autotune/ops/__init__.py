"""Per-op tuning adapters: what the op-agnostic sweep (study.py), ladder and export need to
know about an op -- its search space, the studies a sweep config asks for, baselines, the
objective, the ladder's problem columns and the export format. One module per op; adding an
op to the tuner is adding a module and one line here (the op itself lives in wmma_gen.ops)."""
from __future__ import annotations

import importlib

from wmma_gen.errors import ScheduleError

ADAPTERS = {"gemm": "autotune.ops.gemm", "attention": "autotune.ops.attention",
            "attention_bwd": "autotune.ops.attention_bwd"}
TUNABLE = tuple(ADAPTERS)


def adapter(op: str):
    if op not in ADAPTERS:
        raise ScheduleError("op", op, f"one of {', '.join(TUNABLE)} (ops the tuner can sweep)")
    return importlib.import_module(ADAPTERS[op])
