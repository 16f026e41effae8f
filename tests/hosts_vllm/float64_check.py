"""The checker the vLLM lane installs around WmmaGenAttentionImpl.forward: after each call it
recomputes attention in float64 from what vLLM passed -- the query, the layer's KV cache (after
vLLM's cache write), query_start_loc, seq_lens, block_table, the layer's scale, window and
softcap and sinks -- written from the math, and records the largest |O - O_ref| / max |V| per call."""
from __future__ import annotations

import torch

FP8 = {"fp8": torch.float8_e4m3fn, "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}


def reference(impl, layer, query, kv_cache, m) -> tuple[torch.Tensor, float]:
    """(O_ref (tokens, heads, D) float64, max |V| read)."""
    d = impl.head_size
    kv = kv_cache.permute(0, 2, 1, 3)                       # (blocks, block_size, kv_heads, 2D)
    k_all, v_all = kv[..., :d], kv[..., d:]
    ks = vs = 1.0
    if impl.kv_cache_dtype in FP8:
        k_all, v_all = k_all.view(FP8[impl.kv_cache_dtype]), v_all.view(FP8[impl.kv_cache_dtype])
        ks, vs = float(layer._k_scale), float(layer._v_scale)
    bs = kv.shape[1]
    cu, lens, table = m.query_start_loc.tolist(), m.seq_lens.tolist(), m.block_table
    left = -1 if impl.sliding_window is None else impl.sliding_window - 1
    outs, vmax = [], 0.0
    for b in range(len(lens)):
        q = query[cu[b]:cu[b + 1]].double()
        n_q, n_k = q.shape[0], lens[b]
        pos = torch.arange(n_k)
        blk = table[b].long()[pos // bs]
        k = k_all[blk, pos % bs].double() * ks                # (n_k, kv_heads, D)
        v = v_all[blk, pos % bs].double() * vs
        vmax = max(vmax, v.abs().max().item() if n_k else 0.0)
        rep = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        s = torch.einsum("qhd,khd->hqk", q, k) * impl.scale
        if impl.softcap:
            s = impl.softcap * torch.tanh(s / impl.softcap)
        i = torch.arange(n_q)[:, None] + (n_k - n_q)           # absolute position of each query
        j = torch.arange(n_k)[None, :]
        vis = j <= i if m.causal else torch.ones(n_q, n_k, dtype=torch.bool)
        if left >= 0:
            vis = vis & (j >= i - left)
        s = torch.where(vis, s, float("-inf"))
        if impl.sinks is not None:             # a sink logit per head joins each row's denominator only
            sink = impl.sinks.double()[:, None, None].expand(-1, n_q, 1)
            p = torch.softmax(torch.cat([s, sink], -1), -1)[..., :-1]
        else:
            p = torch.softmax(s, -1)
        outs.append(torch.einsum("hqk,khd->qhd", p, v))
    return torch.cat(outs), vmax


def install(records: list) -> None:
    """Wrap WmmaGenAttentionImpl.forward in this process; each call appends
    (tokens, max_query_len, max_seq_len, error relative to max |V|) to records."""
    from wmma_gen.integrations.vllm.impl import WmmaGenAttentionImpl
    inner = WmmaGenAttentionImpl.forward

    def checked(self, layer, query, key, value, kv_cache, attn_metadata, output, *args, **kwargs):
        result = inner(self, layer, query, key, value, kv_cache, attn_metadata, output, *args, **kwargs)
        if attn_metadata is not None:
            n = attn_metadata.num_actual_tokens
            ref, vmax = reference(self, layer, query[:n], kv_cache, attn_metadata)
            got = output[:n].reshape(ref.shape).double()
            records.append((n, attn_metadata.max_query_len, attn_metadata.max_seq_len,
                            (got - ref).abs().max().item() / max(vmax, 1e-6)))
        return result

    WmmaGenAttentionImpl.forward = checked
