"""The default GEMM schedules (defaults.fitted_default, 4096^3) under the loaded MLIR provider:
no spills, every instruction decodable (the listing and the emulator read the same table), and
main-loop density -- v_wmma per issued instruction, model/isa_loop -- at two bars: the mlir-gml
(LLVM 23) figures measured before issue 28 (BASE), and today's mlir-gml figures (MLIR_GML), which
every provider's default must reach (issue 28 item 1: FlyDSL at least mlir-gml in every row).
gfx1151 equals gfx1100 (bench/gemm_static_quality.py). Run under both providers:
WMMA_GEN_MLIR_PROVIDER=flydsl|mlir."""
import re

import pytest

from wmma_gen.compiler import mlir_api
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.defaults import fitted_default
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.defaults import sched_strategy
from wmma_gen.targets import get_target

LAYOUTS = ("NN", "NT", "TN", "TT")
# (arch, dtype, acc) -> density per layout, mlir-gml 0.0.4 (LLVM 23) before issue 28
BASE = {
    ("gfx1100", "f16", "f32"): (0.275, 0.315, 0.251, 0.290),
    ("gfx1100", "i8", "i32"): (0.206, 0.454, 0.184, 0.300),
    ("gfx1100", "i4", "i32"): (0.024, 0.364, 0.012, 0.024),
    ("gfx1201", "f16", "f32"): (0.358, 0.398, 0.322, 0.360),
    ("gfx1201", "fp8", "f32"): (0.228, 0.529, 0.196, 0.383),
    ("gfx1201", "i8", "i32"): (0.228, 0.529, 0.196, 0.383),
    ("gfx1201", "i4", "i32"): (0.043, 0.492, 0.024, 0.043),
}
# (arch, dtype, acc) -> density per layout of mlir-gml 0.0.4 (LLVM 23) today: `python
# bench/gemm_static_quality.py`, 2026-12-04 (results/gemm_static_quality.csv, compiler output), after
# the 8-bit defaults took 64-bit loads. Stored rather than measured in the same run: two MLIR
# native libraries cannot share a process, so measuring mlir-gml here would mean a second
# interpreter compiling every row again (about double this file's time); the mlir-gml run of this
# file checks the table still holds there.
MLIR_GML = {
    ("gfx1100", "f16", "f32"): (0.275, 0.315, 0.251, 0.290),
    ("gfx1100", "i8", "i32"): (0.360, 0.460, 0.315, 0.393),
    ("gfx1100", "i4", "i32"): (0.024, 0.388, 0.012, 0.024),
    ("gfx1201", "f16", "f32"): (0.358, 0.410, 0.323, 0.386),
    ("gfx1201", "fp8", "f32"): (0.416, 0.533, 0.352, 0.457),
    ("gfx1201", "i8", "i32"): (0.416, 0.533, 0.352, 0.457),
    ("gfx1201", "i4", "i32"): (0.044, 0.504, 0.024, 0.044),
}
# LLVM 24 (FlyDSL 0.5) rows below the bar (none since gfx1201 16-bit f32-acc NT/TN take
# iterative-ilp with the epilogue free to interleave: 0.410 / 0.332, defaults.ILP_EXCEPT).
LLVM24_GAPS: set = set()
CASES = [(*key, lay, bar, today) for key, bars in BASE.items()
         for lay, bar, today in zip(LAYOUTS, bars, MLIR_GML[key])]


@pytest.mark.parametrize("arch,dtype,acc,layout,bar,mlir_gml", CASES, ids=["-".join(map(str, c[:4])) for c in CASES])
def test_default_schedule_density_and_no_spills(arch, dtype, acc, layout, bar, mlir_gml):
    d, p = GemmDirective(dtype, acc=acc, layout=layout), GemmProblem(4096, 4096, 4096)
    k = compile_gemm(d, fitted_default(d, get_target(arch), p), arch, p).compiled
    assert k.metadata.spills == 0 and k.metadata.scratch_bytes == 0
    assert not re.findall(r"<[^>]*opcode[^>]*>", k.isa)        # nothing the decoder lacks
    loop = find_main_loop(k.isa)
    density = loop.wmma / loop.issued
    if mlir_api.NAME == "flydsl" and (arch, dtype, acc, layout) in LLVM24_GAPS:
        pytest.xfail(f"LLVM 24 density {density:.3f} < {bar} (see LLVM24_GAPS)")
    assert density >= bar - 5e-4, (density, bar)
    # the figures are rounded to 3 places: half a unit of the last place is the same figure
    assert density >= mlir_gml - 5e-4, f"{mlir_api.NAME}: {density:.4f} below mlir-gml's {mlir_gml}"


def test_scheduler_strategy_reaches_the_llvm_function():
    """iterative-ilp for a staged 8-bit default, none for gfx11 16-bit (it spilled there), and
    the attribute is llvm.func's own `passthrough` after lowering under either provider."""
    from wmma_gen.compiler.compile import lower
    from wmma_gen.ops.gemm.kernel import build_gemm
    from wmma_gen.ops.gemm.signature import spec_key
    t, p = get_target("gfx1100"), GemmProblem(4096, 4096, 4096)
    i8 = GemmDirective("i8", acc="i32", layout="NT")
    f16 = GemmDirective("f16", layout="NT")
    assert sched_strategy(f16, fitted_default(f16, t, p), t) is None
    s = fitted_default(i8, t, p)
    assert sched_strategy(i8, s, t) == "iterative-ilp"
    # other tiles (tuned, shipped) keep LLVM's default scheduler: iterative-ilp spilled there
    assert sched_strategy(i8, s.replace(block_n=64, waves_n=2), t) is None
    lowered = lower(build_gemm(i8, s, t, spec_key(i8, s, p.as_dict())).mlir, "gfx1100")
    func = next(ln for ln in lowered.splitlines() if "llvm.func @wmma_gemm" in ln)
    assert 'passthrough = [["amdgpu-sched-strategy", "iterative-ilp"]]' in func
    assert "llvm.passthrough" not in func
