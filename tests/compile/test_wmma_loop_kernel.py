"""The generated WMMA-only loop kernel (wmma_gen/kernels/wmma_loop.py) that stands in for the
published WMMA microbenchmarks in bench/calibrate.py: its main loop is v_wmma plus loop overhead
only, and the model's estimate of its ISA reproduces the model's peak path (source=model)."""
import math
from pathlib import Path

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.kernels.wmma_loop import wmma_loop_mlir
from wmma_gen.model import calibration as C
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.targets import get_target

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("arch,dtype", [("gfx1100", "f16"), ("gfx1151", "i8"), ("gfx1201", "bf16")])
def test_main_loop_is_wmma_and_loop_overhead_only(arch, dtype):
    k = compile_mlir(wmma_loop_mlir(arch, dtype, chains=8, waves=4), arch)
    L = find_main_loop(k.isa).summary()
    assert L["found"] and L["wmma"] == 8
    assert L["valu"] == L["vmem_load"] == L["ds_read"] == L["scratch_load"] == 0 and k.metadata.spills == 0
    assert L["salu"] + L["branch"] <= 3


@pytest.mark.parametrize("arch,dtype", [("gfx1100", "f16"), ("gfx1151", "bf16"), ("gfx1151", "i8"),
                                        ("gfx1201", "bf16")])
def test_estimate_of_the_generated_kernel_reproduces_the_peak_path(arch, dtype, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import calibrate
    t = get_target(arch)
    e = calibrate.estimate_wmma_loop(arch, dtype)
    clock = C.factors(t, "peak").clock_ghz
    assert e.source == "model" and e.limiter == "wmma_issue"
    assert e.tflops == pytest.approx(t.peak_tflops(dtype) * clock / t.boost_ghz, rel=1e-3)
    with C.uncalibrated():
        assert calibrate.estimate_wmma_loop(arch, dtype).tflops == pytest.approx(t.peak_tflops(dtype), rel=1e-3)


def test_unsupported_dtype_is_refused_naming_it():
    with pytest.raises(ValueError, match="dtype='i4'"):
        wmma_loop_mlir("gfx1100", "i4")
    assert not math.isnan(get_target("gfx1100").peak_tflops("f16"))
