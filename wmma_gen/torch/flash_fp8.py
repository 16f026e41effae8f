"""flash_attn_func on fp8 tensors: FlashAttention-3's fp8 forward on gfx12's fp8 WMMA.

    out = flash_attn_func(q8, k8, v8, causal=..., q_descale=dq, k_descale=dk, v_descale=dv)

    O = softmax(scale * (dq Q8) (dk K8)^T) (dv V8)      O in torch.bfloat16, as FA3's fp8 forward

q (batch, seqlen_q, nheads, hd), k / v (batch, seqlen_k, nheads_k, hd), all torch.float8_e4m3fn
or all float8_e5m2; the descales FA3's (batch, nheads_k) float32 tensors (None = 1; a float or
one per kv head is taken too). It runs on the paged kernel's native fp8 path (wmma_gen.
paged_attention with fp8_wmma, Q's bytes used as given: ops/paged_attention/dense_fp8.py is
the numpy form) through torch.ops.wmma_gen.paged_attention (kvcache.py): K / V are viewed as
pages with the identity block table, q's bytes are read in place. Descale values stay on the
device and are not checked there (positive finite is the caller's part, as FA3's).

Copies (all on the tensors' device, never through the host):
  * seqlen_k not a multiple of 16, a batch stride other than seqlen_k rows, or rows that are
    not dense (e.g. k sliced out of a packed qkv): K and V are copied once into padded 16-row
    pages (the kernel reads whole pages; the padding is masked);
  * a descale that differs between sequences (batch stride != 0, batch > 1): the kernel has
    one scale per kv head, so the call runs once per sequence (2 launches each, no data copy);
    vLLM's `scale.expand(batch, nheads_k)` has batch stride 0 and runs as one call;
  * seqlen_q > 16 runs as chunked prefill, q packed (batch * seqlen_q, ...): a view when q is
    contiguous.
gfx12 only (fp8 WMMA); elsewhere a ValueError names the arch and the dtype.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .fp8_scales import FP8, descale_rows
from .kvcache import contiguous_pages, paged_call
from .runtime import direct

PAGE = 16     # rows per page when K / V must be copied (the smallest paged block size)


def fp8_arch_check(q: Tensor) -> None:
    """Refuse targets without fp8 WMMA before anything is compiled, naming arch and dtype."""
    from ..device.select import device_for
    from ..targets import get_target
    _, arch = device_for({"q": q})
    if ("fp8", "f32") not in get_target(arch).wmma:
        raise ValueError(f"q.dtype={q.dtype} is not allowed on arch={arch}: fp8 attention needs fp8 WMMA "
                         "(gfx12: V_WMMA_F32_16X16X16_FP8_FP8, RDNA4 ISA guide) and has no dequantising fallback; "
                         "pass float16 / bfloat16 tensors there")


def _pages(x: Tensor, name: str) -> tuple[Tensor, int]:
    """(pages, pages per sequence): a view when the cache layout allows, else one padded copy."""
    if x.shape[1] % PAGE == 0:
        try:
            pages, per = contiguous_pages(x, name)
            if pages.is_contiguous():
                return pages, per
        except ValueError:
            pass
    B, S = x.shape[:2]
    n = max(-(-S // PAGE), 1)
    raw = torch.zeros((B, n * PAGE) + tuple(x.shape[2:]), dtype=torch.uint8, device=x.device)
    raw[:, :S] = x.view(torch.uint8)          # fp8 copied as its bytes (no arithmetic on fp8)
    return raw.view(x.dtype).reshape((B * n, PAGE) + tuple(x.shape[2:])), n


def flash_attn_fp8(q: Tensor, k: Tensor, v: Tensor, *, causal: bool, window: tuple[int, int], scale: float,
                   softcap: float, q_descale, k_descale, v_descale) -> tuple[Tensor, Tensor]:
    """(out (B, Sq, H, D) bf16, lse (B, H, Sq) f32) for flash.flash_attn_func's fp8 route."""
    for n, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"{n}.shape={tuple(t.shape)} is not allowed: 4-D (batch, seqlen, nheads, headdim)")
        if t.dtype != q.dtype:
            raise ValueError(f"{n}.dtype={t.dtype} is not allowed: {q.dtype}, the dtype of q (one fp8 format)")
    fp8_arch_check(q)
    B, Sk, Hkv = k.shape[0], k.shape[1], k.shape[2]
    if k.shape != v.shape or B != q.shape[0]:
        raise ValueError(f"k.shape={tuple(k.shape)}, v.shape={tuple(v.shape)} are not allowed: equal, "
                         f"(batch {q.shape[0]}, seqlen_k, nheads_k, headdim)")
    dq, dk, dv = (descale_rows(n, x, B, Hkv, q.device)
                  for n, x in (("q_descale", q_descale), ("k_descale", k_descale), ("v_descale", v_descale)))
    k_pages, per = _pages(k, "k")
    v_pages, _ = _pages(v, "v")
    table = torch.arange(k_pages.shape[0], dtype=torch.int32, device=q.device).reshape(B, per)
    lens = torch.full((B,), Sk, dtype=torch.int32, device=q.device)
    scales = torch.stack((dq * dk, dv), dim=1)                      # (B, 2, Hkv): K row (Q's too), V row
    opts = (bool(causal), int(window[0]), int(window[1]), float(scale), float(softcap or 0.0), True)
    run = paged_call if direct(q, k, v) else torch.ops.wmma_gen.paged_attention
    same = B == 1 or all(t.stride(0) == 0 for t in (dq, dk, dv))
    if same:
        return run(q, k_pages, v_pages, table, lens, scales[0].contiguous(), *opts)
    outs = [run(q[b:b + 1], k_pages, v_pages, table[b:b + 1], lens[b:b + 1], scales[b].contiguous(), *opts)
            for b in range(B)]                                      # per-sequence descales: one call each
    return torch.cat([o for o, _ in outs]), torch.cat([lse for _, lse in outs])


__all__ = ["flash_attn_fp8", "fp8_arch_check", "FP8"]
