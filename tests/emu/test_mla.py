"""MLA decode (ops/mla) on the emulator against float64 references written from the math.

The absorbed-weight test builds DeepSeek-V2's un-absorbed attention from random weights (per head
k = c W_UK^T ++ k_rope, v = c W_UV^T, softmax(q . k / sqrt(d_nope + d_rope)) v) and checks that the
kernel's latent output, multiplied by W_UV, matches it: q_nope W_UK absorbed into the query
(q = [q_nope W_UK, q_rope]) against the cached latent rows [c, k_rope]. Every other test checks
out and lse against ops/mla/reference.py (float64, from the math). Sizes are small (few heads,
short contexts) and cover Sq 1..16, partial tiles and blocks, ragged row tiles (heads * Sq not
a multiple of 16), empty sequences, split-KV and fp8 latent caches.
"""
import numpy as np
import pytest

from wmma_gen import hostdata, mla_decode
from wmma_gen.errors import ScheduleError
from wmma_gen.ops.mla.check import check_mla
from wmma_gen.ops.mla.reference import mla_decode_reference
from wmma_gen.ops.mla.schedule import MLASchedule

UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def _table(rng, lens, bs):
    need = [-(-int(L) // bs) for L in lens]
    ids = rng.permutation(sum(need) + 1)
    table = np.zeros((len(lens), max(max(need), 1)), np.int32)
    at = 0
    for b, n in enumerate(need):
        table[b, :n] = ids[at:at + n]
        at += n
    return table, sum(need) + 1


@pytest.mark.parametrize("arch,dtype,causal", [("gfx1100", "f16", False), ("gfx1201", "bf16", True)])
def test_absorbed_weights_match_the_unabsorbed_attention(arch, dtype, causal):
    rng = np.random.default_rng(7)
    B, Sq, H, dc, dr, dn, dv, bs = 2, 2, 3, 512, 64, 128, 128, 64
    lens = np.array([83, 21], np.int32)
    table, nb = _table(rng, lens, bs)
    # q_nope in {-1, 0, 1} and W_UK in {-1, 0, 1} / 16: the absorbed query q_nope W_UK is k / 16 with
    # |k| <= 128, exact in f16 and bf16, so the un-absorbed attention below sees the same scores
    w_uk = rng.integers(-1, 2, (H, dn, dc)) / 16.0          # k_nope[h] = c @ w_uk[h].T
    w_uv = rng.standard_normal((H, dv, dc)) / np.sqrt(dc)    # v[h] = c @ w_uv[h].T
    latent = hostdata.rounded(rng.standard_normal((nb, bs, 1, dc + dr)), dtype)
    q_nope = rng.integers(-1, 2, (B, Sq, H, dn)).astype(np.float64)
    q_rope = hostdata.rounded(rng.standard_normal((B, Sq, H, dr)), dtype)
    q = np.concatenate([np.einsum("bshn,hnc->bshc", q_nope, w_uk), q_rope], -1)
    assert np.array_equal(hostdata.rounded(q, dtype), q)
    scale = 1.0 / np.sqrt(dn + dr)                               # the un-absorbed head dim's scale
    o, lse = mla_decode(q, latent, table, lens, head_dim_v=dc, softmax_scale=scale, causal=causal, dtype=dtype,
                        arch=arch)
    o = hostdata.decode(o, "bf16") if o.dtype == np.uint16 else o.astype(np.float64)
    q64, c64 = q, latent           # hostdata.rounded: float64 values exactly representable in dtype
    for b in range(B):      # un-absorbed MHA per head, float64, with the query the kernel saw
        L = int(lens[b])
        rows = c64[table[b, np.arange(L) // bs], np.arange(L) % bs, 0]             # (L, dc + dr)
        qr = q64[b][..., dc:]
        for h in range(H):
            k = np.concatenate([rows[:, :dc] @ w_uk[h].T, rows[:, dc:]], -1)     # (L, dn + dr)
            v = rows[:, :dc] @ w_uv[h].T
            qh = np.concatenate([q_nope[b, :, h], qr[:, h]], -1)                     # (Sq, dn + dr)
            s = scale * qh @ k.T
            if causal:
                s = np.where(np.arange(L)[None] <= L - Sq + np.arange(Sq)[:, None], s, -np.inf)
            p = np.exp(s - s.max(-1, keepdims=True))
            want = (p / p.sum(-1, keepdims=True)) @ v
            got = o[b, :, h] @ w_uv[h].T
            tol = 4 * UNIT[dtype] * np.abs(rows[:, :dc]).max() * np.abs(w_uv[h]).sum(-1).max()
            assert np.abs(got - want).max() <= tol, (b, h, np.abs(got - want).max(), tol)
            lse_want = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
            np.testing.assert_allclose(lse[b, h], lse_want, rtol=0, atol=1e-4 * (1 + np.abs(lse_want).max()))


@pytest.mark.parametrize("arch,dtype,sq,heads,lens,causal,split", [
    ("gfx1100", "f16", 1, 16, [64, 47], False, 1),          # one full row tile; a full and a partial block
    ("gfx1100", "bf16", 16, 2, [90, 17], True, 2),          # Sq = 16: two row tiles, split-KV
    ("gfx1201", "f16", 3, 5, [150, 0, 1], True, 4),         # ragged row tile, empty / 1-key sequences, 4 splits
])
def test_matches_the_reference(arch, dtype, sq, heads, lens, causal, split):
    r = check_mla(dict(batch=len(lens), heads=heads, seq_q=sq, head_dim=576, head_dim_v=512, seq_lens=lens,
                       block_size=64), dtype=dtype, causal=causal, arch=arch, schedule=MLASchedule(split_kv=split))
    assert r.passed and r.source == "emulator", r


def test_causal_rows_before_the_cache_see_nothing():
    """Sq = 4 query tokens over L = 2 keys, causal: tokens 0 and 1 sit before the cache (out 0,
    lse -inf); FlashMLA's bottom-right alignment."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 4, 2, 128)).astype(np.float16)
    cache = rng.standard_normal((2, 16, 1, 128)).astype(np.float16)
    o, lse = mla_decode(q, cache, np.array([[1]], np.int32), np.array([2], np.int32), head_dim_v=64, causal=True,
                        arch="gfx1100", schedule={"waves": 2})
    ro, rl = mla_decode_reference(q, cache, [[1]], [2], head_dim_v=64, causal=True)
    assert np.isneginf(lse[0, :, :2]).all() and (o[0, :2] == 0).all()
    np.testing.assert_allclose(o.astype(np.float64), ro, atol=3 * UNIT["f16"] * np.abs(cache).max())
    np.testing.assert_allclose(lse[0, :, 2:], rl[0, :, 2:], atol=1e-5 * (1 + np.abs(rl[0, :, 2:]).max()))


@pytest.mark.parametrize("arch,dtype,kv", [("gfx1100", "bf16", "fp8e4m3"), ("gfx1201", "f16", "fp8e5m2")])
def test_fp8_latent_cache(arch, dtype, kv):
    r = check_mla(dict(batch=2, heads=4, seq_q=2, head_dim=576, head_dim_v=512, seq_lens=[70, 9], block_size=64),
                  dtype=dtype, kv_dtype=kv, kv_scale=0.3, causal=True, arch=arch)
    assert r.passed, r


@pytest.mark.parametrize("arch,dtype,kv", [("gfx1100", "f16", ""), ("gfx1100", "bf16", "fp8e5m2"),
                                           ("gfx1201", "bf16", "")])
def test_default_schedules_do_not_spill_and_fit_lds(arch, dtype, kv):
    from wmma_gen.ops import registry
    from wmma_gen.ops.compile_op import compile_op
    from wmma_gen.ops.mla.directive import MLADirective
    spec = registry.get("mla")
    d = MLADirective(dtype, kv_dtype=kv)
    md = compile_op(spec, d, spec.default_schedule(d, arch), None, arch).kernel("mla").metadata
    assert md.vgpr_spill_count == 0 and md.sgpr_spill_count == 0 and md.lds_bytes <= 65536, md


@pytest.mark.parametrize("change,arg", [
    (dict(kv_cache=np.zeros((3, 64, 2, 576), np.float16)), "kv_cache"),
    (dict(block_table=np.array([[0, 9]], np.int32), cache_seqlens=np.array([100], np.int32)), "block_table[0, 1]"),
    (dict(cache_seqlens=np.array([200], np.int32)), "cache_seqlens"),
    (dict(head_dim_v=640), "head_dim_v"),
    (dict(softmax_scale=-0.1), "softmax_scale"),
    (dict(kv_scale=2.0), "kv_scale"),
])
def test_bad_input_names_the_argument(change, arg):
    call = dict(q=np.zeros((1, 1, 2, 576), np.float16), kv_cache=np.zeros((3, 64, 1, 576), np.float16),
                block_table=np.array([[0, 1]], np.int32), cache_seqlens=np.array([70], np.int32))
    call.update(change)
    with pytest.raises(ScheduleError, match=arg.replace("[", r"\[").replace("]", r"\]")):
        mla_decode(**call, arch="gfx1100")
