"""The GEMM's row of a recorded problems file (wmma_gen.torch.record_problems asks the registry
for this module beside the op's spec): a device call (plan.gemm_plan's keywords) and its plan's
problem -> the problems-file row (problem_file.GemmRow) the sweep tunes."""
from __future__ import annotations

from .problem_file import GemmRow

ACC = {"f16": "f32", "bf16": "f32", "fp8": "f32", "bf8": "f32", "i8": "i32", "i4": "i32"}   # the default out dtype


def problem_row(call: dict, p: dict):
    dtype = call["dtype"]
    out = call["out"] if call["out"] != ACC.get(dtype) else ""
    return GemmRow(dtype, p["m"], p["n"], p["k"], layout=call["layout"], batch=p["batch"],
                   bias=call["bias"] is not None, activation=call["activation"] or "", out_dtype=out)
