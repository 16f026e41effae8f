"""The attention custom ops (torch.library, namespace wmma_gen) that the flash-attn and SDPA
front ends (flash.py) call:

    torch.ops.wmma_gen.attention(q, k, v, cu_q, cu_k, max_q, max_k, causal, left, right, scale, layout, softcap=0.0,
                                 s_aux=None)
        -> (o, lse)                         o like q (contiguous), lse f32 (B, H, Sq) | varlen (H, total_q)
                                            softcap 0.0 = off (flash-attn's meaning); s_aux f32 (H,)
                                            sink logits (GPT-OSS), lse then includes the sink
    torch.ops.wmma_gen.attention_backward(do, q, k, v, o, lse, <same keywords>) -> (dq, dk, dv)

Both write into tensors allocated here on the inputs' device and launch on the caller's
stream (runtime.stream_of) through ops/device_calls.py: no host copy, no sync. The autograd
formula saves o and lse and calls the project's backward kernels (deterministic: no atomics).
lse is an output for flash-attn's return_attn_probs; it carries no gradient (as in flash-attn).
s_aux's gradient is -sum_{b,i} exp(s_aux[h] - lse) * rowsum(dO * O) (torch ops on the device:
a fixed-order reduction, deterministic).
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from ..ops.device_calls import attention_backward_into, attention_into
from . import replay
from .runtime import STRAIGHT, eager_mode, kernel_view, stream_of, torch_alloc


def _lse_shape(q: Tensor, varlen: bool, layout: str) -> tuple[int, ...]:
    if varlen:
        return (q.shape[1], q.shape[0])
    b, s, h = (q.shape[0], q.shape[1], q.shape[2]) if layout == "bshd" else (q.shape[0], q.shape[2], q.shape[1])
    return (b, h, s)


def _window(left: int, right: int):
    return None if (left, right) == (-1, -1) else (left, right)


def _keywords(cu_q, cu_k, max_q, max_k, causal, left, right, scale, layout, softcap) -> dict:
    kw = dict(causal=causal, window=_window(left, right), scale=scale, layout=layout, softcap=softcap or None)
    if cu_q is not None:
        kw.update(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=max_q, max_seqlen_k=max_k)
    return kw


def attention_call(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor],
                   max_seqlen_q: int, max_seqlen_k: int, causal: bool, window_left: int, window_right: int,
                   scale: float, layout: str, softcap: float = 0.0, s_aux: Optional[Tensor] = None,
                   out: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Optional[tuple]]:
    """(o, lse, replay token or None): the op's body, plus the core's token when q, k, v went
    to the kernel as they are (no kernel_view copy) -- what replay.py may record. O goes into
    `out` when given (flash-attn's out=, checked by the front end)."""
    kq, kk, kv = kernel_view(q), kernel_view(k), kernel_view(v)
    sinks = None if s_aux is None else kernel_view(s_aux.detach().to(torch.float32))
    o = out if out is not None else torch.empty(kq.shape, dtype=kq.dtype, device=kq.device)
    lse = torch.empty(_lse_shape(kq, cu_seqlens_q is not None, layout), dtype=torch.float32, device=kq.device)
    keep: list = []
    token = attention_into(kq, kk, kv, o, lse, stream=stream_of(kq), alloc=torch_alloc(kq.device, keep),
                           **_keywords(cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                                       window_left, window_right, scale, layout, softcap), sinks=sinks)
    return o, lse, (token if kq is q and kk is k and kv is v else None)


def attention_eager(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor],
              max_seqlen_q: int, max_seqlen_k: int, causal: bool, window_left: int, window_right: int,
              scale: float, layout: str, softcap: float = 0.0, s_aux: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    return attention_call(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, window_left,
                          window_right, scale, layout, softcap, s_aux)[:2]


attention = torch.library.custom_op("wmma_gen::attention", attention_eager, mutates_args=())


@attention.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, window_left, window_right,
      scale, layout, softcap=0.0, s_aux=None):
    o = q.new_empty(q.shape)
    lse = q.new_empty(_lse_shape(q, cu_seqlens_q is not None, layout), dtype=torch.float32)
    return o, lse


def backward_call(do: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor,
                  cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor], max_seqlen_q: int,
                  max_seqlen_k: int, causal: bool, window_left: int, window_right: int, scale: float,
                  layout: str, softcap: float = 0.0) -> tuple[tuple[Tensor, Tensor, Tensor], Optional[tuple]]:
    """((dq, dk, dv), replay token or None): the backward op's body, plus the core's token when
    every tensor went to the kernels as it is (no kernel_view copy)."""
    given = (do, q, k, v, o, lse)
    do, q, k, v, o, lse = (kernel_view(t) for t in given)
    dq, dk, dv = (torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))
    keep: list = []
    token = attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, stream=stream_of(q),
                                    alloc=torch_alloc(q.device, keep),
                                    **_keywords(cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                                                window_left, window_right, scale, layout, softcap))
    same = all(a is b for a, b in zip(given, (do, q, k, v, o, lse)))
    return (dq, dk, dv), (token if same else None)


@torch.library.custom_op("wmma_gen::attention_backward", mutates_args=())
def attention_backward(do: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor,
                       cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor], max_seqlen_q: int,
                       max_seqlen_k: int, causal: bool, window_left: int, window_right: int, scale: float,
                       layout: str, softcap: float = 0.0) -> tuple[Tensor, Tensor, Tensor]:
    return backward_call(do, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                         window_left, window_right, scale, layout, softcap)[0]


@attention_backward.register_fake
def _(do, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, window_left,
      window_right, scale, layout, softcap=0.0):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


_SCALARS = ("max_seqlen_q", "max_seqlen_k", "causal", "window_left", "window_right", "scale", "layout", "softcap")


def _setup(ctx, inputs, output):
    q, k, v, cu_q, cu_k = inputs[:5]
    s_aux = inputs[5 + len(_SCALARS)] if len(inputs) > 5 + len(_SCALARS) else None
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k, s_aux)
    ctx.scalars = inputs[5:5 + len(_SCALARS)]
    ctx.mark_non_differentiable(lse)


_FWD_NAMES = ("Q", "K", "V", "O", "LSE")
_BWD_NAMES = ("do", "q", "k", "v", "o", "lse", "dq", "dk", "dv")


def attention_fast(q, k, v, cu_q, cu_k, *scalars) -> tuple[Tensor, Tensor]:
    """The forward's body through the call-site cache (replay.py) for dense calls without sinks
    (varlen offsets are data and sinks a converted copy: those run the body each time). Eager,
    no autograd graph to record."""
    if cu_q is not None or (len(scalars) > len(_SCALARS) and scalars[len(_SCALARS)] is not None):
        return attention_call(q, k, v, cu_q, cu_k, *scalars)[:2]
    key, entry, made = replay.lookup_run("attention", (q, k, v), stream_of(q), *scalars[:len(_SCALARS)])
    if made is None and entry is not None:        # stale, or scratch to allocate
        made = replay.hit(key, (q, k, v), q.device, stream_of(q), entry)
    if made is not None:
        return made[0], made[1]
    o, lse, token = attention_call(q, k, v, cu_q, cu_k, *scalars)
    replay.record(key, token, _FWD_NAMES, o, lse)
    return o, lse


def backward_any(do, q, k, v, o, lse, cu_q, cu_k, *scalars) -> tuple[Tensor, Tensor, Tensor]:
    """The backward op: straight through the call-site cache when eager with nothing to
    record (the usual backward), else the custom op (double backward, tracing, modes)."""
    if eager_mode(do, q, k, v, o, lse) != STRAIGHT:
        return torch.ops.wmma_gen.attention_backward(do, q, k, v, o, lse, cu_q, cu_k, *scalars)
    if cu_q is not None:
        return backward_call(do, q, k, v, o, lse, cu_q, cu_k, *scalars)[0]
    ts = (do, q, k, v, o, lse)
    key, entry, made = replay.lookup_run("attention_bwd", ts, stream_of(q), *scalars)
    if made is None and entry is not None:        # stale, or scratch to allocate (the backward's delta)
        made = replay.hit(key, ts, q.device, stream_of(q), entry)
    if made is not None:
        return tuple(made)
    grads, token = backward_call(do, q, k, v, o, lse, cu_q, cu_k, *scalars)
    replay.record(key, token, _BWD_NAMES, *grads)
    return grads


def _backward(ctx, do, dlse):
    q, k, v, o, lse, cu_q, cu_k, s_aux = ctx.saved_tensors
    dq, dk, dv = backward_any(do, q, k, v, o, lse, cu_q, cu_k, *ctx.scalars)
    ds = None
    if s_aux is not None and ctx.needs_input_grad[5 + len(_SCALARS)]:
        ds = sink_grad_torch(s_aux, lse, do, o, cu_q is not None, ctx.scalars[_SCALARS.index("layout")])
    return (dq, dk, dv) + (None,) * (2 + len(_SCALARS)) + (ds,)


def sink_grad_torch(s_aux: Tensor, lse: Tensor, do: Tensor, o: Tensor, varlen: bool, layout: str) -> Tensor:
    """d s_aux (s_aux's dtype): D = rowsum(dO * O) in f32 brought to lse's (B, H, Sq) / (H, total_q)
    order, then attention_bwd/api.sink_grad's fixed-order sum."""
    from ..ops.attention_bwd.api import sink_grad
    delta = (do.float() * o.float()).sum(-1)          # bshd (B, Sq, H) | bhsd (B, H, Sq) | varlen (total, H)
    if varlen:
        delta = delta.transpose(0, 1)
    elif layout == "bshd":
        delta = delta.transpose(1, 2)
    return sink_grad(s_aux.float(), lse, delta, varlen).to(s_aux.dtype)


attention.register_autograd(_backward, setup_context=_setup)


def _no_double_backward(ctx, *grads):
    raise NotImplementedError("wmma_gen attention has no double backward: the gradient of its gradient (create_graph="
                              "True, torch.autograd.grad of dq/dk/dv, gradient penalties) is not implemented; use "
                              "torch SDPA's math backend for second-order terms")


attention_backward.register_autograd(_no_double_backward)


class AttentionFunction(torch.autograd.Function):
    """The eager twin of the custom op's autograd registration (same _setup / _backward): what
    an eager call that records autograd runs (runtime.eager_mode AUTOGRAD), skipping the
    custom-op dispatcher; torch.compile and modes still see torch.ops.wmma_gen.attention.
    Takes every input of the op (softcap and s_aux included) so _backward's gradients line up.
    Called through `apply_attention` (the C apply, as gemm_ops.apply_gemm)."""

    @staticmethod
    def forward(ctx, q, k, v, cu_q, cu_k, *scalars):
        o, lse = attention_fast(q, k, v, cu_q, cu_k, *scalars)
        _setup(ctx, (q, k, v, cu_q, cu_k) + scalars, (o, lse))
        return o, lse

    @staticmethod
    def backward(ctx, do, dlse):
        return _backward(ctx, do, dlse)


apply_attention = super(torch.autograd.Function, AttentionFunction).apply
_DEFAULTS = (0.0, None)      # softcap, s_aux: the op's defaults after the required scalars


def attention_any(q, k, v, cu_q, cu_k, *scalars) -> tuple[Tensor, Tensor]:
    """The forward op by the cheapest route that records what torch needs (runtime.eager_mode)."""
    n = len(_SCALARS) - 1                    # required scalars (softcap has a default)
    scalars = scalars + _DEFAULTS[len(scalars) - n:]
    mode = eager_mode(q, k, v, cu_q, cu_k, scalars[-1])
    if mode == STRAIGHT:
        return attention_fast(q, k, v, cu_q, cu_k, *scalars)
    if mode:
        return apply_attention(q, k, v, cu_q, cu_k, *scalars)
    return torch.ops.wmma_gen.attention(q, k, v, cu_q, cu_k, *scalars)
