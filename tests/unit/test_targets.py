import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.targets import TARGETS, get_target


def test_all_issue_targets_present():
    assert set(TARGETS) == {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
                            "gfx1170", "gfx1171", "gfx1200", "gfx1201"}


@pytest.mark.parametrize("arch,dtype,tflops", [("gfx1100", "f16", 122.88), ("gfx1151", "f16", 59.392),
                                               ("gfx1201", "f16", 194.64), ("gfx1201", "fp8", 389.28),
                                               ("gfx1100", "i4", 245.76)])
def test_peak_is_rate_times_cus_times_clock(arch, dtype, tflops):
    assert get_target(arch).peak_tflops(dtype) == pytest.approx(tflops, rel=1e-3)


def test_dtype_sets_per_family():
    assert set(get_target("gfx1100").dtypes) == {"f16", "bf16", "i8", "i4"}
    assert set(get_target("gfx1201").dtypes) == {"f16", "bf16", "fp8", "bf8", "i8", "i4"}
    assert get_target("gfx1100").accs("f16") == ("f32", "f16")


def test_unknown_arch_lists_known_ones():
    with pytest.raises(ScheduleError, match="gfx1100, gfx1101"):
        get_target("gfx90a")


def test_fp8_on_gfx11_is_refused():
    with pytest.raises(ScheduleError, match="fp8/f32.*gfx1100 supports"):
        get_target("gfx1100").instr("fp8", "f32")
