"""FP8 dtype names and the k/v descale checks the fp8 torch entry points share (flash_fp8, kvcache,
paged_varlen): one home so those three modules import it instead of each other (issue 26).

Descale values (check_descale): every value must be positive and finite in f32 (NaN gives all-NaN
output, 0 or a negative one a wrong result, 1e39 overflows to inf). A Python number is checked on
every call (free). A tensor is checked once per call key -- (device, data_ptr, _version, shape,
strides): the same unchanged tensor is not read again -- because reading a GPU tensor's values on
the host is a device sync; a CPU tensor (the emulator lane) costs nothing to read. Not checked: a
GPU tensor during CUDA/HIP graph capture (a host read is forbidden there), and a tensor whose
values change in place without torch seeing it (no _version bump, e.g. written by a kernel through
its pointer) after its first check -- on those the values are the caller's part, as in
FlashAttention-3. Under torch.compile tracing the values are fake and not checked (an eager call
of the same tensors checks them).
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

# torch fp8 dtypes -> the kernels' kv_dtype names (OCP E4M3 / E5M2; gfx12 fp8 WMMA, RDNA4 ISA guide)
FP8 = {torch.float8_e4m3fn: "fp8e4m3", torch.float8_e5m2: "fp8e5m2"}


_CHECKED: dict = {}      # call keys of descale tensors found positive and finite (module doc)
_CHECKED_MAX = 4096


def _capturing(t: Tensor) -> bool:
    return t.device.type == "cuda" and torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def check_descale(name: str, x) -> None:
    """Refuse NaN, +-inf, 0, negative and f32-overflowing descales (module doc: when and how often)."""
    if x is None:
        return
    allowed = "positive finite float32 values (a float, one per kv head, or (batch, nheads_k))"
    if not isinstance(x, Tensor):
        try:
            t = torch.as_tensor(x, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"{name}={x!r} is not allowed: {allowed}") from None
        t32 = t.to(torch.float32)
        if not bool((torch.isfinite(t32) & (t32 > 0)).all()):
            raise ValueError(f"{name}={x!r} is not allowed: {allowed}")
        return
    if x.is_complex() or x.dtype == torch.bool:
        raise ValueError(f"{name}.dtype={x.dtype} is not allowed: {allowed}")
    if torch.compiler.is_compiling() or type(x) is not torch.Tensor or _capturing(x):
        return                    # traced (fake values), a tensor subclass, or graph capture: not read
    key = (x.device, x.data_ptr(), x._version, tuple(x.shape), x.stride(), x.dtype)
    if key in _CHECKED:
        return
    t32 = x.detach().to(torch.float32)
    bad = ~(torch.isfinite(t32) & (t32 > 0))
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0]) if x.dim() else ()
        raise ValueError(f"{name}{list(idx) if idx else ''}={float(x[idx]) if idx else float(x)} is not allowed: "
                         f"{allowed}")
    if len(_CHECKED) >= _CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[key] = True


def descale_rows(name: str, x, batch: int, kv_heads: int, device) -> Tensor:
    """x as a (batch, kv_heads) float32 tensor on device (a view when it already is one)."""
    check_descale(name, x)
    if x is None:
        return torch.ones((1, kv_heads), dtype=torch.float32, device=device).expand(batch, kv_heads)
    t = torch.as_tensor(x, dtype=torch.float32, device=device)
    if t.dim() == 0 or tuple(t.shape) == (kv_heads,):
        return t.reshape(1, -1).expand(batch, kv_heads)
    if tuple(t.shape) != (batch, kv_heads):
        raise ValueError(f"{name}.shape={tuple(t.shape)} is not allowed: (batch, nheads_k) = ({batch}, {kv_heads}) "
                         "as FlashAttention-3 takes, a float, or one per kv head")
    return t


def cache_scales(k_cache: Tensor, k_descale, v_descale) -> Optional[Tensor]:
    """(2, nheads_k) float32 k/v scales for an fp8 cache (a float or one per kv head each, 1 when omitted);
    None for a 16-bit cache, which takes no descale."""
    if k_cache.dtype not in FP8:
        if k_descale is not None or v_descale is not None:
            raise ValueError("k_descale / v_descale are not allowed for a 16-bit cache: only fp8 caches are scaled")
        return None
    hk = k_cache.shape[2]
    out = torch.ones((2, hk), dtype=torch.float32, device=k_cache.device)
    for row, (n, x) in enumerate((("k_descale", k_descale), ("v_descale", v_descale))):
        check_descale(n, x)
        if x is not None:
            out[row] = torch.as_tensor(x, dtype=torch.float32, device=k_cache.device).reshape(-1).expand(hk)
    return out


def paged_kv_scales(k_cache: Tensor, k_descale, v_descale, batch: int,
                    per_sequence: bool = False) -> Optional[Tensor]:
    """(2, nheads_k) float32 on the device for an fp8 cache: FA3's (batch, nheads_k) descales (or a
    float / one per kv head) that are the same for every sequence -- the kernel has one scale per
    kv head; vLLM's scale.expand(batch, nheads_k) has batch stride 0. 16-bit caches take none.
    per_sequence=True (callers that run one call per sequence, flash_attn_with_kvcache as
    flash_fp8): descales that differ per sequence come back as (batch, 2, nheads_k) instead of
    being refused."""
    if k_cache.dtype not in FP8 or (k_descale is None and v_descale is None):
        return cache_scales(k_cache, k_descale, v_descale)
    hk = k_cache.shape[2]
    rows, full = [], []
    for n, x in (("k_descale", k_descale), ("v_descale", v_descale)):
        t = descale_rows(n, x, batch, hk, k_cache.device)
        full.append(t)
        if batch > 1 and t.stride(0) != 0 and not per_sequence:
            raise ValueError(f"{n} with batch stride {t.stride(0)} is not allowed: the paged kernel has one scale "
                             f"per kv head for all sequences (a float, ({hk},), or ({batch}, {hk}) expanded from one "
                             "row)")
        rows.append(t[0])
    if batch > 1 and any(t.stride(0) != 0 for t in full):
        return torch.stack(full, dim=1).contiguous()                 # (batch, 2, nheads_k)
    return torch.stack(rows).contiguous()
