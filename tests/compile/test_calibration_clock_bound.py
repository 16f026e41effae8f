"""A clock fitted from GEMM/attention points (no microbenchmark) never goes above the boost clock
(model/calibration.fit, issue 38 item 1): above boost it is the target's share of the family
efficiencies' misfit, not a clock; a microbenchmark clock may (partner cards boost higher). And no clock
is below a floor a published figure proves (issue 38 item 4): the highest floor, capped at boost, raises a
microbenchmark's clock and pins a fitted one."""
from types import SimpleNamespace

import pytest

from wmma_gen.model import calibration as C
from wmma_gen.targets import get_target


def _points(clock: dict, eff: dict, mb: dict):
    pts, raw, clocked = [], {}, {}
    for arch, r in mb.items():
        pts.append(SimpleNamespace(id=f"mb-{arch}", arch=arch, family=C.PEAK, role="fit:clock", tflops=100.0 * r))
        raw[f"mb-{arch}"] = clocked[f"mb-{arch}"] = 100.0
    for arch, r in clock.items():
        for fam, base in (("gemm", 50.0), ("loop", 20.0)):
            pid = f"{fam}-{arch}"
            pts.append(SimpleNamespace(id=pid, arch=arch, family=fam, role=f"fit:{fam}", tflops=base * r * eff[fam]))
            raw[pid] = base
            clocked[pid] = base * mb.get(arch, 1.0)
    return pts, clocked, raw


def test_a_fitted_clock_above_boost_is_pinned_at_boost_and_says_so():
    mb = {"gfx1151": 0.6, "gfx1201": 1.03}                     # microbenchmarks: gfx1201 above boost is kept
    clock = {**mb, "gfx1100": 1.07}                            # what the data alone would give gfx1100
    f = C.fit(*_points(clock, {"gemm": 0.9, "loop": 0.55}, mb))
    assert f.sustained_ghz["gfx1100"] == pytest.approx(get_target("gfx1100").boost_ghz, rel=1e-12)
    assert f.clock_how["gfx1100"].startswith("boost clock")
    assert f.sustained_ghz["gfx1201"] == pytest.approx(1.03 * get_target("gfx1201").boost_ghz, rel=1e-12)
    # the efficiencies take the rest: the gfx1100 rows' ratio 1.07 shares the log misfit with the others
    assert 0.9 < f.efficiency["gemm"] < 0.9 * 1.07 and 0.55 < f.efficiency["loop"] < 0.55 * 1.07


def test_a_fitted_clock_below_boost_is_fitted():
    mb = {"gfx1151": 0.6, "gfx1201": 1.03}
    f = C.fit(*_points({**mb, "gfx1100": 0.93}, {"gemm": 0.9, "loop": 0.55}, mb))
    assert f.sustained_ghz["gfx1100"] == pytest.approx(0.93 * get_target("gfx1100").boost_ghz, rel=1e-9)
    assert f.efficiency == pytest.approx({"gemm": 0.9, "loop": 0.55}, rel=1e-9)


def test_a_floor_above_the_microbenchmark_raises_its_clock_and_says_which_point():
    mb = {"gfx1151": 0.6, "gfx1201": 1.03}
    boost = get_target("gfx1151").boost_ghz
    floors = {"gfx1151": [(0.7 * boost, "gemm-gfx1151"), (0.65 * boost, "other")], "gfx1201": [(0.9 * 2.97, "x")]}
    pts, clocked, raw = _points({**mb, "gfx1100": 0.93}, {"gemm": 0.9, "loop": 0.55}, mb)
    plain = C.fit(pts, clocked, raw)
    step1 = C.fit([p for p in pts if p.role == "fit:clock"], {}, raw, floors)   # bench/calibrate.py's order
    assert step1.sustained_ghz["gfx1151"] == pytest.approx(0.7 * boost, rel=1e-12)
    raised = {k: v * (0.7 / 0.6 if k.endswith("gfx1151") and not k.startswith("mb") else 1.0) for k, v in clocked.items()}
    f = C.fit(pts, raised, raw, floors)
    assert f.sustained_ghz["gfx1151"] == pytest.approx(0.7 * boost, rel=1e-12)
    assert f.clock_how["gfx1151"].startswith("lower bound") and "gemm-gfx1151" in f.clock_how["gfx1151"]
    assert f.sustained_ghz["gfx1201"] == plain.sustained_ghz["gfx1201"]        # floor below its microbenchmark
    # the gfx1151 rows, estimated at the raised clock, read 0.6 / 0.7 of it: the efficiencies share that misfit
    assert f.efficiency["gemm"] < plain.efficiency["gemm"] and f.efficiency["loop"] < plain.efficiency["loop"]


def test_a_floor_above_boost_is_capped_at_boost():
    mb = {"gfx1151": 0.6}
    f = C.fit(*_points({**mb, "gfx1100": 0.93}, {"gemm": 0.9, "loop": 0.55}, mb),
              {"gfx1151": [(4.0, "impossible")]})
    assert f.sustained_ghz["gfx1151"] == pytest.approx(get_target("gfx1151").boost_ghz, rel=1e-12)


def test_a_fitted_clock_below_its_floor_is_pinned_at_the_floor():
    mb = {"gfx1151": 0.6, "gfx1201": 1.03}
    boost = get_target("gfx1100").boost_ghz
    f = C.fit(*_points({**mb, "gfx1100": 0.8}, {"gemm": 0.9, "loop": 0.55}, mb), {"gfx1100": [(0.85 * boost, "g")]})
    assert f.sustained_ghz["gfx1100"] == pytest.approx(0.85 * boost, rel=1e-12)
    assert f.clock_how["gfx1100"].startswith("lower bound") and "went below it" in f.clock_how["gfx1100"]
    # the rows of gfx1100 (made at 0.8) now read 0.8 / 0.85 of the estimate: the efficiencies absorb part of it
    assert f.efficiency["gemm"] < 0.9 and f.efficiency["loop"] < 0.55
