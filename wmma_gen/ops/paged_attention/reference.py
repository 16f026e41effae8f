"""Float64 reference of paged decode attention (the spec the kernel is checked against).

Gathers each sequence's keys through its block table and applies the dense forward's mask
convention (attention/reference.visible_mask: Sq query tokens aligned bottom-right against
L = seq_lens[b] keys), then an optional softcap, softmax and the V product:

    s = scale * k_scale[g] * q . k ;  s = softcap * tanh(s / softcap) (softcap > 0)
    o = sum_j softmax(s)_j v_scale[g] v_j ;   lse = log sum_j exp(s_j)   (natural log)

Rows that see no key: o = 0, lse = -inf. Inputs are float arrays already holding the values
the kernel sees (fp8 caches: their decoded values, fp8.decode).
"""
from __future__ import annotations

import numpy as np

from ...attention_common.reference import visible_mask


def gather_sequence(cache: np.ndarray, table_row: np.ndarray, length: int) -> np.ndarray:
    """(length, kv_heads, D): the sequence's first `length` cache rows in key order."""
    bs = cache.shape[1]
    if length == 0:
        return np.zeros((0,) + cache.shape[2:], np.float64)
    blocks = table_row[: -(-length // bs)]
    return cache[blocks].reshape((-1,) + cache.shape[2:])[:length].astype(np.float64)


def paged_attention_reference(q, k_cache, v_cache, block_table, seq_lens, *, causal=True, scale=None, window=None,
                              softcap=None, k_scale=None, v_scale=None, cu_seqlens_q=None):
    """(o (B, Sq, H, D) float64, lse (B, H, Sq) float64); k_scale / v_scale per kv head
    (arrays of kv_heads) or scalars, default 1. With cu_seqlens_q (chunked prefill) q is
    packed (total_q, H, D) and the results are o (total_q, H, D), lse (H, total_q)."""
    q = np.asarray(q, np.float64)
    if cu_seqlens_q is not None:
        cu = np.asarray(cu_seqlens_q)
        o, lse = np.zeros(q.shape), np.full((q.shape[1], q.shape[0]), -np.inf)
        for b in range(len(cu) - 1):
            a, e = int(cu[b]), int(cu[b + 1])
            if e > a:
                ob, lb = paged_attention_reference(q[None, a:e], k_cache, v_cache, block_table[b:b + 1],
                                                   seq_lens[b:b + 1], causal=causal, scale=scale, window=window,
                                                   softcap=softcap, k_scale=k_scale, v_scale=v_scale)
                o[a:e], lse[:, a:e] = ob[0], lb[0]
        return o, lse
    B, Sq, H, D = q.shape
    Hkv = k_cache.shape[2]
    group = H // Hkv
    scale = 1.0 / np.sqrt(D) if scale is None else float(scale)
    ks = np.broadcast_to(np.asarray(1.0 if k_scale is None else k_scale, np.float64), (Hkv,))
    vs = np.broadcast_to(np.asarray(1.0 if v_scale is None else v_scale, np.float64), (Hkv,))
    left, right = window if window is not None else (-1, -1)
    o = np.zeros((B, Sq, H, D))
    lse = np.full((B, H, Sq), -np.inf)
    for b in range(B):
        L = int(seq_lens[b])
        k = gather_sequence(k_cache, block_table[b], L)
        v = gather_sequence(v_cache, block_table[b], L)
        vis = visible_mask(Sq, L, causal, left, right)
        for h in range(H):
            g = h // group
            s = scale * ks[g] * (q[b, :, h] @ k[:, g].T)
            if softcap:
                s = softcap * np.tanh(s / softcap)
            s = np.where(vis, s, -np.inf)
            top = s.max(axis=1, initial=-np.inf)
            seen = np.isfinite(top)
            p = np.exp(s - np.where(seen, top, 0.0)[:, None])
            tot = p.sum(axis=1)
            safe = np.where(seen, tot, 1.0)
            o[b, :, h] = np.where(seen[:, None], (p @ (vs[g] * v[:, g])) / safe[:, None], 0.0)
            lse[b, h] = np.where(seen, top + np.log(safe), -np.inf)
    return o, lse


def quantized_queries(q) -> np.ndarray:
    """fp8_wmma's Q as the kernel multiplies it (fp8_tiles.py): numerics.e4m3_rows."""
    from ...numerics import e4m3_rows
    return e4m3_rows(q)


def paged_attention_flops(seq_lens, seq_q: int, heads: int, head_dim: int, causal: bool, window=None) -> int:
    """4 * D per visible (query, key) pair (the attention ladders' convention)."""
    left, right = window if window is not None else (-1, -1)
    pairs = sum(int(visible_mask(seq_q, int(L), causal, left, right).sum()) for L in seq_lens)
    return 4 * head_dim * heads * pairs
