"""The GEMM custom op (torch.library, namespace wmma_gen) under linear/matmul (linear.py):

    torch.ops.wmma_gen.gemm(a, b, bias, layout, activation, out_dtype) -> c
        c = act(op(a) @ op(b) + bias);  layout "NN" | "NT" | "TN" | "TT", T = stored transposed
        (a (K, M), b (N, K)); a, b 2-D or (batch, r, c) (2-D broadcasts); bias f32 (N,) or None;
        activation "" | relu | gelu | gelu_tanh | silu; out_dtype "" = f16->f16, bf16->bf16,
        i8/u8->i32, or "f32".

The backward is GEMMs on the stored operands with other layouts -- no transpose is made:
    dA = dZ op(b)^T     N.: gemm(dZ, b, "N"+flip(Y))      T.: gemm(b, dZ, Y+"T")  (stores A^T)
    dB = op(a)^T dZ     .N: gemm(a, dZ, flip(X)+"N")      .T: gemm(dZ, a, "T"+X)  (stores B^T)
e.g. Y = X W^T (linear, "NT"): dX = gemm(dY, W, "NN"), dW = gemm(dY, X, "TN"). dZ = dC * act'(Z):
relu reads the saved output; the smooth activations recompute Z = op(a) op(b) + bias with one
f32-output GEMM in the backward (one extra GEMM instead of keeping Z alive: the fused forward
writes only act(Z)). An operand broadcast over the batch gets its gradient summed over it.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from ..ops.device_calls import gemm_into
from . import replay
from .runtime import DTYPE_NAME, STRAIGHT, TORCH_DTYPE, eager_mode, kernel_view, stream_of, torch_alloc

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
LAYOUTS = ("NN", "NT", "TN", "TT")
DEFAULT_OUT = {"f16": "f16", "bf16": "bf16", "i8": "i32", "u8": "i32"}


def out_shape(a: Tensor, b: Tensor, layout: str) -> tuple[int, ...]:
    m = a.shape[-2] if layout[0] == "N" else a.shape[-1]
    n = b.shape[-1] if layout[1] == "N" else b.shape[-2]
    batch = max(a.shape[0] if a.dim() == 3 else 1, b.shape[0] if b.dim() == 3 else 1)
    return (batch, m, n) if 3 in (a.dim(), b.dim()) else (m, n)


def out_dtype_of(a: Tensor, out_dtype: str) -> torch.dtype:
    return TORCH_DTYPE[out_dtype or DEFAULT_OUT[DTYPE_NAME[a.dtype]]]


def gemm_call(a: Tensor, b: Tensor, bias: Optional[Tensor], layout: str, activation: str,
              out_dtype: str) -> tuple[Tensor, Optional[tuple]]:
    """(c, replay token or None): the op's body, plus the core's token when a and b went to
    the kernel as they are (no kernel_view copy) -- what replay.py may record."""
    ka, kb = kernel_view(a), kernel_view(b)
    c = torch.empty(out_shape(ka, kb, layout), dtype=out_dtype_of(ka, out_dtype), device=ka.device)
    keep: list = []
    token = gemm_into(ka, kb, c, layout=layout, bias=bias, activation=activation or None, stream=stream_of(ka),
                      alloc=torch_alloc(ka.device, keep))
    return c, (token if ka is a and kb is b else None)


def gemm_eager(a: Tensor, b: Tensor, bias: Optional[Tensor], layout: str, activation: str, out_dtype: str) -> Tensor:
    """The op's body; linear/matmul call it straight when runtime.direct() says so."""
    return gemm_call(a, b, bias, layout, activation, out_dtype)[0]


_GEMM_NAMES = ("A", "B", "bias", "C")


def gemm_fast(a: Tensor, b: Tensor, bias: Optional[Tensor], layout: str, activation: str, out_dtype: str) -> Tensor:
    """gemm_eager through the call-site cache (replay.py): a repeat of a known key allocates c
    and enqueues the prepacked launch; the first call of a key runs the body and records it.
    Only for eager calls with no autograd graph to record (runtime.eager_mode STRAIGHT)."""
    key, entry, made = replay.lookup_run("gemm", (a, b, bias), stream_of(a), layout, activation, out_dtype)
    if made is None and entry is not None:        # stale, or scratch to allocate
        made = replay.hit(key, (a, b, bias), a.device, stream_of(a), entry)
    if made is not None:
        return made[0]
    c, token = gemm_call(a, b, bias, layout, activation, out_dtype)
    replay.record(key, token, _GEMM_NAMES, c)
    return c


def gemm_any(a: Tensor, b: Tensor, bias: Optional[Tensor], layout: str, activation: str, out_dtype: str) -> Tensor:
    """The GEMM op by the cheapest route that records what torch needs (runtime.eager_mode):
    straight, the eager autograd.Function, or the custom op (tracing, modes, subclasses)."""
    mode = eager_mode(a, b, bias)
    if mode == STRAIGHT:
        return gemm_fast(a, b, bias, layout, activation, out_dtype)
    if mode:
        return apply_gemm(a, b, bias, layout, activation, out_dtype)
    return torch.ops.wmma_gen.gemm(a, b, bias, layout, activation, out_dtype)


gemm = torch.library.custom_op("wmma_gen::gemm", gemm_eager, mutates_args=())


@gemm.register_fake
def _(a, b, bias, layout, activation, out_dtype):
    return a.new_empty(out_shape(a, b, layout), dtype=out_dtype_of(a, out_dtype))


def _flip(letter: str) -> str:
    return "T" if letter == "N" else "N"


def _dz(ctx, dc: Tensor, a: Tensor, b: Tensor, bias, c: Tensor) -> Tensor:
    """dL/dZ for Z the pre-activation (f32 for the smooth activations, else dc's dtype)."""
    act, layout = ctx.activation, ctx.layout
    if not act:
        return dc
    if act == "relu":
        return torch.ops.aten.threshold_backward(dc, c, 0)
    z = gemm_any(a, b, bias, layout, "", "f32")
    g = dc.float()
    if act == "silu":
        dz = torch.ops.aten.silu_backward(g, z)
    else:
        dz = torch.ops.aten.gelu_backward(g, z, approximate="tanh" if act == "gelu_tanh" else "none")
    return dz


def _reduce_to(g: Tensor, like: Tensor) -> Tensor:
    """A batched gradient summed over the batch an operand was broadcast across."""
    if g.dim() == like.dim() and g.shape[0] == like.shape[0]:
        return g.to(like.dtype)
    s = g.float().sum(0)
    return (s.unsqueeze(0) if like.dim() == 3 else s).to(like.dtype)


def _setup(ctx, inputs, output):
    a, b, bias, layout, activation, _ = inputs
    ctx.layout, ctx.activation = layout, activation
    ctx.save_for_backward(a, b, bias, output if activation == "relu" else None)


def _backward(ctx, dc):
    a, b, bias, c = ctx.saved_tensors
    x, y = ctx.layout
    dz_full = _dz(ctx, dc, a, b, bias, c)
    dz = dz_full.to(a.dtype)            # the gradient GEMMs take the inputs' dtype
    batched = dz.dim() == 3
    da = db = dbias = None
    if ctx.needs_input_grad[0]:
        wide = "f32" if batched and (a.dim() == 2 or a.shape[0] == 1) else ""   # summed below: keep f32
        da = (gemm_any(dz, b, None, "N" + _flip(y), "", wide) if x == "N"
              else gemm_any(b, dz, None, y + "T", "", wide))
        da = _reduce_to(da, a)
    if ctx.needs_input_grad[1]:
        wide = "f32" if batched and (b.dim() == 2 or b.shape[0] == 1) else ""
        db = (gemm_any(a, dz, None, _flip(x) + "N", "", wide) if y == "N"
              else gemm_any(dz, a, None, "T" + x, "", wide))
        db = _reduce_to(db, b)
    if bias is not None and ctx.needs_input_grad[2]:
        dbias = dz_full.float().sum(dim=tuple(range(dz.dim() - 1)))
    return da, db, dbias, None, None, None


gemm.register_autograd(_backward, setup_context=_setup)


class GemmFunction(torch.autograd.Function):
    """The eager twin of the custom op's autograd registration (same _setup / _backward):
    what an eager call that records autograd runs (runtime.eager_mode AUTOGRAD), skipping the
    custom-op dispatcher; torch.compile and modes still see torch.ops.wmma_gen.gemm. Called
    through `apply_gemm` (the C apply: Function.apply's Python wrapper re-binds the signature
    with inspect on every call and unwraps functorch wrappers, which eager_mode rules out)."""

    @staticmethod
    def forward(ctx, a, b, bias, layout, activation, out_dtype):
        c = gemm_fast(a, b, bias, layout, activation, out_dtype)
        _setup(ctx, (a, b, bias, layout, activation, out_dtype), c)
        return c

    @staticmethod
    def backward(ctx, dc):
        return _backward(ctx, dc)


apply_gemm = super(torch.autograd.Function, GemmFunction).apply
