"""Chunked prefill through the paged cache (varlen query chunks against cached prefixes) on
the emulator vs the float64 reference: packed q (total_q, H, D) with cu_seqlens_q, chunks of
0, 1, 5 and 37 tokens (37 > 16: several token-major row tiles, causal inside the chunk)."""
import numpy as np
import pytest

from wmma_gen import hostdata
from wmma_gen.ops.paged_attention.api import paged_attention
from wmma_gen.ops.paged_attention.reference import paged_attention_reference
from wmma_gen.ops.paged_attention.schedule import PagedSchedule

from test_paged_attention import UNIT, block_table


@pytest.mark.parametrize("arch, dtype, split", [("gfx1100", "f16", 1), ("gfx1201", "bf16", 2)])
def test_chunked_prefill(arch, dtype, split):
    rng = np.random.default_rng(7)
    chunks, lens = [0, 1, 37, 5], [9, 1, 60, 5]          # L includes the chunk: cached prefixes 9, 0, 23, 0
    bs, H, Hkv, D = 16, 4, 2, 64
    table = block_table(rng, lens, bs, 12)
    cu = np.concatenate([[0], np.cumsum(chunks)]).astype(np.int32)
    q = hostdata.rounded(rng.standard_normal((int(cu[-1]), H, D)), dtype)
    k = hostdata.rounded(rng.standard_normal((12, bs, Hkv, D)), dtype)
    v = hostdata.rounded(rng.standard_normal((12, bs, Hkv, D)), dtype)
    seq_lens = np.array(lens, np.int32)
    o, lse = paged_attention(q, k, v, table, seq_lens, cu_seqlens_q=cu, causal=True, return_lse=True, dtype=dtype,
                             arch=arch, device="emu", schedule=PagedSchedule(waves=2, split_kv=split))
    ro, rl = paged_attention_reference(q, k, v, table, seq_lens, cu_seqlens_q=cu, causal=True)
    assert o.shape == q.shape and lse.shape == (H, q.shape[0])
    assert np.abs(o - ro).max() <= 3 * UNIT[dtype] * np.abs(v).max()
    assert np.allclose(lse, rl, rtol=1e-5, atol=1e-5)


def test_bad_offsets_named():
    q = np.zeros((5, 2, 64), np.float16)
    k = np.zeros((4, 16, 1, 64), np.float16)
    table = np.zeros((2, 2), np.int32)
    with pytest.raises(ValueError, match=r"cu_seqlens_q.*non-decreasing int32 offsets from 0 to total_q=5"):
        paged_attention(q, k, k, table, np.array([3, 3], np.int32), cu_seqlens_q=np.array([0, 4, 3], np.int32),
                        arch="gfx1100", device="emu")


def test_device_call_chunked_prefill():
    """paged_attention_into with CPU operands (the emulator): o / lse written in place."""
    from wmma_gen.ops.paged_attention.device import paged_attention_into
    rng = np.random.default_rng(8)
    chunks, lens = [3, 20], [40, 20]
    table = block_table(rng, lens, 16, 8)
    cu = np.array([0, 3, 23], np.int32)
    q = rng.standard_normal((23, 2, 32)).astype(np.float16)
    k, v = (rng.standard_normal((8, 16, 1, 32)).astype(np.float16) for _ in range(2))
    o, lse = np.zeros_like(q), np.zeros((2, 23), np.float32)
    paged_attention_into(q, k, v, table, np.array(lens, np.int32), o, lse, cu_seqlens_q=cu, arch="gfx1201")
    ro, rl = paged_attention_reference(q, k, v, table, np.array(lens, np.int32), cu_seqlens_q=cu)
    assert np.abs(o - ro).max() <= 3 * UNIT["f16"] * np.abs(v).max()
    assert np.allclose(lse, rl, rtol=1e-5, atol=1e-5)
