"""The attention custom ops (torch.library, namespace wmma_gen) that the flash-attn and SDPA
front ends (flash.py) call:

    torch.ops.wmma_gen.attention(q, k, v, cu_q, cu_k, max_q, max_k, causal, left, right, scale, layout, softcap=0.0)
        -> (o, lse)                         o like q (contiguous), lse f32 (B, H, Sq) | varlen (H, total_q)
                                            softcap 0.0 = off (flash-attn's meaning)
    torch.ops.wmma_gen.attention_backward(do, q, k, v, o, lse, <same keywords>) -> (dq, dk, dv)

Both write into tensors allocated here on the inputs' device and launch on the caller's
stream (runtime.stream_of) through ops/device_calls.py: no host copy, no sync. The autograd
formula saves o and lse and calls the project's backward kernels (deterministic: no atomics).
lse is an output for flash-attn's return_attn_probs; it carries no gradient (as in flash-attn).
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from ..ops.device_calls import attention_backward_into, attention_into
from .runtime import kernel_view, stream_of, torch_alloc


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
                   scale: float, layout: str, softcap: float = 0.0, out: Optional[Tensor] = None
                   ) -> tuple[Tensor, Tensor, Optional[tuple]]:
    """(o, lse, replay token or None): the op's body, plus the core's token when q, k, v went
    to the kernel as they are (no kernel_view copy) -- what replay.py may record. O goes into
    `out` when given (flash-attn's out=, checked by the front end)."""
    kq, kk, kv = kernel_view(q), kernel_view(k), kernel_view(v)
    o = out if out is not None else torch.empty(kq.shape, dtype=kq.dtype, device=kq.device)
    lse = torch.empty(_lse_shape(kq, cu_seqlens_q is not None, layout), dtype=torch.float32, device=kq.device)
    keep: list = []
    token = attention_into(kq, kk, kv, o, lse, stream=stream_of(kq), alloc=torch_alloc(kq.device, keep),
                           **_keywords(cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                                       window_left, window_right, scale, layout, softcap))
    return o, lse, (token if kq is q and kk is k and kv is v else None)


def attention_eager(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor],
              max_seqlen_q: int, max_seqlen_k: int, causal: bool, window_left: int, window_right: int,
              scale: float, layout: str, softcap: float = 0.0) -> tuple[Tensor, Tensor]:
    return attention_call(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, window_left,
                          window_right, scale, layout, softcap)[:2]


attention = torch.library.custom_op("wmma_gen::attention", attention_eager, mutates_args=())


@attention.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, window_left, window_right,
      scale, layout, softcap=0.0):
    o = q.new_empty(q.shape)
    lse = q.new_empty(_lse_shape(q, cu_seqlens_q is not None, layout), dtype=torch.float32)
    return o, lse


@torch.library.custom_op("wmma_gen::attention_backward", mutates_args=())
def attention_backward(do: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor,
                       cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor], max_seqlen_q: int,
                       max_seqlen_k: int, causal: bool, window_left: int, window_right: int, scale: float,
                       layout: str, softcap: float = 0.0) -> tuple[Tensor, Tensor, Tensor]:
    do, q, k, v, o, lse = (kernel_view(t) for t in (do, q, k, v, o, lse))
    dq, dk, dv = (torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))
    keep: list = []
    attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, stream=stream_of(q),
                            alloc=torch_alloc(q.device, keep),
                            **_keywords(cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                                        window_left, window_right, scale, layout, softcap))
    return dq, dk, dv


@attention_backward.register_fake
def _(do, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, window_left,
      window_right, scale, layout, softcap=0.0):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


_SCALARS = ("max_seqlen_q", "max_seqlen_k", "causal", "window_left", "window_right", "scale", "layout", "softcap")


def _setup(ctx, inputs, output):
    q, k, v, cu_q, cu_k = inputs[:5]
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k)
    ctx.scalars = inputs[5:]
    ctx.mark_non_differentiable(lse)


def _backward(ctx, do, dlse):
    q, k, v, o, lse, cu_q, cu_k = ctx.saved_tensors
    dq, dk, dv = torch.ops.wmma_gen.attention_backward(do, q, k, v, o, lse, cu_q, cu_k, *ctx.scalars)
    return (dq, dk, dv) + (None,) * (2 + len(_SCALARS))


attention.register_autograd(_backward, setup_context=_setup)
