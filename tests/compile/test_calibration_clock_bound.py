"""A clock fitted from GEMM/attention points (no microbenchmark) never goes above the boost clock
(model/calibration.fit, issue 38 item 1): above boost it is the target's share of the family
efficiencies' misfit, not a clock; a microbenchmark clock may (partner cards boost higher)."""
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
