"""linear and matmul on torch.ops.wmma_gen.gemm (gemm_ops.py): torch semantics, wmma_gen kernels.

    linear(x, weight, bias=None, activation=None)   act(x @ weight^T + bias), as F.linear (+ act)
    matmul(a, b)                                     a @ b for 2-D / 3-D operands

f16 -> f16, bf16 -> bf16 (f32 accumulation), i8 -> i32. The weight is read as stored ("NT"
GEMM): no transpose is made, forward or backward.
"""
from __future__ import annotations

import torch

from ..device import native
from ..ops.device_calls import placement as _placement
from . import gemm_ops, replay, runtime
from .runtime import AUTOGRAD, DISPATCH, STRAIGHT, _is_compiling, check_dtype, check_tensors, stream_of

FLOAT = ("f16", "bf16")
_NAMES = ("A", "B", "bias", "C")     # the GEMM kernel's pointer arguments of x, weight, bias, then y
DTYPES = FLOAT + ("i8",)


def _same_dtype(name: str, t, like_name: str, like) -> None:
    if t.dtype != like.dtype:
        raise ValueError(f"{name}.dtype={t.dtype} is not allowed: {like.dtype}, the dtype of {like_name}")


def linear(x, weight, bias=None, activation=None):
    """F.linear(x, weight, bias) followed by `activation` (None, "relu", "gelu" = exact erf as
    nn.GELU(), "gelu_tanh" = GELU(approximate="tanh"), "silu"), fused into the GEMM epilogue.
    x (..., in), weight (out, in), bias (out,) in any float dtype (added in f32). x's leading
    dims are flattened with reshape (a view when x is contiguous, else one device-side copy);
    a weight with a strided last dim is made contiguous on its device."""
    mode = DISPATCH if _is_compiling() else runtime._native_mode(x, weight, bias)     # runtime.eager_mode
    checked = False
    if mode != DISPATCH:          # a repeat of a known shape key: checks done once (replay.py)
        if mode == STRAIGHT:      # a recorded key: outputs allocated, kernels enqueued (replay.py)
            key, entry, made = native.lookup(replay._entries, ("linear", _placement(x), activation, mode),
                                             (x, weight, bias), stream_of(x), replay._ENV)
            if made is None and entry is not None:
                made = replay.hit(key, (x, weight, bias), x.device, stream_of(x), entry)   # stale / scratch
            if made is not None:
                return made[0]
        else:
            key, entry = replay.lookup("linear", (x, weight, bias), activation, mode)
        checked = entry is not None
    if not checked:
        _check_linear(x, weight, bias, activation)
    if bias is not None:
        f32 = bias.float()
        same_bias, bias = f32 is bias, f32
    flat = x.dim() != 2                  # leading dims flattened (a view when x is contiguous)
    x2 = x.reshape(-1, x.shape[-1]) if flat else x
    if mode == DISPATCH:
        y = torch.ops.wmma_gen.gemm(x2, weight, bias, "NT", activation or "", "")
    elif mode == AUTOGRAD:        # the eager autograd.Function (gemm_ops.GemmFunction)
        replay.mark(key)
        y = gemm_ops.apply_gemm(x2, weight, bias, "NT", activation or "", "")
    else:
        y, token = gemm_ops.gemm_call(x2, weight, bias, "NT", activation or "", "")
        out = y.reshape(*x.shape[:-1], weight.shape[0]) if flat else y
        if x2.data_ptr() == x.data_ptr() and (bias is None or same_bias):    # no copy on the way in
            replay.record(key, token, _NAMES, out)
        return out
    return y.reshape(*x.shape[:-1], weight.shape[0]) if flat else y


def _check_linear(x, weight, bias, activation) -> None:
    check_tensors(x=x, weight=weight, bias=bias)
    dt = check_dtype("x", x, DTYPES)
    _same_dtype("weight", weight, "x", x)
    if weight.dim() != 2 or x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"weight.shape={tuple(weight.shape)} is not allowed for x.shape={tuple(x.shape)}: "
                         f"(out_features, {x.shape[-1] if x.dim() else '?'}) as F.linear takes")
    if activation is not None and activation not in gemm_ops.ACTIVATIONS:
        raise ValueError(f"activation={activation!r} is not allowed: None or one of {', '.join(gemm_ops.ACTIVATIONS)}")
    if dt not in FLOAT and (bias is not None or activation is not None):
        raise ValueError(f"bias/activation with x.dtype={x.dtype} are not allowed: the integer GEMM returns "
                         "the raw int32 accumulator")
    if bias is not None:
        if tuple(bias.shape) != (weight.shape[0],) or not bias.is_floating_point():
            raise ValueError(f"bias (shape {tuple(bias.shape)}, {bias.dtype}) is not allowed: a float tensor of "
                             f"shape ({weight.shape[0]},)")


def matmul(a, b):
    """a @ b for a (M, K) | (batch, M, K) and b (K, N) | (batch, K, N); a 2-D operand
    broadcasts over the other's batch. Returns f16/bf16 like the inputs, int32 for int8."""
    check_tensors(a=a, b=b)
    check_dtype("a", a, DTYPES)
    _same_dtype("b", b, "a", a)
    for name, t in (("a", a), ("b", b)):
        if t.dim() not in (2, 3):
            raise ValueError(f"{name}.shape={tuple(t.shape)} is not allowed: 2-D (rows, cols) or 3-D "
                             "(batch, rows, cols)")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"b.shape={tuple(b.shape)} is not allowed for a.shape={tuple(a.shape)}: "
                         f"b.shape[-2] must be {a.shape[-1]}")
    if a.dim() == 3 and b.dim() == 3 and a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0]):
        raise ValueError(f"b.shape[0]={b.shape[0]} is not allowed: a's batch {a.shape[0]} or 1")
    op = gemm_ops.gemm_any
    if a.dim() == 3 and b.dim() == 2:     # one taller GEMM: the weight's gradient needs no batch sum
        return op(a.reshape(-1, a.shape[-1]), b, None, "NN", "", "").reshape(a.shape[0], a.shape[1], b.shape[1])
    return op(a, b, None, "NN", "", "")
