"""MLA's row of a recorded problems file (wmma_gen.torch.record_problems asks the registry for
this module beside the op's spec): a device call (plan.mla_plan's keywords) and its plan's
problem -> the row (wmma_gen/tuner/rows.py SpecProblem) `wmma-gen sweep --problems` tunes. The
context length is the one the block table holds (max_blocks * block_size: what lookup.py
buckets a call by)."""
from __future__ import annotations

from .plan import KV_FROM_STORAGE


def problem_row(call: dict, p: dict):
    from wmma_gen.tuner.rows import SpecProblem        # the tuner's row type (loads with the sweep, not the op)
    shapes = {n: s for n, s, _ in call["operands"]}
    dtypes = {n: t for n, _, t in call["operands"]}
    dt = dtypes["q"]
    kv = call["kv_dtype"] or KV_FROM_STORAGE.get(dtypes["kv_cache"], dt)
    block_size = shapes["kv_cache"][1]
    fields = (("dtype", dt), ("head_dim", shapes["q"][3]), ("head_dim_v", call["head_dim_v"]),
              ("block_size", block_size), ("kv_dtype", kv), ("causal", call["causal"]))
    sizes = (("batch", p["batch"]), ("heads", p["heads"]), ("seq_q", p["seq_q"]),
             ("seq_len", p["max_blocks"] * block_size))
    return SpecProblem("mla", fields, sizes)
