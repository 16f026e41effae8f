"""fp8_wmma paged attention (ops/paged_attention/fp8_tiles.py) on the gfx1201 emulator against
the float64 reference computed from the dequantised fp8 inputs: the E4M3 / E5M2 caches' values
and Q as the kernel quantises it (reference.quantized_queries: per row, scale amax / 448).

Tolerances (absolute, per element; V_eff = v_scale * V):
  O    With Q's quantisation in the reference, what is left is P's: each weight is E4M3 of
       P * 2**8, relative error <= 2**-4 (3 mantissa bits, round to nearest) for P >= 2**-14
       and absolute <= 2**-18 below, while l sums the unquantised P (>= 1 once a key is seen).
       So |O - O_ref| <= sum_j |P~_j - P_j| |V_j| / l <= (2**-4 + n * 2**-18) max|V_eff| for a
       row of n keys, plus the output rounding (u of the query dtype) and f32 sums (3u in all).
  LSE  from the scores of the quantised Q, in f32: 1e-5 * (1 + |LSE| + softcap) as the 16-bit
       path (P's quantisation does not enter l) -- a tight check that the kernel quantised Q
       exactly as the reference does.
  not tiny: against the reference of the *unquantised* Q (what the dequantising path computes)
       the error must exceed that path's own tolerance 3u * max|V_eff|: the products really
       ran on fp8 Q (the compile test checks the loop's v_wmma_*_fp8 forms and P's
       v_cvt_pk_fp8_f32).
Rows that see no key: O = 0 and LSE = -inf exactly.
"""
import numpy as np
import pytest

from wmma_gen import hostdata
from wmma_gen.ops.paged_attention.api import paged_attention
from wmma_gen.ops.paged_attention.reference import paged_attention_reference, quantized_queries
from wmma_gen.ops.paged_attention.schedule import PagedSchedule as S

from test_paged_attention import UNIT, block_table

STORE = {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}


def _cache(rng, shape, kv):
    x = hostdata.encode(rng.standard_normal(shape) * 4, STORE[kv])
    return x, hostdata.decode(x, STORE[kv])


def _check(o, lse, q, k64, v64, table, seq_lens, dtype, *, vmax, n_keys, softcap=None, **kw):
    ro, rl = paged_attention_reference(quantized_queries(q), k64, v64, table, seq_lens, softcap=softcap, **kw)
    dead = ~np.isfinite(rl)
    assert (lse[dead] == -np.inf).all(), "rows that see no key must have LSE = -inf"
    o_rows = np.moveaxis(o, -2, 0) if "cu_seqlens_q" in kw else o.transpose(0, 2, 1, 3)
    assert (o_rows[dead] == 0).all(), "rows that see no key must have O = 0"
    err = np.abs(o.astype(np.float64) - ro).max()
    tol = (2.0 ** -4 + n_keys * 2.0 ** -18 + 3 * UNIT[dtype]) * vmax
    assert err <= tol, f"O error {err} > {tol}"
    lerr = np.abs(lse[~dead] - rl[~dead])
    assert (lerr <= 1e-5 * (1 + np.abs(rl[~dead]) + (softcap or 0))).all(), f"LSE error {lerr.max()}"
    plain, _ = paged_attention_reference(np.asarray(q, np.float64), k64, v64, table, seq_lens, softcap=softcap, **kw)
    assert np.abs(o.astype(np.float64) - plain).max() > 3 * UNIT[dtype] * vmax, "no sign of fp8 Q"
    return err / vmax


def run_decode(*, kv, dtype="f16", head_dim=64, lens=(37,), seq_q=1, heads=4, kv_heads=1, causal=True,
               window=None, softcap=None, k_scale=None, v_scale=None, shared_prefix=0, schedule=None, seed=0,
               block_size=16):
    rng = np.random.default_rng(seed)
    lens = list(lens)
    bs = block_size
    nb = sum(-(-L // bs) for L in lens) + 3
    table = block_table(rng, lens, bs, nb, shared_prefix)
    (k, k64), (v, v64) = (_cache(rng, (nb, bs, kv_heads, head_dim), kv) for _ in range(2))
    q = hostdata.rounded(rng.standard_normal((len(lens), seq_q, heads, head_dim)), dtype)
    seq_lens = np.array(lens, np.int32)
    o, lse = paged_attention(q, k, v, table, seq_lens, causal=causal, window=window, softcap=softcap, kv_dtype=kv,
                             k_scale=k_scale, v_scale=v_scale, return_lse=True, dtype=dtype, arch="gfx1201",
                             device="emu", schedule=schedule, fp8_wmma=True)
    ks = np.broadcast_to(np.asarray(1.0 if k_scale is None else k_scale, np.float64), (kv_heads,))
    vs = np.broadcast_to(np.asarray(1.0 if v_scale is None else v_scale, np.float64), (kv_heads,))
    vmax = np.abs(v64).max() * np.abs(vs).max()
    return _check(o, lse, q, k64, v64, table, seq_lens, dtype, vmax=vmax, n_keys=max(lens), softcap=softcap,
                  causal=causal, window=window, k_scale=ks, v_scale=vs)


def test_e4m3_gqa_random_tables_empty_and_length1_per_head_scales():
    """Shuffled non-contiguous blocks with one shared prefix block, L = 0 and L = 1, GQA 2,
    Sq 3 (causal rows before the L = 1 cache see nothing), per-head K and V scales, two splits."""
    run_decode(kv="fp8e4m3", lens=(0, 1, 50, 33), heads=4, kv_heads=2, seq_q=3, shared_prefix=1,
               k_scale=[0.5, 0.125], v_scale=[0.25, 2.0], schedule=S(split_kv=2), seed=3)


def test_e5m2_bf16_hd80_mqa_softcap():
    """E5M2 cache (the bf8_fp8 forms), bf16 queries, head_dim 80 (5 tiles: no power-of-two tile
    divides it), 3 query heads on one kv head, lengths no multiple of any tile, softcap (the
    row's Q scale goes inside tanh), per-tensor scales."""
    run_decode(kv="fp8e5m2", dtype="bf16", head_dim=80, lens=(23, 9, 41), heads=3, kv_heads=1, softcap=20.0,
               k_scale=0.5, v_scale=0.125, seed=4)


def test_e4m3_sq16_not_causal_hd48_two_waves_window():
    """Sq = 16 tokens x 2 heads = 32 packed rows (two waves), head_dim 48, a left window."""
    run_decode(kv="fp8e4m3", head_dim=48, lens=(40, 70), heads=2, kv_heads=1, seq_q=16, causal=False,
               window=(30, 0), schedule=S(waves=2), seed=5)


@pytest.mark.parametrize("head_dim, block_size, s", [
    (16, 16, S(load_bits=64)),                         # V copy groups of 1 key: byte stores
    (16, 16, S(load_bits=32)),                         # groups of 2: one v_perm_b32, 16-bit stores
    (32, 32, S(block_n=32, load_bits=32)),             # groups of 4: three v_perm_b32, 32-bit stores
    (64, 64, S(block_n=64, frags_q=2, prefetch=False, split_kv=4)),
    (192, 16, S(waves=4, split_kv=2)),
    (256, 16, S(waves=2, load_bits=64)),
])
def test_schedule_variants(head_dim, block_size, s):
    """The byte-transposed V copy in each group height the copy plans pick (fp8_tiles.store_transposed),
    key tiles of 32 and 64, two query blocks per wave, no prefetch, four waves, head dims to 256."""
    run_decode(kv="fp8e4m3", head_dim=head_dim, block_size=block_size, lens=(45, 1, 0, 17), heads=8, kv_heads=2,
               seq_q=2, schedule=s, seed=21)


def test_e5m2_chunked_prefill():
    """Packed query chunks of 0, 1, 37 and 5 tokens against cached prefixes, E5M2 cache."""
    rng = np.random.default_rng(7)
    chunks, lens = [0, 1, 37, 5], [9, 1, 60, 5]
    bs, H, Hkv, D = 16, 4, 2, 64
    table = block_table(rng, lens, bs, 12)
    cu = np.concatenate([[0], np.cumsum(chunks)]).astype(np.int32)
    q = hostdata.rounded(rng.standard_normal((int(cu[-1]), H, D)), "f16")
    (k, k64), (v, v64) = (_cache(rng, (12, bs, Hkv, D), "fp8e5m2") for _ in range(2))
    seq_lens = np.array(lens, np.int32)
    o, lse = paged_attention(q, k, v, table, seq_lens, cu_seqlens_q=cu, kv_dtype="fp8e5m2", return_lse=True,
                             dtype="f16", arch="gfx1201", device="emu", schedule=S(waves=2), fp8_wmma=True)
    _check(o, lse, q, k64, v64, table, seq_lens, "f16", vmax=np.abs(v64).max(), n_keys=max(lens),
           cu_seqlens_q=cu, causal=True)


def test_one_key_tile_matches_the_p_quantisation_exactly():
    """Sequences of <= 16 keys (one key tile, one split, no mask): the running max is the final
    one when P is quantised, so P~ = E4M3(P * 2**8) / 2**8 can be simulated exactly in float64;
    the kernel then matches within the output rounding (3u, f16) -- a sharp check of the P
    path, which the 2**-4 bound above only brackets. L = 1: P = 1, exact."""
    rng = np.random.default_rng(11)
    lens, bs, H, D = [13, 16, 1], 16, 4, 32
    table = block_table(rng, lens, bs, 6)
    (k, k64), (v, v64) = (_cache(rng, (6, bs, 2, D), "fp8e4m3") for _ in range(2))
    q = hostdata.rounded(rng.standard_normal((3, 2, H, D)), "f16")
    o = paged_attention(q, k, v, table, np.array(lens, np.int32), causal=False, kv_dtype="fp8e4m3",
                        k_scale=[0.25, 0.5], v_scale=0.5, dtype="f16", arch="gfx1201", device="emu", fp8_wmma=True)
    qq, scale = quantized_queries(q), 1.0 / np.sqrt(D)
    want = np.zeros(q.shape)
    for b, L in enumerate(lens):
        kk = k64[table[b, 0], :L]                                    # (L, kv_heads, D): one block
        vv = v64[table[b, 0], :L]
        for h in range(H):
            g = h // 2
            s = scale * [0.25, 0.5][g] * qq[b, :, h] @ kk[:, g].T      # (Sq, L)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            p8 = hostdata.decode(hostdata.encode(p * 256.0, "fp8"), "fp8") / 256.0
            want[b, :, h] = 0.5 * (p8 @ vv[:, g]) / p.sum(axis=1, keepdims=True)
    vmax = 0.5 * np.abs(v64).max()
    err = np.abs(o.astype(np.float64) - want).max()
    assert err <= 3 * UNIT["f16"] * vmax, f"O error {err} > {3 * UNIT['f16'] * vmax}"


def test_correctness_gate_knows_fp8_wmma():
    """check.check_paged (the sweep's gate) checks an fp8_wmma kernel against the quantised-Q
    reference with the P-rounding tolerance, and passes it."""
    from wmma_gen.ops.paged_attention.check import check_paged
    r = check_paged(dict(batch=3, heads=4, kv_heads=2, seq_q=2, head_dim=32), kv_dtype="fp8e5m2", arch="gfx1201",
                    device="emu", fp8_wmma=True)
    assert r.passed and r.max_abs > 0, r


def test_refused_on_gfx11_naming_the_choice():
    q = np.zeros((1, 1, 2, 64), np.float16)
    k = np.zeros((2, 16, 1, 64), np.uint8)
    with pytest.raises(ValueError, match="fp8_wmma"):
        paged_attention(q, k, k, np.zeros((1, 1), np.int32), np.array([3], np.int32), kv_dtype="fp8e4m3",
                        arch="gfx1100", device="emu", fp8_wmma=True)
