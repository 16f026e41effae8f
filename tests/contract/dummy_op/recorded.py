"""The dummy op's recorded-call reader (wmma_gen.torch.record_problems finds it beside spec.py):
its plan's call and problem -> a problems-file row."""
from __future__ import annotations


def problem_row(call: dict, p: dict):
    from wmma_gen.tuner.rows import SpecProblem
    return SpecProblem("dummy", (("dtype", call["dtype"]),), (("n", p["n"]),))
