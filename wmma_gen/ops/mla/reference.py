"""Float64 reference of MLA decode, written from the math (directive.py): gather each
sequence's latent rows through the block table, S = scale * q . c, softmax over the visible
keys, O = P c[:, :head_dim_v], LSE = log sum exp S (natural log; -inf and O = 0 for rows that
see no key)."""
from __future__ import annotations

import numpy as np


def mla_decode_reference(q, kv_cache, block_table, cache_seqlens, *, head_dim_v: int = 512, scale=None,
                         causal: bool = False, kv_scale: float = 1.0):
    """q (B, Sq, H, D), kv_cache (num_blocks, block_size, 1, D) as float values (fp8 caches:
    decoded, times kv_scale here) -> (out (B, Sq, H, head_dim_v), lse (B, H, Sq)) float64."""
    q = np.asarray(q, np.float64)
    cache = np.asarray(kv_cache, np.float64)[:, :, 0, :] * float(kv_scale)
    B, Sq, H, D = q.shape
    bs = cache.shape[1]
    scale = 1.0 / np.sqrt(D) if scale is None else float(scale)
    out = np.zeros((B, Sq, H, head_dim_v))
    lse = np.full((B, H, Sq), -np.inf)
    for b in range(B):
        L = int(cache_seqlens[b])
        j = np.arange(L)
        c = cache[np.asarray(block_table)[b, j // bs], j % bs]                  # (L, D)
        s = scale * np.einsum("ihd,jd->ihj", q[b], c)                          # (Sq, H, L)
        limit = (L - Sq + np.arange(Sq) + 1) if causal else np.full(Sq, L)
        s = np.where(j[None, None, :] < limit[:, None, None], s, -np.inf)
        m = s.max(axis=-1, keepdims=True, initial=-np.inf)
        seen = np.isfinite(m)
        p = np.where(seen, np.exp(s - np.where(seen, m, 0.0)), 0.0)
        tot = p.sum(-1, keepdims=True)
        out[b] = np.einsum("ihj,jv->ihv", np.where(seen, p / np.where(seen, tot, 1.0), 0.0), c[:, :head_dim_v])
        lse[b] = np.where(seen, m + np.log(np.where(seen, tot, 1.0)), -np.inf)[..., 0].T
    return out, lse


def mla_decode_flops(lens, seq_q: int, heads: int, head_dim: int, head_dim_v: int) -> int:
    """2 (D + Dv) per (query row, key): the two products (the causal triangle among the Sq new
    tokens is ignored: at most Sq - 1 keys per row)."""
    return int(sum(2 * (head_dim + head_dim_v) * seq_q * heads * int(L) for L in lens))
