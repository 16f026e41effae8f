"""The attention row of a recorded problems file (wmma_gen.torch.record_problems asks the registry
for this module beside the op's spec): a device call (the keywords of plans.forward_plan and
attention_bwd/plan.backward_plan) and its plan's problem -> problem_file.AttentionRow. The
backward's calls read the same way (ops/attention_bwd/recorded.py)."""
from __future__ import annotations

from .problem_file import AttentionRow


def row_of(op: str, call: dict, p: dict) -> AttentionRow:
    window = (p["window_left"], p["window_right"])
    return AttentionRow(op, call["dtype"], p["head_dim"], p["heads"], p["seq_q"], p["seq_k"], batch=p["batch"],
                        kv_heads=p["kv_heads"], causal=call["causal"],
                        window=None if window == (-1, -1) else window, varlen=call["seqlens"] is not None,
                        layout=call["layout"], softcap="softcap" in p)


def problem_row(call: dict, p: dict) -> AttentionRow:
    return row_of("attention", call, p)
