"""model/loop_kernel.py: a loop trip is shared by the workgroups actually resident on a CU.

The same synthetic kernel (no compiler) gets occupancy limits 1, 2, 4, 8 from its LDS size alone
(model/occupancy.py: lds_bytes_per_cu // LDS bytes). A grid of CUs/4 workgroups puts one
workgroup on a CU, so its per-trip cost must not grow with the limit; a grid that fills every CU
to the limit must cost exactly what the pre-fix model (contention = occupancy limit) charged.
"""
from types import SimpleNamespace

import pytest
from model_synth import loop_isa

from wmma_gen.model import loop_kernel
from wmma_gen.model.loop_kernel import estimate_loop_kernel, resident_workgroups_per_cu
from wmma_gen.model.params import params_for
from wmma_gen.targets import get_target

ARCHS = ("gfx1100", "gfx1201")
LIMITS = (1, 2, 4, 8)
TRIPS_PER_WORKGROUP = 64


def kernel(arch: str, limit: int):
    """A 2-wave loop kernel (16 WMMAs, 8 VALU, 2 global loads a trip) whose LDS size allows `limit`
    workgroups per CU."""
    t = get_target(arch)
    isa = loop_isa(wmma=16, valu=8, loads={128: 2}, arch_wmma=t.instr("f16", "f32").mnemonic)
    md = SimpleNamespace(vgpr_count=32, lds_bytes=params_for(arch).lds_bytes_per_cu // limit,
                         reqd_workgroup_size=(2 * t.wave_size, 1, 1), max_flat_workgroup_size=2 * t.wave_size)
    return SimpleNamespace(isa=isa, metadata=md)


def estimate(arch: str, limit: int, workgroups: int):
    trips = workgroups * TRIPS_PER_WORKGROUP
    return estimate_loop_kernel(kernel(arch, limit), get_target(arch), "f16", total_trips=trips,
                                workgroups=workgroups, l2_bytes=trips * 4096.0, compulsory_bytes=workgroups * 4096.0,
                                flops=trips * 16 * 2 * 16 * 16 * 16 * 2.0)


def pre_fix(monkeypatch):
    """The model as it was: every trip contended by the occupancy limit, whatever the grid."""
    monkeypatch.setattr(loop_kernel, "resident_workgroups_per_cu", lambda limit, workgroups, cus: limit)


@pytest.mark.parametrize("arch", ARCHS)
def test_the_synthetic_kernels_span_the_occupancy_limits(arch):
    got = [estimate(arch, n, 4 * get_target(arch).cus).figures["occupancy"]["workgroups_per_cu"] for n in LIMITS]
    assert got == list(LIMITS)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_quarter_grid_trip_does_not_grow_with_the_occupancy_limit(arch, monkeypatch):
    wgs = get_target(arch).cus // 4
    fixed = [estimate(arch, n, wgs) for n in LIMITS]
    assert all(e.figures["resident_workgroups_per_cu"] == 1 for e in fixed)
    assert len({e.figures["clocks_per_trip"] for e in fixed}) == 1
    assert len({e.seconds for e in fixed}) == 1
    # the pre-fix model charged the same grid more as the limit rose: the assertion above can fail
    pre_fix(monkeypatch)
    old = [estimate(arch, n, wgs).figures["clocks_per_trip"] for n in LIMITS]
    assert old == sorted(old) and old[-1] > old[0]


@pytest.mark.parametrize("arch", ARCHS)
def test_a_partly_filled_grid_costs_a_trip_like_its_resident_count(arch):
    """1.5 x CUs workgroups under a limit of 8: the busiest CU holds 2, and a trip costs what it
    costs a limit-2 kernel whose grid fills every CU."""
    cus = get_target(arch).cus
    e = estimate(arch, 8, cus + cus // 2)
    assert e.figures["resident_workgroups_per_cu"] == 2
    assert e.figures["clocks_per_trip"] == estimate(arch, 2, 2 * cus).figures["clocks_per_trip"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("rounds", (1, 3, 3.25))
def test_a_grid_that_fills_every_cu_is_estimated_bit_for_bit_as_before(arch, limit, rounds, monkeypatch):
    wgs = int(rounds * get_target(arch).cus * limit)
    new = estimate(arch, limit, wgs)
    assert new.figures["resident_workgroups_per_cu"] == limit
    pre_fix(monkeypatch)
    old = estimate(arch, limit, wgs)
    assert (new.seconds, new.tflops, new.limiter, new.est_low, new.est_high) == \
        (old.seconds, old.tflops, old.limiter, old.est_low, old.est_high)
    assert new.figures["clocks_per_trip"] == old.figures["clocks_per_trip"]


@pytest.mark.parametrize("limit,workgroups,cus,expected", [
    (8, 24, 96, 1), (8, 96, 96, 1), (8, 97, 96, 2), (8, 144, 96, 2), (4, 10_000, 96, 4), (3, 1, 64, 1), (2, 0, 64, 1)])
def test_resident_workgroups_per_cu(limit, workgroups, cus, expected):
    assert resident_workgroups_per_cu(limit, workgroups, cus) == expected
