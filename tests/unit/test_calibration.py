"""wmma_gen.model.calibration: the fit recovers known parameters from plain observations; the
stored parameters (targets.py, params.py) reproduce the fit rows of the published table
(read by ops/calibration_points.py, tested in test_calibration_points.py) within the stated
band; model/ reads no op. Held-out rows are reported by bench/calibrate.py, never asserted here."""
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from wmma_gen.model import calibration as C, params
from wmma_gen.ops import calibration_points as CP
from wmma_gen.targets import TARGETS, get_target

ROOT = Path(__file__).resolve().parents[2]



def _pt(pid, arch, family, role, tflops):
    """A plain observation: the fit needs no op, no registry (SimpleNamespace, not the table's Point)."""
    return SimpleNamespace(id=pid, arch=arch, family=family, role=role, tflops=tflops)


def test_fit_recovers_known_clocks_and_efficiencies():
    """Synthetic published figures made from known parameters: the fit returns them."""
    clock = {"gfx1151": 0.6, "gfx1201": 1.05, "gfx1100": 0.9}
    eff = {"gemm": 0.8, "loop": 0.7}
    base = {"gemm": 50.0, "attention": 20.0}
    pts, raw, clocked = [], {}, {}
    for arch in ("gfx1151", "gfx1201"):
        pid = f"mb-{arch}"
        pts.append(_pt(pid, arch, C.PEAK, "fit:clock", 100.0 * clock[arch]))
        raw[pid] = clocked[pid] = 100.0
    for arch in clock:
        for op, fam in (("gemm", "gemm"), ("attention", "loop")):
            pid = f"{op}-{arch}"
            pts.append(_pt(pid, arch, fam, f"fit:{fam}", base[op] * clock[arch] * eff[fam]))
            raw[pid] = base[op]
            clocked[pid] = base[op] * (clock[arch] if arch != "gfx1100" else 1.0)
    f = C.fit(pts, clocked, raw)
    for arch, r in clock.items():
        assert f.sustained_ghz[arch] == pytest.approx(r * get_target(arch).boost_ghz, rel=1e-9)
    assert f.efficiency == pytest.approx(eff, rel=1e-9)
    assert f.clock_how["gfx1100"].startswith("fitted from")


def test_band_is_the_ratio_range_widened_by_the_margin():
    assert C.band_from([0.8, 1.2], margin=0.05) == (0.75, 1.25)


def test_every_sustained_clock_and_calibration_value_names_its_source():
    for t in TARGETS.values():
        if t.sustained_ghz:
            assert t.sustained_source and "as quoted in issue #17" in t.sustained_source, t.arch
    assert set(params.EFFICIENCY) == set(params.BAND) == {"gemm", "loop"}
    assert params.CALIBRATION_SOURCES["EFFICIENCY"] and params.CALIBRATION_SOURCES["BAND"]
    for lo, hi in params.BAND.values():
        assert 0 < lo < 1 < hi


def test_uncalibrated_context_is_the_nominal_model():
    t = get_target("gfx1151")
    with C.uncalibrated():
        f = C.factors(t, "gemm")
        assert (f.clock_ghz, f.efficiency, f.calibrated) == (t.boost_ghz, 1.0, False)
    f = C.factors(t, "gemm")
    assert (f.clock_ghz, f.efficiency, f.band) == (t.sustained_ghz, params.EFFICIENCY["gemm"], params.BAND["gemm"])


def test_target_without_a_point_gets_a_wider_band():
    assert not get_target("gfx1150").sustained_ghz
    lo, hi = C.band_for("gfx1150", "gemm")
    assert lo < params.BAND["gemm"][0] and hi >= params.BAND["gemm"][1]


def _fit_estimate(p: CP.Point):
    """The model's estimate of the kernel family p measured (bench/calibrate.py measured_family): our
    Triton FA-2 kernel for a Triton peer (needs Triton), our default kernel otherwise."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import calibrate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    if calibrate.is_triton_peer(p):
        triton = pytest.importorskip("triton")
        if triton.__version__ != params.FIT_TRITON:
            pytest.skip(f"{p.id}: fitted with Triton {params.FIT_TRITON}, {triton.__version__} installed: "
                        "rerun bench/calibrate.py and store its fit")
    return calibrate.fit_estimate(p)


@pytest.mark.parametrize("point", [p for p in CP.load_points() if p.fit], ids=lambda p: p.id)
def test_stored_parameters_reproduce_the_fit_points_within_the_band(point):
    """The model as shipped (sustained clocks, efficiencies) lands every fit row inside the band
    (microbenchmark rows: the generated WMMA-only loop kernel, to the 1 MHz the clock is stored with, or
    below it where a clock floor raised the target's clock above the microbenchmark's -- never above it)."""
    est = _fit_estimate(point)
    ratio = point.tflops / est
    if point.op == C.PEAK:
        floored = get_target(point.arch).sustained_source.startswith("lower bound")
        assert ratio < 0.995 if floored else ratio == pytest.approx(1.0, abs=0.005)
        assert ratio <= 1.005
    else:
        lo, hi = C.band_for(point.arch, point.family)
        assert lo <= ratio <= hi, f"{point.id}: published/estimate {ratio:.3f} outside {lo}..{hi}; rerun bench/calibrate.py"


def test_a_calibrated_estimate_is_still_a_model_estimate_with_its_band():
    from wmma_gen.ops.gemm.api import default_schedule
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.model import estimate
    from wmma_gen.ops.gemm.problem import GemmProblem
    d, p = GemmDirective("f16"), GemmProblem(1024, 1024, 1024)
    s = default_schedule(d, "gfx1151", p)
    k = compile_gemm(d, s, "gfx1151", p)
    e = estimate(k, d, s, "gfx1151", p)
    with C.uncalibrated():
        raw = estimate(k, d, s, "gfx1151", p)
    assert e.source == raw.source == "model"
    assert e.est_low < e.tflops < e.est_high and math.isnan(raw.est_low)
    assert e.tflops < raw.tflops   # Strix Halo's sustained clock is below boost
    assert e.figures["calibration"]["clock_ghz"] == get_target("gfx1151").sustained_ghz


def test_ladder_band_columns_for_model_rows_only(tmp_path):
    from autotune import ladder
    lo, hi = ladder._est_band("gfx1100", "gemm", "f16", 50.0, "model")
    assert (lo, hi) == pytest.approx((50 * params.BAND["gemm"][0], 50 * params.BAND["gemm"][1]))
    t = get_target("gfx1100")
    cap = max(t.peak_tflops("f16"), t.sustained_peak_tflops("f16"))   # nominal 122.88 or the fitted clock's
    assert cap < 120.0 * params.BAND["gemm"][1]
    assert ladder._est_band("gfx1100", "gemm", "f16", 120.0, "model")[1] == pytest.approx(cap)  # capped at peak
    assert all(math.isnan(v) for v in ladder._est_band("gfx1100", "gemm", "f16", 100.0, "hip"))
    assert {"est_low", "est_high"} <= set(ladder.COLUMNS)


def test_a_ladder_written_before_the_band_columns_still_reads(tmp_path):
    import pandas as pd

    from autotune import ladder
    from wmma_gen.ops.gemm.schedule import Schedule
    row = dict(arch="gfx1100", op="gemm", dtype="f16", acc="f32", layout="NN", m=256, n=256, k=256, batch=1,
               study="s", trial=0, rank=1, **Schedule().to_dict(), seconds=1e-3, tflops=10.0, unit="TFLOP/s",
               peak_tflops=122.88, fraction_of_peak=10 / 122.88, source="model", validated=True,
               gate_source="emulator", gate_max_abs=0.0, vgprs=100, lds_bytes=0, occupancy=4.0, limiter="latency",
               isa_hash="ab" * 16, toolchain_mlir="m", toolchain_lld="l", wmma_gen_version="0",
               timestamp="2026-01-01 00:00:00", ladder_rows=1)
    old = pd.DataFrame([row])
    assert "est_low" not in old.columns
    old.to_csv(tmp_path / "gemm_ladder.csv", index=False)
    df = ladder.read(tmp_path / "gemm_ladder.csv")
    assert df["est_low"].isna().all() and len(df) == 1


def test_model_calibration_reads_no_op():
    """The arrow runs one way: ops reads the table and hands the model plain data; a band is a band
    name (or PEAK), never an op name, so an op name is refused naming the bands."""
    import ast
    tree = ast.parse(Path(C.__file__).read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith(("..ops", "ops", "wmma_gen.ops"))], imported
    with pytest.raises(ValueError, match=r"band='attention' is not allowed: one of gemm, loop .* or peak"):
        C.band_for("gfx1100", "attention")
