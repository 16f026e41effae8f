"""wmma_gen.attention_backward(): dq, dk, dv of flash attention from the forward's o and lse.

    dq, dk, dv = attention_backward(q, k, v, o, do, lse, causal=..., window=..., scale=...)

Same layouts, masks, GQA and varlen conventions as wmma_gen.attention (whose o and lse it
takes). Three kernels run (ops/attention_bwd/run.py): the pre-pass Di = rowsum(dO * O),
dK/dV per key tile (a GQA group's heads accumulated in the workgroup, no atomics) and dQ per
query tile -- deterministic. Gradients come back in the input dtype (bf16 values as float32),
or float32 with out_dtype="f32". With s_aux (the forward's sinks; its lse includes them) a fourth
gradient comes back: d s_aux (heads,) float32 = -sum over batch and queries of
exp(s_aux[h] - lse) * Di, from the pre-pass kernel's Di (a fixed-order host sum: deterministic).
"""
from __future__ import annotations

from ...device.select import arch_of, get_device
from ...hostdata import user_array
from .run import run_backward
from .schedule import AttentionBwdSchedule
from ...attention_common.inputs import public_scale
from ...attention_common.sinks import sink_alias
import numpy as np
from ...knobs import as_schedule


def attention_backward(q, k, v, o, do, lse, *, causal: bool = False, window=None, scale=None,
                       cu_seqlens_q=None, cu_seqlens_k=None, layout: str = "bshd", dtype: str | None = None,
                       out_dtype: str = "same", arch: str | None = None, device=None, schedule=None,
                       softcap=None, s_aux=None, learnable_sink=None):
    """(dq, dk, dv) shaped like (q, k, v); softcap as the forward that made o and lse (None or
    0: off). Bad input raises ValueError naming the argument before anything is compiled or
    launched."""
    dev = get_device(device)
    schedule = as_schedule(AttentionBwdSchedule, schedule)
    q, scale, flipped = public_scale(q, scale)     # d/dq of the original = -(d/dq of -q)
    s_aux = sink_alias(s_aux, learnable_sink)
    results: dict = {}
    grads = run_backward(q, k, v, o, do, lse, scale=scale, causal=causal, window=window,
                         cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, layout=layout, dtype=dtype,
                         out_dtype=out_dtype, arch=arch_of(dev, arch), device=dev, schedule=schedule,
                         softcap=softcap, s_aux=s_aux, results=results)
    infer = "bf16" if dtype == "bf16" else "f16"
    out = [g if out_dtype == "f32" else user_array(g, infer) for g in grads]
    if flipped:
        out[0] = -out[0]
    if s_aux is not None:
        out.append(sink_grad(results["sinks"], results["lse"], results["delta"], cu_seqlens_q is not None))
    return tuple(out)


def sink_grad(sinks, lse, delta, varlen: bool):
    """d s_h = -sum_{b, i} exp(s_h - LSE[b, h, i]) * D[b, h, i] over lse/delta (B, H, Sq) or,
    varlen, (H, total_q); works on numpy arrays and torch tensors alike (one reduction in a
    fixed order: deterministic). Rows that saw no key have O = 0, so D = 0 there."""
    if varlen:
        return -(_exp(sinks[:, None] - lse) * delta).sum(1)
    return -(_exp(sinks[None, :, None] - lse) * delta).sum((0, 2))


def _exp(x):
    return x.exp() if hasattr(x, "exp") else np.exp(x)
