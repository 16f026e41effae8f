"""The dense attention row of a recorded problems file: a device call (the keywords of
ops/attention/plans.forward_plan and ops/attention_bwd/plan.backward_plan) and its plan's problem ->
problem_file.AttentionRow. Each op's recorded.py (registry.light_module, asked by
wmma_gen.torch.record_problems) names its op."""
from __future__ import annotations

from .problem_file import AttentionRow


def row_of(op: str, call: dict, p: dict) -> AttentionRow:
    window = (p["window_left"], p["window_right"])
    return AttentionRow(op, call["dtype"], p["head_dim"], p["heads"], p["seq_q"], p["seq_k"], batch=p["batch"],
                        kv_heads=p["kv_heads"], causal=call["causal"],
                        window=None if window == (-1, -1) else window, varlen=call["seqlens"] is not None,
                        layout=call["layout"], softcap="softcap" in p)
