"""Triton kernels compiled offline (no GPU) for gfx1100, gfx1151 and gfx1201 run on our emulator and
match numpy (issue #17 item 4): f16 and bf16 against a float64 reference, i8 exactly; the gfx1201
objects also decode as LLVM prints them. Needs the `peers` extra (triton); skipped without it."""
import sys

import numpy as np
import pytest

from bench_import import BENCH, bench_module

pytest.importorskip("triton")


@pytest.fixture(scope="module")
def peers_triton(tmp_path_factory):
    import os
    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton_cache"))
    try:
        with bench_module("peers_triton") as module:
            yield module
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old


def _run(ck, grid, args):
    from wmma_gen.emu.api import load_program, run_code_object
    explicit = [a for a in load_program(ck.asm["hsaco"]).args if not a.kind.startswith("hidden_")]
    args = args + [np.zeros(256, np.uint8)] * (len(explicit) - len(args))   # Triton's scratch pointers
    return run_code_object(ck.asm["hsaco"], grid=grid, block=(32 * ck.metadata.num_warps, 1, 1), args=args,
                           dynamic_lds=ck.metadata.shared)


# gfx1201 (RDNA4): Triton's objects use the gfx12 pseudo-scalar v_s_rcp_f32 (integer division of the
# program id), v_max_num_f32 / v_max3_num_f32 / v_dual_max_num_f32 (softmax row max) and read the wave id
# from TTMP8[29:25] -- all run on the emulator (tests/emu/test_emu_vop_num12.py per row).
GEMM_SEED = {"gfx1100": 7, "gfx1151": 11, "gfx1201": 11}
I8_SEED = {"gfx1100": 3, "gfx1201": 13}
FA_SEED = {"gfx1100": 5, "gfx1201": 17}


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1151", "gfx1201"])
def test_triton_gemm_runs_on_the_emulator_and_matches_numpy(peers_triton, arch):
    ck, seconds = peers_triton.compile_gemm(arch, "f16", bm=64, bn=64, bk=32, num_warps=4)
    isa = ck.asm["amdgcn"]
    assert isa.count("v_wmma_f32_16x16x16_f16") > 0 and seconds > 0
    if arch == "gfx1201":
        assert "v_s_rcp_f32" in isa
    m, n, k = 128, 192, 96
    rng = np.random.default_rng(GEMM_SEED[arch])
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    res = _run(ck, ((m // 64) * (n // 64), 1, 1), [a, b, np.zeros((m, n), np.float32), m, n, k, k, n, n])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f16 products are exact in f32; only the f32 accumulation rounds: K * 2^-24 * max|a| max|b| bounds it
    tol = k * 2.0 ** -24 * np.abs(a).max() * np.abs(b).max()
    assert np.abs(res.buffers[2] - ref).max() <= tol
    assert res.stats.workgroups == 6


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_triton_gemm_i8_is_exact_on_the_emulator(peers_triton, arch):
    ck, _ = peers_triton.compile_gemm(arch, "i8", bm=64, bn=64, bk=64, num_warps=4)
    m = n = k = 128
    rng = np.random.default_rng(I8_SEED[arch])
    a, b = (rng.integers(-128, 128, (m, m)).astype(np.int8) for _ in range(2))
    res = _run(ck, (4, 1, 1), [a, b, np.zeros((m, n), np.int32), m, n, k, k, n, n])
    np.testing.assert_array_equal(res.buffers[2], a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_triton_fa2_forward_runs_on_the_emulator_and_matches_numpy(peers_triton, arch, causal):
    d, s, bh = 64, 128, 2
    ck, _ = peers_triton.compile_attention(arch, "f16", d, causal=causal, bm=64, bn=32, num_warps=4)
    if arch == "gfx1201":
        assert "v_max3_num_f32" in ck.asm["amdgcn"]
    rng = np.random.default_rng(FA_SEED[arch])
    q, k, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    o, lse = np.zeros((bh, s, d), np.float16), np.zeros((bh, s), np.float32)
    res = _run(ck, (s // 64, bh, 1), [q, k, v, o, lse, s, float(peers_triton.qk_scale(d))])
    sc = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / np.sqrt(d)
    if causal:
        sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
    m = sc.max(-1, keepdims=True)
    p = np.exp(sc - m)
    ref_o = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    ref_lse = m[..., 0] + np.log(p.sum(-1))
    # P is rounded to f16 before P V and O is stored as f16: a few unit roundoffs (2^-11) of max|V|
    assert np.abs(res.buffers[3].astype(np.float64) - ref_o).max() <= 4 * 2.0 ** -11 * np.abs(v).max()
    assert np.abs(res.buffers[4] - ref_lse).max() <= 1e-4 * (1 + np.abs(ref_lse).max())


def test_our_model_on_a_triton_object_is_a_model_estimate_with_a_band(peers_triton, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import peers
    from wmma_gen.targets import get_target
    cfg = dict(bm=128, bn=128, bk=32)
    ck, _ = peers_triton.compile_gemm("gfx1100", "f16", **cfg, num_warps=8)
    e = peers.peer_estimate(ck, cfg, dict(op="gemm", arch="gfx1100", dtype="f16", m=2048, n=2048, k=2048))
    assert e.source == "model" and e.est_low < e.tflops < e.est_high
    assert 0 < e.tflops < get_target("gfx1100").peak_tflops("f16")
    assert e.figures["workgroups"] == 256 and e.figures["total_trips"] == 256 * 64


# ---- bf16: numpy has no bf16, so operands are float32 normals rounded to bf16 (RNE) and passed as their
# uint16 bits (wmma_gen/numerics.py); the reference is float64 on exactly those values.
def _bf16(rng, shape):
    """(uint16 bf16 bits for the kernel, their exact values in float64, the unrounded float32 draw)."""
    from wmma_gen import numerics as nx
    x = rng.standard_normal(shape).astype(np.float32)
    bits = nx.f32_to_bf16_bits(x)
    return bits, nx.bf16_bits_to_f32(bits).astype(np.float64), x


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_triton_gemm_bf16_runs_on_the_emulator_and_matches_the_float64_reference(peers_triton, arch):
    ck, _ = peers_triton.compile_gemm(arch, "bf16", bm=64, bn=64, bk=32, num_warps=4)
    assert ck.asm["amdgcn"].count("v_wmma_f32_16x16x16_bf16") > 0
    assert ck.src.signature["c_ptr"] == "*fp32"          # C is written as f32: no 16-bit output rounding
    m, n, k = 128, 192, 96
    rng = np.random.default_rng(19)
    (a, a64, a32), (b, b64, b32) = _bf16(rng, (m, k)), _bf16(rng, (k, n))
    res = _run(ck, ((m // 64) * (n // 64), 1, 1), [a, b, np.zeros((m, n), np.float32), m, n, k, k, n, n])
    c = res.buffers[2].astype(np.float64)
    # bf16 products (8-bit significands) are exact in f32; only the f32 accumulation rounds, as for f16
    tol = k * 2.0 ** -24 * np.abs(a64).max() * np.abs(b64).max()
    assert np.abs(c - a64 @ b64).max() <= tol
    # the bound is sharp enough to see bf16 itself: C misses the unrounded inputs' product by far more
    assert np.abs(c - a32.astype(np.float64) @ b32.astype(np.float64)).max() > 20 * tol
    assert res.stats.workgroups == 6


def test_triton_fa2_forward_bf16_for_gfx1201_runs_on_the_emulator_and_matches_the_float64_reference(peers_triton):
    from wmma_gen import numerics as nx
    d, s, bh = 64, 128, 2
    ck, _ = peers_triton.compile_attention("gfx1201", "bf16", d, bm=64, bn=32, num_warps=4)
    assert "v_wmma_f32_16x16x16_bf16" in ck.asm["amdgcn"] and ck.src.signature["o_ptr"] == "*bf16"
    rng = np.random.default_rng(23)
    (q, q64, _), (k, k64, _), (v, v64, _) = (_bf16(rng, (bh, s, d)) for _ in range(3))
    o, lse = np.zeros((bh, s, d), np.uint16), np.zeros((bh, s), np.float32)
    res = _run(ck, (s // 64, bh, 1), [q, k, v, o, lse, s, float(peers_triton.qk_scale(d))])
    sc = q64 @ k64.transpose(0, 2, 1) / np.sqrt(d)
    m = sc.max(-1, keepdims=True)
    p = np.exp(sc - m)
    ref_o = (p / p.sum(-1, keepdims=True)) @ v64
    got_o = nx.bf16_bits_to_f32(res.buffers[3]).astype(np.float64)
    # P is rounded to bf16 before P V and O is stored as bf16: each costs <= u*max|V| (u = 2^-8); 4u leaves 2x
    assert np.abs(got_o - ref_o).max() <= 4 * 2.0 ** -8 * np.abs(v64).max()
    ref_lse = m[..., 0] + np.log(p.sum(-1))
    assert np.abs(res.buffers[4] - ref_lse).max() <= 1e-4 * (1 + np.abs(ref_lse).max())


def test_the_bench_runs_bf16_triton_objects_on_the_emulator(peers_triton, monkeypatch):
    """bench/peers.py's emulate: bf16 operands as uint16 bits, C read back as the f32 the kernel writes."""
    monkeypatch.syspath_prepend(str(BENCH))
    import peers
    cfg = dict(bm=64, bn=64, bk=32)
    ck, _ = peers_triton.compile_gemm("gfx1201", "bf16", **cfg, num_warps=4)
    r = peers.emulate(ck, cfg, dict(op="gemm", arch="gfx1201", dtype="bf16"))
    assert r["emu_ok"] and 0 < r["emu_max_err"] <= r["emu_tol"] < 1e-3
    assert r["emu_tolerance"] == "K*2^-23*max|A|max|B| (f32 accumulation)"


@pytest.mark.parametrize("kind", ["gemm", "attention"])
def test_gfx1201_triton_objects_decode_as_llvm_prints_them(peers_triton, kind, monkeypatch):
    """The machine-code decode of Triton's gfx1201 objects (v_s_rcp_f32 with SGPR VDST, the _num_
    rows, VOPD halves) agrees instruction by instruction with LLVM's ISA text of the same compile."""
    monkeypatch.syspath_prepend(str(BENCH.parent / "tests" / "emu"))
    from test_decode_crosscheck import compare_programs

    from wmma_gen.emu import Program
    from wmma_gen.emu.api import load_program
    if kind == "gemm":
        ck, _ = peers_triton.compile_gemm("gfx1201", "f16", bm=64, bn=64, bk=32, num_warps=4)
    else:
        ck, _ = peers_triton.compile_attention("gfx1201", "f16", 64, bm=64, bn=32, num_warps=4)
    mc, text = load_program(ck.asm["hsaco"]), Program.from_isa(ck.asm["amdgcn"])
    assert any(i.mnemonic in ("v_s_rcp_f32", "v_max3_num_f32") for i in mc.instrs)
    assert compare_programs(text, mc, "gfx12") == []


# ---- FA-2 backward (bench/peers_triton.py: preprocess, dK/dV, dQ; bench/peers_bwd.py runs and estimates it)
@pytest.mark.parametrize("causal", [False, True])
def test_triton_fa2_backward_for_gfx1100_matches_the_float64_reference_on_the_emulator(peers_triton, causal,
                                                                                       monkeypatch):
    """dQ, dK, dV of the three Triton objects (B1 H1 S128 d64 f16) against the registry's float64
    attention_backward, within 8u*max|ref| + 1e-3 per output: an all-zero or unscaled output misses it
    by far (max|ref| is O(1), the tolerance ~0.01)."""
    monkeypatch.syspath_prepend(str(BENCH))
    import peers_bwd
    q = dict(op="attention_bwd", arch="gfx1100", dtype="f16", head_dim=64, causal=causal)
    cks, _, cfg = peers_bwd.compile_bwd(q)
    assert all(c.asm["amdgcn"].count("v_wmma_f32_16x16x16_f16") > 0 for n, c in cks.items() if n != "pre")
    assert all("scratch_" not in c.asm["amdgcn"] for c in cks.values())       # the tile was chosen not to spill
    r = peers_bwd.emulate(cks, cfg, q)
    assert r["emu_ok"] and 0 < r["emu_max_err"] <= r["emu_tol"] < 0.05, r["emu_detail"]
    assert r["emu_detail"].startswith("dq ") and r["emu_problem"] == "B1 H1 S128"


def test_the_calibration_cross_check_estimates_our_triton_peers(peers_triton, monkeypatch):
    """bench/calibrate.py: the Triton peer points get our Triton kernel's model estimate (forward and
    backward); other points none; without triton the column says so and nothing is compiled."""
    monkeypatch.syspath_prepend(str(BENCH))
    import calibrate
    from wmma_gen.ops.calibration_points import load_points
    pts = {p.id: p for p in load_points()}
    picked = [pts[i] for i in ("fa-1100-tut-fwd-causal", "fa-1100-tut-bwd-causal", "fa-1201-ck")]
    est = calibrate.triton_peer_estimates(picked)
    assert set(est) == {"fa-1100-tut-fwd-causal", "fa-1100-tut-bwd-causal"}
    for pid, (tflops, cfg) in est.items():
        assert 0 < tflops < 123 and "bm=" in cfg
        cols = calibrate._triton_cols(est[pid], pts[pid].tflops)
        assert cols["triton_peer_ratio"] == round(pts[pid].tflops / tflops, 3)
    monkeypatch.setitem(sys.modules, "triton", None)
    assert calibrate.triton_peer_estimates(picked) == {p: (None, "n/a (no triton)") for p in est}


def test_the_fit_basis_is_the_measured_kernel_family(peers_triton, monkeypatch):
    """bench/calibrate.py measured_family (issue 38 item 4a): a Triton peer's point is estimated with our
    Triton kernel of its family, every other point with our default kernel; without Triton the fit refuses,
    naming the point and the extra to install."""
    monkeypatch.syspath_prepend(str(BENCH))
    import calibrate
    from wmma_gen.ops.calibration_points import load_points
    pts = {p.id: p for p in load_points()}
    picked = [pts[i] for i in ("fa-1201-aiter", "fa-1201-ck")]
    ours = calibrate.estimates(picked, calibrate.C.CALIBRATED)
    tri = calibrate.triton_peer_estimates(picked)
    basis = calibrate.measured_family(picked, ours, tri)
    assert basis == {"fa-1201-aiter": tri["fa-1201-aiter"][0], "fa-1201-ck": ours["fa-1201-ck"][0]}
    assert basis["fa-1201-aiter"] < ours["fa-1201-aiter"][0]       # the Triton loop issues more per v_wmma
    assert calibrate.fit_estimate(pts["fa-1201-aiter"]) == pytest.approx(basis["fa-1201-aiter"], rel=1e-9)
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(calibrate.NeedsTriton, match="fa-1201-aiter.*triton>=3.9"):
        calibrate.measured_family(picked, ours, calibrate.triton_peer_estimates(picked))


def test_the_calibration_report_has_the_triton_columns():
    """results/model_calibration.md (bench/calibrate.py) explains the column and fills it for every
    point whose peer is a Triton kernel, with est / ratio."""
    import re
    md = (BENCH.parent / "results" / "model_calibration.md").read_text()
    assert "Triton peer compiled here: est / ratio" in md and "source=model" in md
    rows = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| fa-")}
    triton = ("fa-1100-tut-fwd", "fa-1100-tut-fwd-causal", "fa-1100-tut-bwd-causal", "fa-1100-aiter",
              "fa-1201-aiter", "fa-1151-aiter", "fa-1151-bwd")
    for pid in triton:
        assert re.search(r"\| \d+\.\d / \d+\.\d\d \|$", rows[pid]), rows[pid]
    assert rows["fa-1201-ck"].endswith("| - |")


def test_the_model_charges_a_triton_loop_its_own_transcendentals(peers_triton, monkeypatch):
    """model/loop_kernel.py on Triton's ISA (issue 38): its loop label carries LLVM's comment, which a second
    text scan took for part of the label, so it never met the back-edge and charged every transcendental to the
    kernel's end (98 per trip for this d128 forward, the AITER fit rows' proxy). Now: the loop body's only."""
    monkeypatch.syspath_prepend(str(BENCH))
    import peers
    from peers_common import as_compiled
    from wmma_gen.model.isa_loop import count_transcendental, find_main_loop
    cfg = dict(bm=64, bn=64, num_warps=4, num_stages=1)
    ck, _ = peers_triton.compile_attention("gfx1100", "f16", 128, **cfg)
    isa = as_compiled(ck).isa
    L = find_main_loop(isa)
    head = next(ln for ln in isa.splitlines() if ln.startswith(L.label + ":"))
    assert "; =>This Inner Loop Header" in head           # the commented label form
    assert L.transcendental > 0 and count_transcendental(L.outside) > 0     # the epilogue has its own
    q = dict(op="attention", arch="gfx1100", dtype="f16", batch=1, heads=8, seq=4096, head_dim=128, causal=False)
    e = peers.peer_estimate(ck, cfg, q)
    assert e.figures["transcendental_per_trip"] == L.transcendental == count_transcendental(L.ops)
