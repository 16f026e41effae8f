"""bench/calibration_peer_kernels.py (issue 38 item 4): the counts the calibration report's misses rest on --
CK's and hipBLASLt's derived from their published tiles, the loop finder on a small ISA, and the recorded
compiler output of AITER's backward and Triton tutorial 06 (no foreign code here, so nothing compiles it)."""
import pytest

from bench_import import bench_module


@pytest.fixture(scope="module")
def K():
    with bench_module("calibration_peer_kernels") as module:
        yield module


def test_ck_tile_counts_follow_the_tile(K):
    """CK's 64x64 gfx12 tile: 16 query rows per wave, 64 v_wmma and all 32 KiB of K and V read per wave per
    trip; with 8 waves over 128 queries (our default's tile) the same per-wave work, half the stores."""
    c = K.ck_counts()
    assert (c["wmma"], c["ds_read_b128"], c["ds_write_b128"], c["global_load_b128"]) == (64, 64, 16, 16)
    big = K.ck_counts(dict(K.CK_TILE, bm0=128, waves=8))
    assert (big["wmma"], big["ds_read_b128"], big["ds_write_b128"]) == (64, 64, 8)


def test_hipblaslt_counts_follow_the_solution(K):
    """MT128x128x32, 2x2 waves of 4x4 fragments: 32 v_wmma per DepthU iteration, A in 4 b128 loads and B in
    8 b64 loads per thread, 16 fragment reads; a DepthU of 64 doubles the WMMAs and reads."""
    c = K.hipblaslt_counts()
    assert (c["wmma"], c["global_loads"], c["ds_read_b128"], c["waves"]) == (32, 12, 16, 4)
    assert c["global_load_bits"] == {128: 4, 64: 8}
    d = K.hipblaslt_counts(dict(K.HIPBLASLT, DepthU=64))
    assert (d["wmma"], d["ds_read_b128"]) == (64, 32)


ISA = """\t.text
kern:
\ts_mov_b32 s0, 0
.LBB0_1:
\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
\tv_exp_f32_e32 v30, v31
\tv_add_f32_e32 v30, v30, v31
\ts_cbranch_scc1 .LBB0_1
.LBB0_2:
\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
\ts_cbranch_scc0 .LBB0_2
\ts_endpgm
.Lfunc_end0:
"""


def test_loops_lists_every_wmma_loop_in_order(K):
    L = K.loops(ISA)
    assert [(x["wmma"], x["trans"]) for x in L] == [(1, 1), (2, 0)]
    assert L[0]["valu"] >= 2 and L[0]["issued"] == 4


def test_the_recorded_aiter_counts_set_gfx1151s_clock_floor(K):
    """The recorded compiler output of AITER's tuned backward (no source, no Triton needed): its loops need
    published / (TFLOP/s per GHz) GHz, the highest floor of gfx1151 -- the sustained clock targets.py stores."""
    from wmma_gen.targets import get_target
    pid, arch, per_ghz, how = K.recorded_floor()
    t = get_target(arch)
    assert pid == "fa-1151-bwd" and "Triton" in how
    needed = K.AITER_BWD["tuned"][4] / per_ghz
    assert t.sustained_ghz == pytest.approx(needed, abs=0.0005) and needed < t.boost_ghz
    # the dense WMMA rate alone bounds it far higher: the VALU work of the loops sets this floor
    assert per_ghz < t.peak_tflops("f16") / t.boost_ghz / 2


def test_recorded_aiter_figures_bound_the_published_ones(K):
    """From the recorded counts alone: the tuned config's loops issue the published 20.812 exactly at the
    sustained clock (its floor) and more at boost; the baseline's published 9.585 fits under its bound."""
    r = K.aiter_recorded()
    t, b = r["tuned"], r["baseline"]
    assert t["bound_tflops"]["sustained"] == pytest.approx(t["published"], rel=0.001)
    assert t["published"] < t["bound_tflops"]["boost"]
    assert b["published"] < b["bound_tflops"]["sustained"] and b["spills"] > t["spills"] > 0


def test_tut06_table_holds_every_autotuned_config_once(K):
    """Every config tutorial 06's HIP list holds (BLOCK_M {64,128} x BLOCK_N {32,64} x warps {4,8}) once per
    mode; keep() drops 8 warps below 128x128, so exactly the 4-warp ones are `tried`; a causal row with
    BLOCK_M > BLOCK_N has its on-band loop beside the off-band one, with the same v_wmma per trip."""
    seen = {(r[0], r[1], r[2], r[3]) for r in K.TUT06_FWD}
    assert len(seen) == len(K.TUT06_FWD) == 16
    assert seen == {(c, m, n, w) for c in (False, True) for m in (64, 128) for n in (32, 64) for w in (4, 8)}
    for causal in (False, True):
        tried = K.tut06_fwd(causal)
        assert {(r["block_m"], r["block_n"], r["num_warps"]) for r in tried} == {
            (m, n, 4) for m in (64, 128) for n in (32, 64)}
        assert [r["est"] for r in tried] == sorted((r["est"] for r in tried), reverse=True)
    for r in (dict(zip(K.TUT06_FWD_FIELDS, x)) for x in K.TUT06_FWD):
        assert len(r["loops"]) == (2 if r["causal"] and r["block_m"] > r["block_n"] else 1)
        assert len({L[0] for L in r["loops"]}) == 1


def test_tut06_text_reports_best_config_and_range(K):
    """The report's peer text: the best config by the model first, the range of the autotuned configs and
    published / est at both ends; the backward with its spills and both estimates; other points: None."""
    rows = K.tut06_fwd(False)
    text = K.tut06_text("fa-1100-tut-fwd", 25.5)
    best = rows[0]
    assert text.index(f"{best['block_m']}x{best['block_n']} 4 warps") < text.index(
        f"{rows[-1]['block_m']}x{rows[-1]['block_n']} 4 warps")
    assert f"model {rows[-1]['est']}..{best['est']} TFLOP/s" in text and f"{25.5 / best['est']:.2f}" in text
    b = K.TUT06_BWD
    bt = K.tut06_text("fa-1100-tut-bwd-causal", 24.9)
    assert f"{b['spills']} spills" in bt and f"{24.9 / b['est']:.2f}" in bt and f"{24.9 / b['est_no_scratch']:.2f}" in bt
    assert b["est"] < b["est_no_scratch"]
    assert K.tut06_text("fa-1201-ck", 107.7) is None
