"""Scalar arguments of the torch lane's flash-attn front ends, checked once at the edge (flash.py,
kvcache.py, paged_varlen.py): a clear ValueError naming the argument, the value and what is
allowed, never a silent conversion (window_size=(1.5, 0) is not (1, 0), '40' is not (4, 0)).

    check_window(window_size) -> (left, right)     None or two ints >= -1 (-1: unbounded)
    check_max_seqlen(name, value) -> int           an int >= 0
    signed_scale(q, softmax_scale) -> (q, scale)   a negative scale as -q and |scale| (exact)
    check_sinks(s_aux, learnable_sink, heads, q)   None or a floating (heads,) tensor on q's device

One rule for a negative softmax scale in every attention entry point (numpy: wmma_gen.attention,
attention_backward, paged_attention; torch: this lane): accepted and computed exactly by negating q
(softmax(s q.k) = softmax(|s| (-q).k); fp8 q by flipping its sign bit). Why accept rather than
refuse: it is legal math that torch's own SDPA computes, and the kernels' online softmax needs
scale > 0 only internally (ops/attention/inputs._scale), which the negation gives them. The cost is
one elementwise pass over q on the caller's device, only for such calls; autograd sees torch's
negation, so dq comes back with the right sign. 0, NaN, +-inf and values outside the f32 range
are refused (hostdata.f32_scalar).
"""
from __future__ import annotations

import numbers

import torch
from torch import Tensor

from .. import hostdata
from .fp8_scales import FP8


def _int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def check_window(window_size) -> tuple[int, int]:
    if window_size is None:
        return -1, -1
    ok = (isinstance(window_size, (tuple, list)) and len(window_size) == 2
          and all(_int(w) and w >= -1 for w in window_size))
    if not ok:
        raise ValueError(f"window_size={window_size!r} is not allowed: None or (left, right), two ints >= -1 "
                         "(-1: unbounded)")
    return int(window_size[0]), int(window_size[1])


def check_max_seqlen(name: str, value) -> int:
    if isinstance(value, Tensor) and value.dim() == 0 and not value.is_floating_point() and value.device.type == "cpu":
        value = int(value)
    if not _int(value) or value < 0:
        raise ValueError(f"{name}={value!r} is not allowed: an int >= 0 (the longest sequence of the batch)")
    return int(value)


def signed_scale(q: Tensor, softmax_scale):
    """(q, softmax_scale) with a negative scale turned into (-q, -scale); None stays None (the
    default 1/sqrt(D) is positive)."""
    if softmax_scale is None:
        return q, None
    s = hostdata.f32_scalar("softmax_scale", softmax_scale, nonzero=True)
    if s > 0:
        return q, s
    if q.dtype in FP8:                 # no arithmetic on fp8: flip the sign bit of every byte
        return (q.view(torch.uint8) ^ 0x80).view(q.dtype), -s
    return -q, -s


def check_sinks(s_aux, learnable_sink, heads: int, q):
    """flash-attn's sink vector (s_aux, alias learnable_sink): None, or a floating (heads,)
    tensor on q's device (f32 or the input dtype; the kernels read it as f32)."""
    if s_aux is not None and learnable_sink is not None:
        raise ValueError("learnable_sink is not allowed together with s_aux: they name the same sink logits")
    s = s_aux if s_aux is not None else learnable_sink
    if s is None:
        return None
    if not isinstance(s, torch.Tensor) or not s.is_floating_point() or tuple(s.shape) != (heads,):
        shape = tuple(s.shape) if isinstance(s, torch.Tensor) else type(s).__name__
        raise ValueError(f"s_aux={shape} is not allowed: a floating tensor of shape ({heads},), one sink logit per "
                         "query head")
    if s.device != q.device:
        raise ValueError(f"s_aux.device={s.device} is not allowed: {q.device}, the device of q")
    return s
