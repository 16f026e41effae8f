"""Paged decode with fp8 caches holding every byte value (the widening of kernels/fp8_widen.py inside the
real kernel, gfx1100: no fp8 WMMA, the cache is widened to f16), on the emulator against float64 attention
over caches decoded by test_fp8_widen.ofp8_decode (the OCP spec's fields, not wmma_gen's decoders).

Tolerance as tests/emu/test_paged_attention.py: |O - O_ref| <= 3u * max|v_scale V| (u = 2**-11: P rounded to
f16 before the second WMMA, O once at the output); the widened K and V are exact, so no fp8 term enters.
A NaN byte (E4M3 S.1111.111) in a visible V row makes that head-dim column NaN in every row of its kv head
(0 * NaN = NaN in P V), as in the reference, and leaves every other output as it was."""
from __future__ import annotations

import numpy as np
import pytest
from test_fp8_widen import ofp8_decode
from test_paged_attention import block_table

from wmma_gen.ops.paged_attention.api import paged_attention
from wmma_gen.ops.paged_attention.reference import paged_attention_reference

U = 2.0 ** -11


def _case(kind: str, nan_at=None, seed: int = 0):
    rng = np.random.default_rng(seed)
    lens, bs, hkv, d = [37, 21], 16, 2, 64
    nb = sum(-(-L // bs) for L in lens) + 1
    table = block_table(rng, lens, bs, nb)
    finite = [b for b in range(256) if np.isfinite(ofp8_decode(b, kind))]
    shape = (nb, bs, hkv, d)
    k, v = (np.resize(rng.permutation(finite), shape).astype(np.uint8) for _ in range(2))   # every byte, several times
    if nan_at is not None:
        v[nan_at] = 0x7F
    dec = np.vectorize(lambda b: ofp8_decode(int(b), kind))
    k64, v64 = dec(k), dec(v)
    q = rng.standard_normal((len(lens), 1, 4, d)).astype(np.float16).astype(np.float64)
    ks, vs = [2.0 ** -6, 2.0 ** -5], [2.0 ** -7, 0.75 * 2.0 ** -6]
    o, _ = paged_attention(q, k, v, table, np.array(lens, np.int32), causal=True, kv_dtype=kind, k_scale=ks,
                           v_scale=vs, return_lse=True, dtype="f16", arch="gfx1100", device="emu")
    ro, _ = paged_attention_reference(q, k64, v64, table, np.array(lens, np.int32), causal=True, k_scale=ks,
                                      v_scale=vs)
    vmax = np.nanmax(np.abs(v64)) * max(vs)
    return o.astype(np.float64), ro, vmax, table


@pytest.mark.parametrize("kind", ["fp8e4m3", "fp8e5m2"])
def test_every_finite_byte_in_the_cache(kind):
    o, ro, vmax, _ = _case(kind)
    assert np.isfinite(o).all()
    err = np.abs(o - ro).max()
    assert err <= 3 * U * vmax, f"O error {err} > {3 * U * vmax}"


def test_an_e4m3_nan_in_v_reaches_its_column_of_its_kv_head_only():
    table_seq0 = _case("fp8e4m3", seed=1)[3][0, 0]           # sequence 0's first block (same seed -> same table)
    o, ro, vmax, _ = _case("fp8e4m3", nan_at=(table_seq0, 5, 1, 7), seed=1)   # key 5 of seq 0, kv head 1, d 7
    nan = np.isnan(ro)
    assert nan.any() and np.array_equal(np.isnan(o), nan)
    assert nan[0, 0, 2:, 7].all() and nan.sum() == 2      # heads 2, 3 share kv head 1; only column d = 7
    assert np.abs(o[~nan] - ro[~nan]).max() <= 3 * U * vmax
