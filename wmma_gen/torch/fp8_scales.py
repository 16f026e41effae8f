"""FP8 dtype names and the k/v descale checks the fp8 torch entry points share (flash_fp8, kvcache,
paged_varlen): one home so those three modules import it instead of each other (issue 26)."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

# torch fp8 dtypes -> the kernels' kv_dtype names (OCP E4M3 / E5M2; gfx12 fp8 WMMA, RDNA4 ISA guide)
FP8 = {torch.float8_e4m3fn: "fp8e4m3", torch.float8_e5m2: "fp8e5m2"}


def descale_rows(name: str, x, batch: int, kv_heads: int, device) -> Tensor:
    """x as a (batch, kv_heads) float32 tensor on device (a view when it already is one)."""
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
    for row, x in enumerate((k_descale, v_descale)):
        if x is not None:
            out[row] = torch.as_tensor(x, dtype=torch.float32, device=k_cache.device).reshape(-1).expand(hk)
    return out


def paged_kv_scales(k_cache: Tensor, k_descale, v_descale, batch: int) -> Optional[Tensor]:
    """(2, nheads_k) float32 on the device for an fp8 cache: FA3's (batch, nheads_k) descales (or a
    float / one per kv head) that are the same for every sequence -- the kernel has one scale per
    kv head; vLLM's scale.expand(batch, nheads_k) has batch stride 0. 16-bit caches take none."""
    if k_cache.dtype not in FP8 or (k_descale is None and v_descale is None):
        return cache_scales(k_cache, k_descale, v_descale)
    hk = k_cache.shape[2]
    rows = []
    for n, x in (("k_descale", k_descale), ("v_descale", v_descale)):
        t = descale_rows(n, x, batch, hk, k_cache.device)
        if batch > 1 and t.stride(0) != 0:
            raise ValueError(f"{n} with batch stride {t.stride(0)} is not allowed: the paged kernel has one scale "
                             f"per kv head for all sequences (a float, ({hk},), or ({batch}, {hk}) expanded from one "
                             "row)")
        rows.append(t[0])
    return torch.stack(rows).contiguous()
