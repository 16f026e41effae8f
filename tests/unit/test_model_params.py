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
