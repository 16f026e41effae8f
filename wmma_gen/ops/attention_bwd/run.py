"""run_backward: check the arguments, compile the three kernels (build.py), launch them.

    delta      = prepass(o, do)                                    # Di = rowsum(dO * O), f32
    dk, dv     = dkdv(q, k, v, do, lse, delta)                     # one workgroup per key tile
    dq         = dq(q, k, v, do, lse, delta)                       # one workgroup per query tile

Each kernel goes through the one launcher (device/launcher.py); nothing is launched when an
argument is wrong (ops/attention/inputs.backward_inputs raises first).
"""
from __future__ import annotations

import numpy as np

from ...attention_common.inputs import backward_inputs
from ...device.launcher import launch
from ...device.select import get_device
from .build import compiled_kernels, make_spec
from .defaults import default_schedule
from .schedule import AttentionBwdSchedule


def run_backward(q, k, v, o, do, lse, *, scale=None, causal=False, window=None, cu_seqlens_q=None,
                 cu_seqlens_k=None, layout="bshd", dtype=None, out_dtype="same", arch="gfx1100",
                 device=None, schedule: AttentionBwdSchedule | None = None, stats: dict | None = None,
                 softcap=None, s_aux=None, results: dict | None = None):
    """(dq, dk, dv) shaped like q, k, v; stored as the inputs (float16, bf16 as uint16 bits) or
    float32 with out_dtype="f32". `stats`, when given, receives each kernel's Timing; `results`
receives every array the kernels read or wrote (delta, lse and sinks: api.sink_grad)."""
    inp = backward_inputs(q, k, v, o, do, lse, causal=causal, window=window, scale=scale,
                          cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, layout=layout, dtype=dtype,
                          softcap=softcap, s_aux=s_aux)
    p = inp.problem
    spec = make_spec(arch, p.dtype, p.head_dim, causal=p.causal, window=p.window is not None,
                     varlen=p.varlen, layout=p.layout, out=out_dtype, softcap=p.softcap > 0)
    if schedule is None:   # the exported tuned schedule nearest in length, else the default
        from .lookup import lookup
        schedule = lookup(arch, p.dtype, p.head_dim, p.causal, p.seq_k, seq_q=p.seq_q,
                          window=p.window is not None, varlen=p.varlen)
    s = schedule or default_schedule(arch, p.head_dim)
    kernels = compiled_kernels(spec, s)
    device = get_device(device)   # None: the process's shared default (decoded programs reused across calls)
    problem = {**p.sizes(), **p.kernel_values()}
    arrays = dict(inp.arrays)
    results = {} if results is None else results
    for name, (src, ck) in kernels.items():
        feed = {n: arrays[n] for n in src.signature.inputs}
        outs, timing = launch(ck, src.signature, problem, device, feed)
        arrays.update(outs)
        results.update(outs)
        if stats is not None:
            stats[name] = timing
    results.update({n: np.asarray(a, np.float64) for n, a in arrays.items() if n in ("lse", "delta", "sinks")})
    return results["dq"], results["dk"], results["dv"]
