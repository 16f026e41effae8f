"""bench/calibration_peer_kernels.py (issue 38 item 4): the counts the calibration report's misses rest on --
CK's and hipBLASLt's derived from their published tiles, the loop finder on a small ISA, and AITER's backward
compiled here when its source is given (WMMA_GEN_AITER_SRC) and Triton is installed."""
import os

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


@pytest.mark.skipif(not os.environ.get("WMMA_GEN_AITER_SRC"), reason="WMMA_GEN_AITER_SRC not set")
def test_aiter_backward_compiled_here_matches_the_recorded_counts(K, tmp_path, monkeypatch):
    """AITER's fused non-causal backward with PR #4242's tuned config, compiled for gfx1151: two WMMA loops
    with the recorded counts, so the published 20.812 TFLOP/s needs the model's gfx1151 sustained clock (its
    floor) at efficiency 1, less than boost; the PR's baseline config fits under its bound."""
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    r = K.aiter_bwd("gfx1151", "f16")
    t, b = r["tuned"], r["baseline"]
    assert t["recorded"] is True, (t["dkdv"], t["dq"], K.AITER_BWD_RECORDED)
    assert t["bound_tflops"]["sustained"] == pytest.approx(t["published"], rel=0.001)
    assert t["clock_needed"] == pytest.approx(t["clocks"]["sustained"], abs=0.0005)
    assert t["published"] < t["bound_tflops"]["boost"] and t["clock_needed"] < t["clocks"]["boost"]
    assert b["published"] < b["bound_tflops"]["sustained"]
