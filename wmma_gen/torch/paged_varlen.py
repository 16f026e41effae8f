"""flash_attn_varlen_func(..., block_table=...) on the paged op (ops/paged_attention/device.py).

flash-attn 2's paged varlen call (flash_attn_interface.py, flash_attn_varlen_func: "k: (total_k,
nheads_k, headdim), or (num_blocks, page_block_size, nheads_k, headdim) if there's a
block_table"; "block_table [optional]: (batch_size, max_num_blocks_per_seq), dtype torch.int32"):
q is packed (total_q, nheads, hd) with cu_seqlens_q; k / v are the paged caches; sequence b
has cu_seqlens_k[b+1] - cu_seqlens_k[b] keys, read through block_table[b]. causal is
bottom-right per sequence, as flash_attn_varlen_func's. Returns out (total_q, nheads, hd) and
lse (nheads, total_q) f32.

Everything stays on the device: the key lengths are differenced there, cu_seqlens_q is never
read on the host (max_seqlen_q gives the grid, as flash-attn asks of its callers). fp8 caches
(torch.float8_e4m3fn / float8_e5m2) take k_descale / v_descale as FlashAttention-3's varlen call
((batch, nheads_k), one value per kv head for all sequences, e.g. vLLM's
scale.expand(batch, nheads_k); a float or (nheads_k,) too; default 1); fp8_wmma=True
(a wmma_gen extension, gfx12 only, as flash_attn_with_kvcache's) multiplies them natively on fp8
WMMA, Q and P quantised to E4M3 in the kernel (wmma_gen.paged_attention says how the numerics
differ). The kernel call is torch.ops.wmma_gen.paged_varlen (a custom op with a fake
implementation: torch.compile sees one opaque op); eager calls with plain tensors skip the
dispatcher (runtime.direct).
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch
from torch import Tensor

from .fp8_scales import FP8, paged_kv_scales
from .kvcache import host_visible
from .out_arg import check_out, into
from .runtime import check_tensors, direct, kernel_view, stream_of, torch_alloc


def _body(q: Tensor, k_cache: Tensor, v_cache: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Optional[Tensor],
          max_seqlen_q: int, block_table: Tensor, kv_scales: Optional[Tensor], causal: bool, window_left: int,
          window_right: int, scale: float, softcap: float, fp8_wmma: bool = False, s_aux: Optional[Tensor] = None,
          seqused_k: Optional[Tensor] = None, out: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """(o (total_q, nheads, hd), lse (nheads, total_q) f32) on checked operands; the key lengths
    are seqused_k when given (no device op), else cu_seqlens_k differenced on the device; O is
    written into `out` when given (checked by paged_varlen), else into a new tensor."""
    from ..ops.paged_attention.device import paged_attention_into   # MLIR loads on the first call, not import
    q = kernel_view(q)
    seq_lens = seqused_k if seqused_k is not None else (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).to(torch.int32)
    seq_lens = seq_lens.contiguous()
    keep: list = []
    o = out if out is not None else torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    paged_attention_into(q, k_cache, v_cache, block_table, seq_lens, o, lse, causal=causal, scale=scale,
                         window=window, softcap=softcap or None, kv_dtype=FP8.get(k_cache.dtype), kv_scales=kv_scales,
                         cu_seqlens_q=cu_seqlens_q, max_seqlen_q=int(max_seqlen_q), stream=stream_of(q),
                         alloc=torch_alloc(q.device, keep), fp8_wmma=fp8_wmma,
                         sinks=None if s_aux is None else kernel_view(s_aux.to(torch.float32)))
    return o, lse


def _check_block_ids(k_cache: Tensor, block_table: Tensor, cu_seqlens_k: Optional[Tensor],
                     seqused_k: Optional[Tensor]) -> None:
    """The block ids each sequence reads in [0, num_blocks), as flash_attn_with_kvcache checks them:
    only when the table and the key lengths are host-visible (CPU tensors in eager mode; a GPU table
    is not read -- a sync --, there the kernel's signed 64-bit block offsets make a bad id fault)."""
    lens = seqused_k if seqused_k is not None else cu_seqlens_k
    if not (host_visible(block_table) and host_visible(lens)):
        return
    from ..ops.paged_attention.inputs import check_block_ids
    lens = lens.numpy() if seqused_k is not None else np.diff(lens.numpy().astype(np.int64))
    check_block_ids(block_table.numpy(), lens, k_cache.shape[1], k_cache.shape[0])


def varlen_call(q: Tensor, k_cache: Tensor, v_cache: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Optional[Tensor],
                max_seqlen_q: int, block_table: Tensor, kv_scales: Optional[Tensor], causal: bool, window_left: int,
                window_right: int, scale: float, softcap: float, fp8_wmma: bool = False,
                s_aux: Optional[Tensor] = None, seqused_k: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """The op's body: new o and lse (a custom op returns no alias of its inputs)."""
    return _body(q, k_cache, v_cache, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, block_table, kv_scales, causal,
                 window_left, window_right, scale, softcap, fp8_wmma, s_aux, seqused_k)


paged_varlen_op = torch.library.custom_op("wmma_gen::paged_varlen", varlen_call, mutates_args=())


@paged_varlen_op.register_fake
def _(q, k_cache, v_cache, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, block_table, kv_scales, causal, window_left,
      window_right, scale, softcap, fp8_wmma=False, s_aux=None, seqused_k=None):
    return q.new_empty(q.shape), q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)


def paged_varlen(q: Tensor, k_cache: Tensor, v_cache: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Optional[Tensor],
                 max_seqlen_q: int, block_table: Tensor, *, causal: bool, window: tuple[int, int], scale: float,
                 softcap: float, fp8_wmma: bool = False, k_descale=None, v_descale=None,
                 s_aux: Optional[Tensor] = None, seqused_k=None, out=None) -> tuple[Tensor, Tensor]:
    """seqused_k (batch,) int32: the key count of each sequence, given instead of cu_seqlens_k (as
    vLLM's flash-attn fork takes them: one or the other). out (total_q, nheads, hd) of q's dtype:
    O is written there (in eager calls without autograd straight, else copied in once)."""
    check_tensors(q=q, k=k_cache, v=v_cache, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                  block_table=block_table, seqused_k=seqused_k, out=out)
    if q.dim() != 3:
        raise ValueError(f"q.shape={tuple(q.shape)} is not allowed: (total_q, nheads, headdim) packed sequences")
    for n, t in (("k", k_cache), ("v", v_cache)):
        if t.dim() != 4:
            raise ValueError(f"{n}.shape={tuple(t.shape)} is not allowed with block_table: a paged cache "
                             "(num_blocks, page_block_size, nheads_k, headdim)")
    for n, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k), ("block_table", block_table)):
        if t is not None and t.dtype != torch.int32:
            raise ValueError(f"{n}.dtype={t.dtype} is not allowed: torch.int32")
    if (cu_seqlens_k is None) == (seqused_k is None):
        raise ValueError("cu_seqlens_k and seqused_k: exactly one is allowed with block_table (got "
                         f"{'both' if seqused_k is not None else 'neither'}): the keys of each sequence")
    if cu_seqlens_k is not None and (cu_seqlens_k.dim() != 1 or cu_seqlens_k.shape[0] != block_table.shape[0] + 1):
        raise ValueError(f"cu_seqlens_k.shape={tuple(cu_seqlens_k.shape)} is not allowed: (batch + 1,) = "
                         f"({block_table.shape[0] + 1},), block_table's batch plus one")
    if seqused_k is not None and (seqused_k.dtype != torch.int32 or tuple(seqused_k.shape) != (block_table.shape[0],)):
        raise ValueError(f"seqused_k ({seqused_k.dtype}, shape {tuple(seqused_k.shape)}) is not allowed: a torch.int32 "
                         f"tensor of shape ({block_table.shape[0]},), block_table's batch")
    check_out(out, q, q.dtype)
    _check_block_ids(k_cache, block_table, cu_seqlens_k, seqused_k)
    if not isinstance(fp8_wmma, bool):
        raise ValueError(f"fp8_wmma={fp8_wmma!r} is not allowed: True or False")
    args = (q, k_cache, v_cache, cu_seqlens_q.contiguous(), None if cu_seqlens_k is None else cu_seqlens_k.contiguous(),
            int(max_seqlen_q), block_table.contiguous(),
            paged_kv_scales(k_cache, k_descale, v_descale, block_table.shape[0]),
            bool(causal), int(window[0]), int(window[1]),
            float(scale), float(softcap or 0.0), fp8_wmma, s_aux, seqused_k)
    if direct(q, k_cache, v_cache, cu_seqlens_q, cu_seqlens_k, block_table, seqused_k, out):
        return _body(*args, out=out)
    return into(out, *torch.ops.wmma_gen.paged_varlen(*args))
