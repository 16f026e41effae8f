"""The attention ops' device-resident calls (the shared path: ops/device_calls.py; OpSpec.plan of
attention = plans.py, of attention_bwd = its plan.py, reached by op name through plans.cached_plan):

    attention_into(q, k, v, o, lse=None, *, causal, window, scale, cu_seqlens_q, cu_seqlens_k,
                   max_seqlen_q, max_seqlen_k, layout, softcap, sinks, device, arch, stream, alloc)
    attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, *, the same keywords but sinks)

Outputs are written into the caller's operands, enqueues on the caller's stream: no host copy, no
sync. Both live here (not in ops/attention_bwd/) because they share the operand and plan readers
below and an op folder imports no other op folder."""
from __future__ import annotations

import numpy as np

from ...device.operand import Operand, as_operand
from ...errors import ScheduleError
from ..device_calls import call_key, fast_call, np_view, place_operands, run_plan
from ..plans import Plan, cached_plan


def _attention_named(q, k, v, o, lse, extra: dict) -> dict:
    named = {"q": as_operand(q, "q"), "k": as_operand(k, "k"), "v": as_operand(v, "v"), "o": as_operand(o, "o")}
    if lse is not None:
        named["lse"] = as_operand(lse, "lse")
    for n, x in extra.items():
        if x is not None:
            named[n] = as_operand(x, n)
    return named


def _attention_plan(op: str, named: dict, arch: str, *, causal, window, scale, max_seqlen_q, max_seqlen_k,
                    layout, out_dtype=None, softcap=None) -> Plan:
    cu_q, cu_k = named.get("cu_seqlens_q"), named.get("cu_seqlens_k")
    if (cu_q is None) != (cu_k is None):
        raise ScheduleError("cu_seqlens_k" if cu_k is None else "cu_seqlens_q", None,
                            "an int32 offsets tensor: varlen needs both cu_seqlens_q and cu_seqlens_k")
    varlen = cu_q is not None
    seqlens = None
    if varlen:
        for n in ("cu_seqlens_q", "cu_seqlens_k"):
            if named[n].dtype != "i32" or named[n].ndim != 1:
                raise ScheduleError(f"{n}", f"{named[n].dtype} {named[n].shape}", "a 1-D int32 tensor of batch + 1 offsets")
        seqlens = _host_seqlens(cu_q, cu_k, max_seqlen_q, max_seqlen_k)
    q, k, v, o = (named[n] for n in ("q", "k", "v", "o"))
    return cached_plan(op, arch, q=q.shape, k=k.shape, v=v.shape, o=o.shape, dtype=q.dtype,
                       dtypes=tuple((n, x.dtype) for n, x in named.items()),
                       lse=named["lse"].shape if "lse" in named else None, causal=bool(causal),
                       window=None if window is None else tuple(window), scale=scale, layout=layout,
                       seqlens=seqlens, cu=(cu_q.shape if varlen else None), out_dtype=out_dtype,
                       softcap=softcap or None, **({"sinks": named["sinks"].shape} if "sinks" in named else {}))


def _host_seqlens(cu_q: Operand, cu_k: Operand, max_q, max_k) -> tuple:
    """(max_seqlen_q, max_seqlen_k) -- read from CPU offsets (checked there), or the caller's
    values for GPU offsets (never copied to the host: flash-attn's contract)."""
    if cu_q.device == "cpu" and cu_k.device == "cpu":
        qs = np_view(cu_q).astype(np.int64)
        ks = np_view(cu_k).astype(np.int64)
        return ("host", tuple(int(x) for x in qs), tuple(int(x) for x in ks))
    for n, x in (("max_seqlen_q", max_q), ("max_seqlen_k", max_k)):
        if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x < 0:
            raise ScheduleError(n, x, "an int >= 0 (the longest sequence): GPU cu_seqlens are not read on the host")
    return ("device", int(max_q), int(max_k))


def attention_into(q, k, v, o, lse=None, *, causal: bool = False, window=None, scale=None, cu_seqlens_q=None,
                   cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, layout: str = "bshd", device=None,
                   arch: str | None = None, stream=None, alloc=None, softcap=None, sinks=None) -> tuple | None:
    """Flash-attention forward into o (and lse when given): see the module doc and
    wmma_gen.attention for shapes, masks (bottom-right causal), GQA, varlen and softcap (None
    or 0: off); sinks: float32 (heads,) sink logits (GPT-OSS s_aux) or None. Returns a replay
    token (`replay`) when this call shape is remembered, else None."""
    named = _attention_named(q, k, v, o, lse, {"cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k,
                                               "sinks": sinks})
    varlen = "cu_seqlens_q" in named and named["cu_seqlens_q"].device == "cpu"   # host offsets: plan reads them
    fast = None if varlen else call_key("attention", device, arch, named, layout, causal,
                                         None if window is None else tuple(window), scale, max_seqlen_q, max_seqlen_k,
                                         softcap)
    names = {"q": "Q", "k": "K", "v": "V", "o": "O", "lse": "LSE"}
    hit = None if fast is None else fast_call(fast, device, {names.get(n, n): x.ptr for n, x in named.items()},
                                               stream, alloc)
    if hit is not None:
        return hit
    device, arch, alloc, _keep = place_operands(named, device, arch, alloc)
    plan = _attention_plan("attention", named, arch, causal=causal, window=window, scale=scale,
                           max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, layout=layout, softcap=softcap)
    ops = {"Q": named["q"], "K": named["k"], "V": named["v"], "O": named["o"]}
    if "lse" in named:
        ops["LSE"] = named["lse"]
    for n in ("cu_seqlens_q", "cu_seqlens_k", "sinks"):
        if n in named:
            ops[n] = named[n]
    return run_plan(plan, device, ops, alloc, stream, fast)


def attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, *, causal: bool = False, window=None, scale=None,
                            cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                            layout: str = "bshd", device=None, arch: str | None = None, stream=None,
                            alloc=None, softcap=None):
    """dq, dk, dv of flash attention from the forward's o and lse, written into dq/dk/dv
    (their dtype: the inputs' or f32); softcap as the forward's. Deterministic: no atomics.
    Returns the replay token (a Prepacked; its scratch, delta, comes from `alloc` per call)."""
    named = _attention_named(q, k, v, o, lse, {"do": do, "dq": dq, "dk": dk, "dv": dv,
                                               "cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k})
    varlen = "cu_seqlens_q" in named and named["cu_seqlens_q"].device == "cpu"   # host offsets: plan reads them
    fast = None if varlen else call_key("attention_bwd", device, arch, named, layout, causal,
                                         None if window is None else tuple(window), scale, max_seqlen_q, max_seqlen_k,
                                         softcap)
    hit = None if fast is None else fast_call(fast, device, {n: x.ptr for n, x in named.items()}, stream, alloc)
    if hit is not None:
        return hit
    device, arch, alloc, _keep = place_operands(named, device, arch, alloc)
    out = named["dq"].dtype
    for n in ("dk", "dv"):
        if named[n].dtype != out:
            raise ScheduleError(f"{n}.dtype", named[n].dtype, f"{out}, the dtype of dq")
    plan = _attention_plan("attention_bwd", named, arch, causal=causal, window=window, scale=scale,
                           max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, layout=layout,
                           out_dtype="f32" if out == "f32" else "same", softcap=softcap)
    ops = {n: x for n, x in named.items() if n not in ("lse",)}
    ops["lse"] = named["lse"]
    return run_plan(plan, device, ops, alloc, stream, fast)
