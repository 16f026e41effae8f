"""warmup: compile every kernel a model will need before step 1, so the first training step
is not the one that waits for MLIR.

    warmup(model, example_inputs)      one forward + backward of the model on example_inputs
    warmup([problem, ...])             one call (and its backward) per problem dict

Kernels are chosen per dtype, layout, mask and specialisation key (sizes divisible by the tile,
alignment), and attention schedules per sequence-length bucket; sizes themselves are kernel
arguments. So warm up with the real sequence lengths, dtypes and devices -- a batch of one is
enough. Returns the number of new call plans (one per distinct call shape; 0 when all were ready).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from ..ops import plans
from .flash import flash_attn_func, flash_attn_varlen_func, scaled_dot_product_attention
from .linear import linear, matmul

ATTN_KEYS = ("causal", "window_size", "softmax_scale")


def warmup(model_or_problems, example_inputs=None, *, backward: bool = True, scratch=None) -> int:
    """model_or_problems: a torch.nn.Module (then example_inputs: a tensor, a tuple of
    positional inputs or a dict of keyword inputs; parameters' .grad are left as they were),
    or a list of dicts, each {"op": ..., shapes as tuples, "dtype": torch dtype, "device": ...}, "op"
    naming a torch entry point (ENTRY_POINTS: each says which registry ops' kernels it prepares):
      {"op": "attention", "q": (B, Sq, H, D), "k": (B, Sk, Hkv, D), "causal": True, "window_size": (l, r)}
          layout "bshd" (flash_attn_func) or "bhsd" (scaled_dot_product_attention, is_causal);
          "cu_seqlens_q"/"cu_seqlens_k" lists make it flash_attn_varlen_func with packed q, k
      {"op": "linear", "x": (M, K), "weight": (N, K), "bias": True, "activation": "gelu"}
      {"op": "matmul", "a": (M, K) | (B, M, K), "b": (K, N) | (B, K, N)}
    "backward": False in a dict (or backward=False) skips the backward kernels.
    scratch: a ScratchPool (runtime.py) to reserve the scratch buffers a later stream capture of
    the same calls needs (capture them inside `scratch_pool(pool)`: no allocation then). Warm-up
    also loads every kernel's code object, which a capture may not do (hipModuleLoadData)."""
    if scratch is not None:
        from .runtime import scratch_pool
        with scratch_pool(scratch):
            return warmup(model_or_problems, example_inputs, backward=backward)
    before = plans.plan_keys()
    if isinstance(model_or_problems, torch.nn.Module):
        if example_inputs is None:
            raise ValueError("example_inputs=None is not allowed with a model: pass one batch with the real "
                             "sequence length and dtype (batch size 1 is enough)")
        _warm_model(model_or_problems, example_inputs, backward)
    elif isinstance(model_or_problems, (list, tuple)):
        for i, p in enumerate(model_or_problems):
            if not isinstance(p, dict) or p.get("op") not in ENTRY_POINTS:
                raise ValueError(f"problems[{i}]={p!r} is not allowed: a dict with op one of "
                                 f"{', '.join(e.describe() for e in ENTRY_POINTS.values())}")
            _run_problem(p, backward and p.get("backward", True))
    else:
        raise TypeError(f"model_or_problems={type(model_or_problems).__name__} is not allowed: a torch.nn.Module "
                        "or a list of problem dicts")
    return len(plans.plan_keys() - before)


def _warm_model(model, example_inputs, backward: bool) -> None:
    saved = {p: p.grad for p in model.parameters()}
    try:
        with torch.set_grad_enabled(backward):
            if isinstance(example_inputs, dict):
                out = model(**example_inputs)
            elif isinstance(example_inputs, (tuple, list)):
                out = model(*example_inputs)
            else:
                out = model(example_inputs)
        if backward:
            loss = sum(t.float().sum() for t in _tensors(out) if t.requires_grad)
            if isinstance(loss, torch.Tensor):
                loss.backward()
    finally:
        for p, g in saved.items():
            p.grad = g


def _tensors(out):
    if isinstance(out, torch.Tensor):
        yield out
    elif isinstance(out, (tuple, list)):
        for x in out:
            yield from _tensors(x)
    elif isinstance(out, dict):
        for x in out.values():
            yield from _tensors(x)


def _make(p: dict, key: str, grad: bool, dtype=None) -> torch.Tensor:
    shape = p.get(key)
    if shape is None:
        raise ValueError(f"problem {p.get('op')!r} needs {key!r}: a shape tuple")
    t = torch.zeros(tuple(shape), dtype=dtype or p.get("dtype", torch.float16), device=p.get("device", "cpu"))
    return t.requires_grad_(grad)


def _attention(p: dict, grad: bool) -> torch.Tensor:
    q, k = _make(p, "q", grad), _make(p, "k", grad)
    v = torch.zeros_like(k).requires_grad_(grad)
    kw = {n: p[n] for n in ATTN_KEYS if n in p}
    if "cu_seqlens_q" in p:
        cu = {n: torch.tensor(p[n], dtype=torch.int32, device=q.device) for n in ("cu_seqlens_q", "cu_seqlens_k")}
        mq = max(b - a for a, b in zip(p["cu_seqlens_q"], p["cu_seqlens_q"][1:]))
        mk = max(b - a for a, b in zip(p["cu_seqlens_k"], p["cu_seqlens_k"][1:]))
        return flash_attn_varlen_func(q, k, v, cu["cu_seqlens_q"], cu["cu_seqlens_k"], mq, mk, **kw)
    if p.get("layout", "bshd") == "bhsd":
        return scaled_dot_product_attention(q, k, v, is_causal=kw.get("causal", False),
                                            scale=kw.get("softmax_scale"), enable_gqa=q.shape[1] != k.shape[1])
    return flash_attn_func(q, k, v, **kw)


def _linear(p: dict, grad: bool) -> torch.Tensor:
    grad = grad and p.get("dtype", torch.float16).is_floating_point
    x, w = _make(p, "x", grad), _make(p, "weight", grad)
    b = torch.zeros(w.shape[0], device=w.device, requires_grad=grad) if p.get("bias") else None
    return linear(x, w, b, p.get("activation"))


def _matmul(p: dict, grad: bool) -> torch.Tensor:
    grad = grad and p.get("dtype", torch.float16).is_floating_point
    return matmul(_make(p, "a", grad), _make(p, "b", grad))


@dataclass(frozen=True)
class EntryPoint:
    """One torch call a problem dict names by its "op" (torch's vocabulary, not the registry's)
    and the registry ops whose device plans it prepares (forward, and backward when asked)."""
    name: str
    run: Callable          # (problem dict, grad) -> the output tensor
    ops: tuple[str, ...]   # registry op names (ops/registry.py)

    def describe(self) -> str:
        return f"{self.name} ({', '.join(self.ops)} kernels)"


ENTRY_POINTS = {e.name: e for e in (
    EntryPoint("attention", _attention, ("attention", "attention_bwd")),   # flash_attn_func, sdpa, varlen
    EntryPoint("linear", _linear, ("gemm",)),                              # GEMM calls: forward NT, backward NN/TN
    EntryPoint("matmul", _matmul, ("gemm",)))}


def _run_problem(p: dict, backward: bool) -> None:
    with torch.set_grad_enabled(backward):
        out = ENTRY_POINTS[p["op"]].run(p, backward)
    if backward and out.requires_grad:
        out.backward(torch.zeros_like(out))
