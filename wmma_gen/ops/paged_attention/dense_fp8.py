"""Dense fp8 forward attention on gfx12 (issue 27 item 2B), FlashAttention-3's fp8 contract:

    O = softmax(scale * (descale_q Q8) (descale_k K8)^T) (descale_v V8),   O in bf16 (or f16)

q (B, Sq, H, D), k / v (B, Sk, Hkv, D) as uint8 fp8 bytes (E4M3 or E5M2, q and k/v each), the
descales a float or one per kv head. It runs on the paged kernel's fp8_wmma path (fp8_tiles.py):
K / V are cut into 16-row pages of their own (a copy only when Sk is no multiple of 16: the
last page is padded) with the identity block table and seq_lens = Sk; Q's bytes are the fp8
WMMA's B operand as given (q_dtype: no requantisation), descale_q goes into the per-kv-head K
scale, and P is E4M3 of P * 2**8 as in the paged path. Up to 16 query tokens run as decode
rows, longer queries as one chunk per sequence (chunked prefill: causal bottom-right, as the
dense forward's directive). gfx12 only (fp8 WMMA); elsewhere the fp8_wmma constraint refuses
it naming the argument.
"""
from __future__ import annotations

import numpy as np

from ...device.select import arch_of, get_device
from ...errors import ScheduleError
from ...targets import get_target
from .api import paged_attention
from .inputs import FP8_STORAGE, MAX_SQ

PAGE = 16


def _per_kv_head(name: str, x, kv_heads: int) -> np.ndarray:
    a = np.asarray(1.0 if x is None else x, np.float64)
    if a.ndim == 0 or a.shape == (kv_heads,):
        return np.broadcast_to(a, (kv_heads,))
    raise ScheduleError(name, a.shape, f"a float or one per kv head ({kv_heads},)")


def _pages(x: np.ndarray) -> np.ndarray:
    """(B, Sk, Hkv, D) -> (B * ceil(Sk / 16), 16, Hkv, D): a view when 16 divides Sk."""
    B, Sk = x.shape[:2]
    n = -(-Sk // PAGE)
    if n * PAGE != Sk:
        x = np.concatenate([x, np.zeros((B, n * PAGE - Sk) + x.shape[2:], x.dtype)], axis=1)
    return x.reshape((B * n, PAGE) + x.shape[2:])


def attention_fp8(q, k, v, *, causal: bool = False, scale=None, descale_q=None, descale_k=None, descale_v=None,
                  window=None, softcap=None, return_lse: bool = False, q_dtype: str = "fp8e4m3",
                  kv_dtype: str = "fp8e4m3", dtype: str = "bf16", arch: str | None = None, device=None,
                  schedule=None):
    """See the module doc. Returns o (B, Sq, H, D) (bf16 values as float32, f16 as float16) and
    with return_lse lse (B, H, Sq) f32 (natural log, of the descaled scores)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if np.asarray(x).ndim != 4:
            raise ScheduleError(f"{name}.shape", np.asarray(x).shape, "4 dimensions (batch, seq, heads, head_dim)")
    for name, x in (("q_dtype", q_dtype), ("kv_dtype", kv_dtype)):
        if x not in FP8_STORAGE:
            raise ScheduleError(name, x, "fp8e4m3 or fp8e5m2")
    target = get_target(arch_of(get_device(device), arch))
    if ("fp8", "f32") not in target.wmma:
        raise ScheduleError("arch", target.arch, "a target with fp8 WMMA (gfx12: RDNA4 ISA guide "
                            "V_WMMA_F32_16X16X16_FP8_FP8); fp8 attention has no dequantising fallback")
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    B, Sq, H, D = q.shape
    if k.shape[0] != B or v.shape != k.shape:
        raise ScheduleError("k.shape", k.shape, f"(batch {B}, Sk, kv_heads, {D}), equal to v.shape {v.shape}")
    Sk, Hkv = k.shape[1], k.shape[2]
    dq, dk = _per_kv_head("descale_q", descale_q, Hkv), _per_kv_head("descale_k", descale_k, Hkv)
    dv = _per_kv_head("descale_v", descale_v, Hkv)
    kp, vp = _pages(k), _pages(v)
    table = np.arange(kp.shape[0], dtype=np.int32).reshape(B, -1)
    lens = np.full(B, Sk, np.int32)
    kw = dict(causal=causal, scale=scale, window=window, softcap=softcap, kv_dtype=kv_dtype, k_scale=dq * dk,
              v_scale=dv, return_lse=True, dtype=dtype, arch=arch, device=device, schedule=schedule, fp8_wmma=True,
              q_dtype=q_dtype)
    if Sq <= MAX_SQ:
        o, lse = paged_attention(q, kp, vp, table, lens, **kw)
    else:
        cu = np.arange(0, (B + 1) * Sq, Sq, dtype=np.int32)
        o, lse = paged_attention(q.reshape(B * Sq, H, D), kp, vp, table, lens, cu_seqlens_q=cu, **kw)
        o, lse = o.reshape(B, Sq, H, D), lse.reshape(H, B, Sq).transpose(1, 0, 2)
    return (o, lse) if return_lse else o


def from_attention(q, k, v, *, dtype: str, causal, window, scale, return_lse, cu_seqlens_q, cu_seqlens_k, layout,
                   arch, device, schedule, softcap, descale_q, descale_k, descale_v):
    """wmma_gen.attention(..., dtype="fp8e4m3" | "fp8e5m2") (the dense forward's hook): q, k and v
    are fp8 bytes of that format; O comes back as bf16 values (float32 arrays)."""
    for name, x, allowed in (("cu_seqlens_q", cu_seqlens_q, None), ("cu_seqlens_k", cu_seqlens_k, None),
                             ("layout", layout, "bshd"), ("schedule", schedule, None)):
        if x is not allowed and x != allowed:
            raise ScheduleError(name, x, f"{allowed!r} with dtype={dtype} (fp8 attention: bshd, not varlen, "
                                "the paged kernel's default schedule)")
    return attention_fp8(q, k, v, causal=causal, scale=scale, descale_q=descale_q, descale_k=descale_k,
                         descale_v=descale_v, window=window, softcap=softcap, return_lse=return_lse, q_dtype=dtype,
                         kv_dtype=dtype, dtype="bf16", arch=arch, device=device)
