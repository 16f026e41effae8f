"""flash-attn's `out=` (vLLM's fork passes its preallocated output): the check and the copy-in that
the front ends (paged_varlen.py, kvcache.py) share.

    check_out(out, like, dtype)   None, or a contiguous tensor of like's shape, `dtype`, like's device
    into(out, o, lse)             (o, lse) with o copied into out when out is given: the path through
                                  torch's dispatcher (torch.compile, autograd) -- a custom op returns
                                  no alias of its inputs; eager calls write into out directly
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor


def check_out(out: Optional[Tensor], like: Tensor, dtype: torch.dtype) -> None:
    if out is None:
        return
    if not isinstance(out, Tensor):
        raise TypeError(f"out is a {type(out).__name__}: a torch.Tensor is required")
    if tuple(out.shape) != tuple(like.shape) or out.dtype != dtype or out.device != like.device:
        raise ValueError(f"out ({out.dtype}, shape {tuple(out.shape)}, {out.device}) is not allowed: "
                         f"{dtype}, shape {tuple(like.shape)} on {like.device} (the output's)")
    if not out.is_contiguous():
        raise ValueError(f"out with strides {out.stride()} is not allowed: a contiguous tensor (the kernel writes "
                         "O densely)")


def into(out: Optional[Tensor], o: Tensor, lse: Tensor) -> tuple[Tensor, Tensor]:
    if out is None:
        return o, lse
    out.copy_(o)
    return out, lse
