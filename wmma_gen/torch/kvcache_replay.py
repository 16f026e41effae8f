"""flash_attn_with_kvcache (kvcache.py) through the call-site cache (replay.py): a decode step's
repeat call skips the front end's argument checks, planning and packing.

    key, done = keyed(q, k_cache, v_cache, k, v, cache_seqlens, block_table, out, *opts)
    remember(key, token, table, out, o, lse, contiguous, capacity)

A call is keyed when it runs straight (runtime.eager_mode STRAIGHT), cache_seqlens is a tensor,
the cache is 16-bit (no descales), no sinks, and softmax_scale is None or positive (q reaches
the kernel as given). The key holds every tensor's layout and the options, so what the full
call checked once still holds; what is data is done per call, as the full call does it:
  - host-visible lengths (a CPU tensor in eager mode): 0 <= cache_seqlens and cache_seqlens +
    seqlen_new <= capacity (else the full call runs and raises its error), and a caller's CPU
    block table's ids (ops/paged_attention/inputs.check_block_ids); GPU values are never read;
  - the append of k / v into the cache (device-side torch indexing) and the new lengths;
  - the paged kernel (and the split-KV combine) with new addresses; split-KV partials per call.
A contiguous cache's block table (arange: ours, valid by construction) is kept with the entry.
"""
from __future__ import annotations

import torch
from torch import Tensor

from . import replay
from .runtime import STRAIGHT, eager_mode, stream_of

NAMES = ("Q", "K_cache", "V_cache", "block_table", "seq_lens")


def keyed(q, k_cache, v_cache, k, v, cache_seqlens, block_table, out, softmax_scale, *opts):
    """(key or None, (o, lse) of a replayed call or None)."""
    if not isinstance(cache_seqlens, Tensor) or not (
            softmax_scale is None or type(softmax_scale) in (float, int) and softmax_scale > 0):
        return None, None
    if eager_mode(q, k_cache, v_cache, k, v, cache_seqlens, block_table, out) != STRAIGHT:
        return None, None
    key, entry = replay.lookup("kvcache", (q, k_cache, v_cache, k, v, block_table, cache_seqlens, out),
                               softmax_scale, *opts)
    if entry is None or entry is replay.CHECKED:
        return key, None
    table, capacity = entry[4]
    lens, new = cache_seqlens, (0 if k is None else k.shape[1])
    visible = lens.is_cpu and lens.numel()
    if visible:
        lo, hi = torch.aminmax(lens)
        if int(lo) < 0 or int(hi) + new > capacity:
            return key, None                     # the full call raises, naming the value
    if block_table is not None:
        table = block_table.contiguous()
    if k is not None:
        pos = lens.long()[:, None] + torch.arange(new, device=k.device)[None, :]
        if block_table is None:              # (batch, seqlen_cache, ...): position p of sequence b
            rows = torch.arange(lens.shape[0], device=k.device)[:, None]
            k_cache[rows, pos] = k
            v_cache[rows, pos] = v
        else:
            bs = k_cache.shape[1]
            blk, off = table.long().gather(1, pos // bs), pos % bs
            k_cache[blk, off] = k
            v_cache[blk, off] = v
        lens = (lens + new).to(torch.int32)
    if visible and block_table is not None and table.is_cpu:
        from ..ops.paged_attention.inputs import check_block_ids
        check_block_ids(table.numpy(), lens.numpy(), k_cache.shape[1], k_cache.shape[0])
    tensors = (q, k_cache, v_cache, table, lens.contiguous()) + (() if out is None else (out,))
    made = replay.hit(key, tensors, q.device, stream_of(q), entry)
    if made is None:
        return key, None        # stale (forget_call_shapes): the full call (its append writes the same values)
    return key, ((out, made[0]) if out is not None else (made[0], made[1]))


def remember(key, token, table, out, o, lse, contiguous: bool, capacity: int, lse_seen: bool = True) -> None:
    """After the full call of `key`: what a hit re-runs (the paged kernel's token), with the
    contiguous cache's table kept (a caller's block table is passed per call); an lse no caller
    of the key sees (return_softmax_lse False, part of the key) is one buffer kept for every hit."""
    if key is None or token is None:
        return
    names = NAMES + (("O", "LSE") if out is not None else ("O", "LSE"))     # out: an input; else allocated
    outputs = (lse,) if out is not None else (o, lse)
    replay.record(key, token, names, *outputs, extra=(table if contiguous else None, capacity),
                  kept=() if lse_seen else (len(outputs) - 1,))
