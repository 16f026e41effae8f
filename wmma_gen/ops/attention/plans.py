"""The attention forward's device-call plan (OpSpec.plan, read by ops/plans.cached_plan): the
call's shapes, dtypes and flags -> the problem sizes (attention_common/call_problem.py, shared with
the backward's plan), the schedule the numpy API would pick and the compiled kernels in launch order."""
from __future__ import annotations

from types import SimpleNamespace

from ...attention_common.call_problem import attention_problem
from ..plans import Plan, Step


def forward_plan(arch, *, out_dtype=None, **call) -> Plan:
    from .api import _compile_combine, choose_schedule, compile_attention
    from ...attention_common.directive import AttentionDirective
    from ...targets import get_target
    p, varlen = attention_problem(**call)
    d = AttentionDirective(dtype=call["dtype"], head_dim=p["head_dim"], causal=call["causal"],
                           window=(p["window_left"], p["window_right"]) != (-1, -1), varlen=varlen,
                           return_lse=call["lse"] is not None, layout=call["layout"], op="attention",
                           softcap="softcap" in p, sinks=bool(call.get("sinks")))
    s = choose_schedule(d, SimpleNamespace(seq_q=p["seq_q"], seq_k=p["seq_k"]), arch)
    s.validate(d, get_target(arch))
    src, ck = compile_attention(d, s, arch)
    steps = [Step(ck, src.signature)]
    if s.split_kv > 1:
        csrc, cck = _compile_combine(d, s, arch)
        steps.append(Step(cck, csrc.signature))
    return Plan(tuple(steps), p)

