"""MLA decode with an fp8 latent cache on gfx12's 8-bit float WMMA (schedule knob fp8_wmma,
ops/mla/fp8_native.py) on the gfx1201 emulator, against the float64 absorbed reference
(ops/mla/reference.py) of the dequantised cache and of Q as the kernel quantises it
(numerics.e4m3_rows: per query row, scale amax / 448 over all 576 columns).

Tolerances (absolute; V_eff = kv_scale * V):
  O    Q's quantisation is in the reference; P's is left: each weight is E4M3 of P * 2**8,
       relative error <= 2**-4 (3 mantissa bits, round to nearest) for P >= 2**-14 and absolute
       <= 2**-18 below, while l sums the unquantised P (>= 1 once a key is seen), so
       |O - O_ref| <= (2**-4 + n 2**-18) max|V_eff| for n keys, plus the output rounding and
       f32 sums (3u of the query dtype).
  LSE  1e-5 (1 + |LSE|), as the 16-bit path: the scores are the quantised Q's exactly (f32
       sums), so this checks that every wave quantised with the row's one scale. The rows'
       largest |q| is put in a different wave's columns per row (each wave holds 144 of them):
       a per-wave scale would give each wave's partial scores another Q and miss this.
  not tiny: against the reference of the unquantised Q the error exceeds the widening path's
       own tolerance 3u max|V_eff|: the products really ran on fp8 Q.
Rows that see no key: O = 0 and LSE = -inf exactly.
"""
import numpy as np
import pytest

from wmma_gen import hostdata, mla_decode
from wmma_gen.errors import ScheduleError
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.numerics import e4m3_rows
from wmma_gen.ops.mla.check import random_latent
from wmma_gen.ops.mla.defaults import default_schedule
from wmma_gen.ops.mla.directive import MLADirective
from wmma_gen.ops.mla.reference import mla_decode_reference
from wmma_gen.ops.mla.schedule import MLASchedule
from wmma_gen.targets import get_target

UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
FORM = {"fp8e4m3": "v_wmma_f32_16x16x16_fp8_fp8", "fp8e5m2": "v_wmma_f32_16x16x16_bf8_fp8"}


@pytest.mark.parametrize("dtype,kv,sq,heads,lens,causal,split", [
    ("bf16", "fp8e4m3", 2, 5, [150, 0, 9], True, 2),     # ragged row tile, empty / short sequences, split-KV
    ("f16", "fp8e5m2", 1, 16, [83], False, 1),            # one full row tile, partial last block
])
def test_native_fp8_matches_the_reference_of_the_quantised_query(dtype, kv, sq, heads, lens, causal, split):
    problem = dict(batch=len(lens), heads=heads, seq_q=sq, head_dim=576, head_dim_v=512, seq_lens=lens,
                   block_size=64, kv_dtype=kv)
    q, stored, c64, table, lens = random_latent(problem, dtype, seed=5)
    rows = q.reshape(-1, 576)
    for r in range(rows.shape[0]):          # each row's largest |q| in wave (r % 4)'s 144 columns
        rows[r, 144 * (r % 4) + 7 * r % 144] = (-1) ** r * 9.0
    ks = 0.3
    o, lse = mla_decode(q, stored, table, lens, causal=causal, kv_dtype=kv, kv_scale=ks, dtype=dtype,
                        arch="gfx1201", schedule=MLASchedule(split_kv=split, fp8_wmma=True))
    o = hostdata.decode(o, "bf16") if o.dtype == np.uint16 else o.astype(np.float64)
    ro, rl = mla_decode_reference(e4m3_rows(q), c64, table, lens, causal=causal, kv_scale=ks)
    dead = ~np.isfinite(rl)
    assert (lse[dead] == -np.inf).all() and (o.transpose(0, 2, 1, 3)[dead] == 0).all()
    vmax = np.abs(c64[..., :512]).max() * ks
    tol = (2.0 ** -4 + max(lens) * 2.0 ** -18 + 3 * UNIT[dtype]) * vmax
    err = np.abs(o - ro).max()
    assert err <= tol, (err, tol)
    lerr = np.abs(lse[~dead] - rl[~dead])
    assert (lerr <= 1e-5 * (1 + np.abs(rl[~dead]))).all(), lerr.max()
    plain, _ = mla_decode_reference(q, c64, table, lens, causal=causal, kv_scale=ks)
    assert np.abs(o - plain).max() > 3 * UNIT[dtype] * vmax, "no sign of fp8 Q"


@pytest.mark.parametrize("kv", ["fp8e4m3", "fp8e5m2"])
def test_main_loop_runs_fp8_wmma_spill_free(kv):
    from wmma_gen.ops.mla.api import compile_mla
    d = MLADirective("bf16", kv_dtype=kv)
    s = default_schedule(d, "gfx1201")
    assert s.fp8_wmma, "gfx12's default for an fp8 cache is the native path"
    ck = compile_mla(d, s, "gfx1201")["mla"][1]
    loop = find_main_loop(ck.isa)
    names = [op.mnemonic for op in loop.ops]
    assert loop.found
    # per 16-key trip and wave: S^T over its 144 columns (9) + O^T over its 128 V columns (8)
    assert names.count(FORM[kv]) == 9 + 8, names
    assert not any(n.startswith("v_wmma") and n != FORM[kv] for n in names), "a 16-bit WMMA is left"
    assert names.count("v_cvt_pk_fp8_f32") == 4, names            # P: 8 values, 2 per instruction
    assert "v_cvt_pk_fp8_f32" in [op.mnemonic for op in loop.outside]   # Q, once, before the loop
    m = ck.metadata
    assert m.vgpr_spill_count == 0 and m.sgpr_spill_count == 0 and m.scratch_bytes == 0, m
    assert m.lds_bytes == s.lds_bytes(d) <= 65536


def test_refused_where_it_cannot_exist_and_not_the_default_there():
    d8 = MLADirective("bf16", kv_dtype="fp8e4m3")
    with pytest.raises(ScheduleError, match="gfx1100"):
        MLASchedule(fp8_wmma=True).validate(d8, get_target("gfx1100"))
    with pytest.raises(ScheduleError, match="fp8 latent cache"):
        MLASchedule(fp8_wmma=True).validate(MLADirective("bf16"), get_target("gfx1201"))
    assert not default_schedule(d8, "gfx1100").fp8_wmma
    assert not default_schedule(MLADirective("bf16"), "gfx1201").fp8_wmma
