"""The attention backward's device-call plan (OpSpec.plan, read by ops/plans.cached_plan): the
call parsed as the forward's (attention_common/call_problem.attention_problem) -> the problem sizes, the
schedule the numpy API would pick (tuned file, else the default) and the pre-pass, dK/dV and dQ
kernels in launch order."""
from __future__ import annotations

from ...attention_common.call_problem import attention_problem
from ..plans import Plan, Step


def backward_plan(arch, *, out_dtype, **call) -> Plan:
    from .defaults import default_schedule
    from .lookup import lookup
    from .build import compiled_kernels, make_spec
    p, varlen = attention_problem(**call)
    spec = make_spec(arch, call["dtype"], p["head_dim"], causal=call["causal"],
                     window=(p["window_left"], p["window_right"]) != (-1, -1), varlen=varlen,
                     layout=call["layout"], out=out_dtype, softcap="softcap" in p)
    s = lookup(arch, call["dtype"], p["head_dim"], call["causal"], p["seq_k"], seq_q=p["seq_q"],
               window=(p["window_left"], p["window_right"]) != (-1, -1), varlen=varlen) \
        or default_schedule(arch, p["head_dim"])
    steps = tuple(Step(ck, src.signature) for src, ck in compiled_kernels(spec, s).values())
    return Plan(steps, p)
