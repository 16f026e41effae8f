"""wmma_gen.model.occupancy: VGPR granule, LDS, wave-slot limits; monotone in resources."""
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.model.occupancy import occupancy
from wmma_gen.model.params import params_for
from wmma_gen.targets import get_target, known_product_archs


def occ(arch, vgprs, lds=0, threads=128):
    return occupancy(vgprs, lds, threads, get_target(arch), params_for(arch))


def test_vgpr_granule_full_register_file():
    # gfx1100: 1536 VGPRs per SIMD, granule 24: 96 -> 16 waves, 97 -> 120 allocated -> 12 waves
    assert occ("gfx1100", 96).vgprs_allocated == 96
    assert occ("gfx1100", 97).vgprs_allocated == 120
    assert occ("gfx1100", 97).waves_per_simd == 12   # 128 threads = 2 waves per SIMD -> 6 workgroups
    assert occ("gfx1100", 97).workgroups_per_cu == 6


def test_vgpr_granule_small_register_file():
    # gfx1102: 1024 VGPRs per SIMD, granule 16: 128 -> 8 waves -> 4 two-wave-per-SIMD workgroups
    o = occ("gfx1102", 128)
    assert (o.vgprs_allocated, o.waves_per_simd, o.workgroups_per_cu, o.limiter) == (128, 8, 4, "vgpr")


def test_hardware_wave_limit_and_lds_limit():
    o = occ("gfx1100", 8)
    assert o.waves_per_simd == get_target("gfx1100").max_waves_per_simd and o.limiter == "waves"
    o = occ("gfx1100", 64, lds=40960)
    assert o.workgroups_per_cu == 1 and o.limiter == "lds"


@pytest.mark.parametrize("arch", sorted(known_product_archs()))  # the model needs public product facts
def test_more_vgprs_or_lds_never_more_waves(arch):
    prev = None
    for v in range(1, 257):
        w = occ(arch, v).waves_per_simd
        assert prev is None or w <= prev
        prev = w
    prev = None
    for lds in range(0, 65537, 4096):
        w = occ(arch, 64, lds=lds).workgroups_per_cu
        assert prev is None or w <= prev
        prev = w


def test_too_many_vgprs_rejected():
    with pytest.raises(ScheduleError):
        occ("gfx1100", 300)


def test_one_wave_workgroups_fill_both_simds_of_a_cu():
    """RDNA3 ISA guide 2.3 (CU mode): a workgroup's waves stay on one CU, each on either SIMD32, and
    different workgroups share them. 193 VGPRs (216 allocated) -> 7 waves per SIMD: 14 one-wave
    workgroups per CU (7 per SIMD; the old count booked a SIMD slot pair each: 7), 7 two-wave ones,
    4 three-wave ones (12 waves, 6 per SIMD)."""
    one, two, three = (occ("gfx1100", 193, threads=32 * w) for w in (1, 2, 3))
    assert (one.workgroups_per_cu, one.waves_per_simd, one.limiter) == (14, 7, "vgpr")
    assert (two.workgroups_per_cu, two.waves_per_simd) == (7, 7)
    assert (three.workgroups_per_cu, three.waves_per_simd) == (4, 6)


def test_busiest_simd_waves_balances_the_cu():
    from wmma_gen.model.occupancy import busiest_simd_waves
    assert [busiest_simd_waves(n, 1, 2) for n in (1, 2, 3, 6, 11)] == [1, 1, 2, 3, 6]
    assert [busiest_simd_waves(n, 4, 2) for n in (1, 3)] == [2, 6]
