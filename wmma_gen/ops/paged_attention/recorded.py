"""The paged op's row of a recorded problems file (wmma_gen.torch.record_problems asks the
registry for this module beside the op's spec): a device call (plan.paged_plan's keywords) and
its plan's problem -> the row (autotune/problems.py SpecProblem) the sweep tunes, or None when
its query chunks are longer than the dense form takes (Sq > inputs.MAX_SQ: not sweepable yet).

A packed chunked prefill is recorded in its dense form (Sq = the longest chunk, varlen off: what
the sweep tunes and lookup.py falls back to); the context length is the one the block table
holds (max_blocks * block_size: what lookup.py buckets a call by)."""
from __future__ import annotations

from .inputs import MAX_SQ, directive_for
from .plan import dtypes_of, kv_dtype_of


def problem_row(call: dict, p: dict):
    from wmma_gen.tuner.rows import SpecProblem        # the tuner's row type (loads with the sweep, not the op)
    if p["seq_q"] > MAX_SQ:
        return None
    dt, q_dtype = dtypes_of(call["operands"])
    dtypes = {n: t for n, _, t in call["operands"]}
    dense = {k: v for k, v in p.items() if k != "total_q"}
    d = directive_for(dt, kv_dtype_of(dtypes, dt, call["kv_dtype"]), dense, call["causal"], call["return_lse"],
                      call.get("fp8_wmma", False), q_dtype)
    fields = {k: v for k, v in d.to_dict().items() if k != "varlen" and (k != "q_dtype" or v != d.dtype)}
    sizes = {"batch": p["batch"], "heads": p["heads"], "kv_heads": p["kv_heads"], "seq_q": p["seq_q"],
             "seq_len": p["max_blocks"] * p["block_size"]}
    if d.window:
        sizes.update(window_left=p["window_left"], window_right=p["window_right"])
    return SpecProblem("paged_attention", tuple(fields.items()), tuple(sizes.items()))
