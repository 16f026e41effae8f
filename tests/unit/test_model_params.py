"""wmma_gen.model.params: one row per target, every field sourced, WMMA cycles derived from
the target's peak rate (so the model's peak equals targets.peak_tflops)."""
import dataclasses

import pytest

from wmma_gen.model.params import PARAMS, SOURCES, ModelParams, params_for, wmma_cycles
from wmma_gen.targets import TARGETS, known_product_archs


def test_every_target_has_parameters_and_every_field_a_source():
    assert set(PARAMS) == set(known_product_archs())
    for f in dataclasses.fields(ModelParams):
        if f.name != "arch":
            assert SOURCES.get(f.name), f"{f.name} has no source"


@pytest.mark.parametrize("arch", sorted(known_product_archs()))
def test_wmma_cycles_reproduce_peak(arch):
    t = TARGETS[arch]
    for (dt, acc), ins in t.wmma.items():
        flops_per_clk_cu = 2 * 16 * 16 * ins.k / wmma_cycles(t, dt, acc) * t.simds_per_cu
        assert flops_per_clk_cu == t.rate[dt]


def test_known_cycle_counts():
    assert wmma_cycles(TARGETS["gfx1100"], "f16", "f32") == 32
    assert wmma_cycles(TARGETS["gfx1201"], "f16", "f32") == 16
    assert wmma_cycles(TARGETS["gfx1201"], "fp8", "f32") == 8


def test_unknown_arch_lists_known():
    with pytest.raises(ValueError, match="gfx1100"):
        params_for("gfx9000")


def test_measured_values_are_the_cited_figures_in_the_model_units():
    # SOURCES [CC7600]: RX 7600 L2 2.13 TB/s, Infinity Cache 984 GB/s; [CCSH]: Strix Halo MALL ~1 TB/s
    from wmma_gen.model.params import MEASURED, is_assumption
    assert PARAMS["gfx1102"].l2_bytes_per_clk * TARGETS["gfx1102"].boost_ghz * 1e9 == pytest.approx(2.13e12, rel=1e-3)
    assert (PARAMS["gfx1102"].mall_bw_gbs, PARAMS["gfx1151"].mall_bw_gbs) == (984, 1000)
    assert all(not is_assumption(arch, name) for name, arch in MEASURED)
    assert is_assumption("gfx1100", "l2_bytes_per_clk") and is_assumption("gfx1201", "mall_bw_gbs")
