"""The exposed-LDS share (params.ModelParams.lds_exposed, issue 38 item 1) in the loop-kernel model: off by
default (the attention ops were fitted without it), on request it adds lds_exposed x the CU's LDS clocks
per trip to the SIMD's time -- the term ops/gemm/model.py charges every GEMM. Synthetic ISA, no compiler."""
from types import SimpleNamespace

import pytest
from model_synth import loop_isa

from wmma_gen.model import params
from wmma_gen.model.loop_kernel import estimate_loop_kernel
from wmma_gen.targets import get_target


def kernel(arch: str, ds_reads: dict):
    t = get_target(arch)
    isa = loop_isa(wmma=16, valu=8, loads={128: 2}, ds_reads=ds_reads, arch_wmma=t.instr("f16", "f32").mnemonic)
    md = SimpleNamespace(vgpr_count=64, lds_bytes=16384, reqd_workgroup_size=(4 * t.wave_size, 1, 1),
                         max_flat_workgroup_size=4 * t.wave_size)
    return SimpleNamespace(isa=isa, metadata=md)


def estimate(arch: str, ds_reads: dict, exposed: bool):
    t = get_target(arch)
    wgs = 8 * t.cus
    trips = wgs * 64
    return estimate_loop_kernel(kernel(arch, ds_reads), t, "f16", total_trips=trips, workgroups=wgs,
                                l2_bytes=0.0, compulsory_bytes=0.0, flops=trips * 16 * 2 * 16 * 16 * 16 * 2.0,
                                lds_exposed=exposed)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_the_share_is_added_on_request_only(arch):
    off, on = estimate(arch, {128: 8}, False), estimate(arch, {128: 8}, True)
    f = on.figures
    cu_lds = f["resident_workgroups_per_cu"] * f["occupancy"]["waves_per_workgroup"] * f["clocks_per_wave_trip"]["lds"]
    assert cu_lds > 0 and params.params_for(arch).lds_exposed > 0
    share = params.params_for(arch).lds_exposed
    assert f["clocks_per_trip"] == pytest.approx(off.figures["clocks_per_trip"] + share * cu_lds)
    assert on.tflops < off.tflops
    # a loop without LDS traffic, or a zero share, pays nothing
    assert estimate(arch, {}, True).tflops == estimate(arch, {}, False).tflops
    with params.changed(arch, lds_exposed=0.0):
        assert estimate(arch, {128: 8}, True).tflops == estimate(arch, {128: 8}, False).tflops
