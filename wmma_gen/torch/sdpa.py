"""wmma_gen as torch's flash SDPA implementation, through torch's public registry
(torch.nn.attention.register_flash_attention_impl / activate_flash_attention_impl /
restore_flash_attention_impl, torch >= 2.13):

    import wmma_gen.torch.sdpa as wsdpa
    wsdpa.enable()                      # ROCm GPUs ("cuda" tensors); enable(cpu=True) adds the emulator
    with wsdpa.enabled(cpu=True): ...   # the same for a block, then the previous impl comes back
    wsdpa.disable()

What it overrides, per dispatch key (torch's FA4 provider, torch/nn/attention/_fa4.py, does the
same for its kernels):
    CUDA  aten::_scaled_dot_product_flash_attention (+ _backward)   what SDPA's flash backend calls
    CPU   aten::_scaled_dot_product_flash_attention_for_cpu (+ _backward)   SDPA's CPU "flash" route
The CPU kernel is where F.scaled_dot_product_attention lands on CPU tensors for every dtype, mask
and dropout (torch's sdp_utils_cpp picks it over the math kernel), so the emulator is reachable
only when asked (cpu=True).

Each override runs a call on wmma_gen (torch.ops.wmma_gen.attention / attention_backward, so
the profiler shows `wmma_gen::` ops; autograd stays torch's own formula for the aten op, whose
backward lands on the overridden backward) when it can: f16/bf16 q, k, v of one dtype, 4-D
(B, H, S, D), D one of ops.attention.directive.HEAD_DIMS, equal head dims for k and v, H a
multiple of Hkv (GQA, un-expanded), is_causal (SDPA's top-left alignment) or none, any scale, no
attn_mask, dropout_p == 0. Every other call goes to the kernel torch had registered before
(torch.library.get_kernel), unchanged. WMMA_GEN_LOG=sdpa prints one stderr line per
(op, reason) the first time a call falls back.
"""
from __future__ import annotations

import math
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch.nn import attention as _attention

from ..attention_common.directive import HEAD_DIMS
from ..schedule_files import logging_on
from .runtime import is_rocm

IMPL = "wmma_gen"
DTYPES = (torch.float16, torch.bfloat16)
CPU_OPS = ("_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_backward")
CUDA_OPS = ("_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward")
_LOGGED: set[tuple[str, str]] = set()
_handle = None                           # the overrides registered last (what enabled_keys reports)


def fallback_reason(q, k, v, dropout_p=0.0, attn_mask=None, return_debug_mask=False) -> str | None:
    """Why wmma_gen cannot run this SDPA flash call (a short reason for the log), or None."""
    if attn_mask is not None:
        return "attn_mask is set (wmma_gen takes causal / no mask only)"
    if dropout_p:
        return f"dropout_p={dropout_p} (wmma_gen has no dropout)"
    if return_debug_mask:
        return "return_debug_mask=True"
    if q.dtype not in DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        return f"dtypes q={q.dtype}, k={k.dtype}, v={v.dtype} (wmma_gen: all float16 or all bfloat16)"
    if q.device.type == "cuda" and not is_rocm():
        return "an NVIDIA CUDA device (wmma_gen runs on AMD GPUs)"
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return f"rank {q.dim()} (wmma_gen: 4-D (batch, heads, seqlen, head_dim))"
    d = q.shape[-1]
    if d not in HEAD_DIMS or k.shape[-1] != d or v.shape[-1] != d:
        return f"head dims q={d}, k={k.shape[-1]}, v={v.shape[-1]} (wmma_gen: equal, one of {HEAD_DIMS})"
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        return f"{q.shape[1]} query heads over {k.shape[1]} kv heads (wmma_gen: a multiple)"
    if 0 in q.shape or 0 in k.shape:
        return "an empty tensor"
    return None


def _fell_back(op: str, reason: str) -> None:
    if logging_on("sdpa") and (op, reason) not in _LOGGED:
        _LOGGED.add((op, reason))
        print(f"wmma_gen sdpa: aten::{op} -> torch's kernel ({reason})", file=sys.stderr, flush=True)


def forget_logged() -> None:
    """Log every fallback reason again (tests)."""
    _LOGGED.clear()


def _mask(q, k, is_causal: bool):
    """SDPA's top-left causal in the kernel's bottom-right terms (flash.py's module doc):
    (keys used, causal, window left, window right); keys used < Sk when Sq < Sk."""
    sq, sk = q.shape[2], k.shape[2]
    if not is_causal:
        return sk, False, -1, -1
    if sq >= sk:
        return sk, sq == sk, -1, (-1 if sq == sk else sq - sk)
    return sq, True, -1, -1


def _scale(q, scale) -> float:
    return float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1])


def _forward(q, k, v, is_causal, scale):
    used, causal, left, right = _mask(q, k, is_causal)
    ku, vu = k[:, :, :used], v[:, :, :used]
    return torch.ops.wmma_gen.attention(q, ku, vu, None, None, q.shape[2], used, causal, left, right,
                                        _scale(q, scale), "bhsd", 0.0)


def _backward(do, q, k, v, o, lse, is_causal, scale):
    used, causal, left, right = _mask(q, k, is_causal)
    dq, dk, dv = torch.ops.wmma_gen.attention_backward(do, q, k[:, :, :used], v[:, :, :used], o, lse, None, None,
                                                       q.shape[2], used, causal, left, right, _scale(q, scale),
                                                       "bhsd", 0.0)
    if used < k.shape[2]:            # keys no query reaches (top-left causal, Sq < Sk): zero gradient
        pad = (0, 0, 0, k.shape[2] - used)
        dk, dv = torch.nn.functional.pad(dk, pad), torch.nn.functional.pad(dv, pad)
    return dq, dk, dv


def _call_original(original, op, keyset, *args, **kwargs):
    if original is None:
        raise NotImplementedError(f"aten::{op} has no kernel in this torch build for the call wmma_gen handed back")
    return original.call_boxed(keyset, *args, **kwargs)


def _cpu_forward(original):
    op = CPU_OPS[0]

    def impl(keyset, query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
        why = fallback_reason(query, key, value, dropout_p, attn_mask)
        if why is not None:
            _fell_back(op, why)
            return _call_original(original, op, keyset, query, key, value, dropout_p, is_causal,
                                  attn_mask=attn_mask, scale=scale)
        return _forward(query, key, value, is_causal, scale)
    return impl


def _cpu_backward(original):
    op = CPU_OPS[1]

    def impl(keyset, grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, *, attn_mask=None,
             scale=None):
        why = fallback_reason(query, key, value, dropout_p, attn_mask)
        if why is not None:
            _fell_back(op, why)
            return _call_original(original, op, keyset, grad_out, query, key, value, out, logsumexp, dropout_p,
                                  is_causal, attn_mask=attn_mask, scale=scale)
        return _backward(grad_out, query, key, value, out, logsumexp, is_causal, scale)
    return impl


def _cuda_forward(original):
    op = CUDA_OPS[0]

    def impl(keyset, query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
        why = fallback_reason(query, key, value, dropout_p, None, return_debug_mask)
        if why is not None:
            _fell_back(op, why)
            return _call_original(original, op, keyset, query, key, value, dropout_p, is_causal, return_debug_mask,
                                  scale=scale)
        out, lse = _forward(query, key, value, is_causal, scale)
        # flash's extra outputs, as torch's FA4 provider returns them: no varlen offsets, no rng (no dropout)
        rng = torch.zeros((2,), dtype=torch.uint64, device=query.device)
        unused = torch.zeros((), dtype=torch.uint64, device=query.device)
        debug = torch.empty(0, dtype=query.dtype, device=query.device)
        return out, lse, None, None, query.shape[2], key.shape[2], rng, unused, debug
    return impl


def _cuda_backward(original):
    op = CUDA_OPS[1]

    def impl(keyset, grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
             is_causal, philox_seed, philox_offset, *, scale=None):
        why = fallback_reason(query, key, value, dropout_p)
        if why is not None:
            _fell_back(op, why)
            return _call_original(original, op, keyset, grad_out, query, key, value, out, logsumexp, cum_seq_q,
                                  cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset,
                                  scale=scale)
        return _backward(grad_out, query, key, value, out, logsumexp, is_causal, scale)
    return impl


_MAKERS = {"CPU": dict(zip(CPU_OPS, (_cpu_forward, _cpu_backward))),
           "CUDA": dict(zip(CUDA_OPS, (_cuda_forward, _cuda_backward)))}


def _original(op: str, key: str):
    try:
        return torch.library.get_kernel(f"aten::{op}", key)
    except RuntimeError:             # e.g. a CPU-only torch has no CUDA flash kernel
        return None


@dataclass
class _Handle:
    """What activate_flash_attention_impl keeps; remove() unregisters the overrides, so the
    dispatcher serves torch's own kernels again."""
    library: torch.library.Library | None
    keys: tuple = field(default_factory=tuple)

    def remove(self) -> None:
        if self.library is not None:
            self.library._destroy()
            self.library = None


def _keys(device_types, cpu: bool) -> tuple[str, ...]:
    allowed = {"cuda": "CUDA"}
    bad = [t for t in device_types if t not in allowed]
    if bad:
        raise ValueError(f"device_types={tuple(device_types)!r} is not allowed: ('cuda',) (ROCm GPUs) or (); "
                         "the emulator is cpu=True")
    keys = tuple(allowed[t] for t in device_types)
    return keys + (("CPU",) if cpu else ())


def register_kernels(device_types=("cuda",), cpu: bool = False) -> _Handle:
    """The registry's register function: override the flash SDPA kernels for these dispatch keys."""
    keys = _keys(device_types, cpu)
    lib = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # torch warns once that a kernel is overridden: that is the point here
        warnings.filterwarnings("ignore", message="(?s).*Overriding a previously registered kernel")
        for key in keys:
            for op, make in _MAKERS[key].items():
                lib.impl(op, make(_original(op, key)), key, with_keyset=True, allow_override=True)
    global _handle
    _handle = _Handle(lib, keys)
    return _handle


def enable(device_types=("cuda",), cpu: bool = False) -> None:
    """Make wmma_gen torch's active flash SDPA implementation (replacing any other activated
    one): device_types=("cuda",) is ROCm GPUs; cpu=True adds CPU tensors (the emulator: exact,
    slow). Calls wmma_gen cannot run go to torch's own kernels (module doc)."""
    device_types = tuple(device_types)
    _keys(device_types, cpu)             # refuse bad arguments before anything is registered
    _attention.register_flash_attention_impl(IMPL, register_fn=lambda: register_kernels(device_types, cpu))
    _attention.activate_flash_attention_impl(IMPL)


def disable() -> None:
    """Back to torch's own flash kernels (if wmma_gen is the active implementation)."""
    if _attention.current_flash_attention_impl() == IMPL:
        _attention.restore_flash_attention_impl()


def enabled_keys() -> tuple[str, ...]:
    """The dispatch keys wmma_gen currently overrides (empty when it is not active)."""
    if _attention.current_flash_attention_impl() != IMPL or _handle is None or _handle.library is None:
        return ()
    return _handle.keys


@contextmanager
def enabled(device_types=("cuda",), cpu: bool = False):
    """`enable(...)` for the block; afterwards the implementation active before (torch's own,
    another registered one, or wmma_gen with its earlier keys) is active again."""
    before, keys = _attention.current_flash_attention_impl(), enabled_keys()
    enable(device_types, cpu)
    try:
        yield
    finally:
        disable()
        if before == IMPL:
            enable(("cuda",) if "CUDA" in keys else (), "CPU" in keys)
        elif before is not None:
            _attention.activate_flash_attention_impl(before)


# Registered (not activated) on import, as torch asks of providers: activate_flash_attention_impl("wmma_gen")
_attention.register_flash_attention_impl(IMPL, register_fn=register_kernels)
