"""flash-attn's vLLM-fork keywords on wmma_gen.torch: `seqused_k=` (key counts of a paged varlen
call, given instead of cu_seqlens_k) and `out=` (O written into the caller's tensor, no copy) on
flash_attn_varlen_func and flash_attn_with_kvcache, on CPU tensors (the emulator runs the kernels)
against float64 attention written from the math here: keys gathered through the block table,
bottom-right causal / window masks (torch_ref.visible), softcap cap * tanh(s / cap)."""
import pytest
import torch

from torch_ref import EPS, visible
from wmma_gen.torch import flash_attn_varlen_func, flash_attn_with_kvcache


def _ref_seq(q, k, v, scale, causal, window, softcap):
    """q (Sq, H, D), k/v (Sk, Hkv, D) float64 -> (Sq, H, D); rows with no visible key -> 0."""
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = torch.einsum("qhd,khd->hqk", q, k) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    vis = visible(q.shape[0], k.shape[0], causal, window)
    s = torch.where(vis, s, float("-inf"))
    p = torch.nan_to_num(torch.softmax(s, -1), nan=0.0)
    return torch.einsum("hqk,khd->qhd", p, v)


def _paged_ref(q, kc, vc, cu_q, lens, table, **kw):
    bs, outs = kc.shape[1], []
    for b in range(len(lens)):
        pos = torch.arange(int(lens[b]))
        blk = table[b].long()[pos // bs]
        k, v = kc[blk, pos % bs].double(), vc[blk, pos % bs].double()
        outs.append(_ref_seq(q[cu_q[b]:cu_q[b + 1]].double(), k, v, **kw))
    return torch.cat(outs)


def _cache(nb=9, bs=16, hkv=2, d=48, dtype=torch.float16):
    kc, vc = (torch.randn(nb, bs, hkv, d).to(dtype) for _ in range(2))
    table = torch.randperm(nb)[:6].to(torch.int32).reshape(2, 3)   # 2 sequences, 3 blocks each
    return kc, vc, table


def _close(got, ref, v):
    err = (got.double() - ref).abs().max().item()
    assert err <= 4 * EPS[got.dtype] * v.abs().max().item(), err


@pytest.mark.parametrize("window,softcap", [((-1, -1), 0.0), ((5, 0), 30.0)])
def test_paged_varlen_seqused_k_into_out(window, softcap):
    kc, vc, table = _cache()
    lens = torch.tensor([7, 37], dtype=torch.int32)               # neither a multiple of the block size
    cu_q = torch.tensor([0, 1, 20], dtype=torch.int32)            # a decode row and a 19-token chunk
    q = torch.randn(20, 4, 48).half()
    out = torch.full_like(q, float("nan"))
    got = flash_attn_varlen_func(q, kc, vc, cu_q, None, 19, 37, causal=True, window_size=window, softcap=softcap,
                                 block_table=table, seqused_k=lens, out=out)
    assert got is out
    ref = _paged_ref(q, kc, vc, cu_q.tolist(), lens, table, scale=48 ** -0.5, causal=True, window=window,
                     softcap=softcap)
    _close(out, ref, vc)


def test_seqused_k_equals_cu_seqlens_k():
    kc, vc, table = _cache(hkv=1, d=32)
    q = torch.randn(3, 2, 32).half()
    cu_q = torch.tensor([0, 1, 3], dtype=torch.int32)
    lens = torch.tensor([16, 29], dtype=torch.int32)
    a = flash_attn_varlen_func(q, kc, vc, cu_q, None, 2, 29, causal=True, block_table=table, seqused_k=lens)
    b = flash_attn_varlen_func(q, kc, vc, cu_q, torch.tensor([0, 16, 45], dtype=torch.int32), 2, 29, causal=True,
                               block_table=table)
    assert torch.equal(a, b)


def test_dense_varlen_into_out():
    q, k, v = torch.randn(13, 4, 32).half(), torch.randn(13, 2, 32).half(), torch.randn(13, 2, 32).half()
    cu = torch.tensor([0, 6, 13], dtype=torch.int32)
    out = torch.full_like(q, float("nan"))
    got = flash_attn_varlen_func(q, k, v, cu, cu, 7, 7, causal=True, out=out)
    assert got is out
    ref = torch.cat([_ref_seq(q[a:b].double(), k[a:b].double(), v[a:b].double(), 32 ** -0.5, True, (-1, -1), 0.0)
                     for a, b in ((0, 6), (6, 13))])
    _close(out, ref, v)


@pytest.mark.parametrize("sq", [1, 18])     # decode; a chunk above 16 tokens (chunked prefill inside)
def test_with_kvcache_into_out(sq):
    kc, vc, table = _cache()
    lens = torch.tensor([20, 33], dtype=torch.int32)
    q = torch.randn(2, sq, 4, 48).half()
    out = torch.full_like(q, float("nan"))
    got = flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=table, causal=True, out=out)
    assert got is out
    cu = [0, sq, 2 * sq]
    ref = _paged_ref(q.reshape(2 * sq, 4, 48), kc, vc, cu, lens, table, scale=48 ** -0.5, causal=True,
                     window=(-1, -1), softcap=0.0)
    _close(out.reshape(2 * sq, 4, 48), ref, vc)


def test_refusals_name_the_argument():
    kc, vc, table = _cache()
    q = torch.randn(2, 4, 48).half()
    cu = torch.tensor([0, 1, 2], dtype=torch.int32)
    lens = torch.tensor([3, 4], dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens_k and seqused_k"):
        flash_attn_varlen_func(q, kc, vc, cu, cu, 1, 4, block_table=table, seqused_k=lens)
    with pytest.raises(ValueError, match="seqused_k"):
        flash_attn_varlen_func(q, kc, vc, cu, None, 1, 4, block_table=table, seqused_k=lens.long())
    with pytest.raises(NotImplementedError, match="seqused_k without block_table"):
        flash_attn_varlen_func(q, q, q, cu, None, 1, 1, seqused_k=lens)
    with pytest.raises(ValueError, match="out"):
        flash_attn_varlen_func(q, kc, vc, cu, None, 1, 4, block_table=table, seqused_k=lens, out=q[:1])
    with pytest.raises(ValueError, match="out"):
        flash_attn_with_kvcache(q[:, None], kc, vc, cache_seqlens=lens, block_table=table, out=q.float()[:, None])
