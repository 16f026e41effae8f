"""Model on real compiled kernels: the main loop holds the v_wmma count the schedule implies.

LLVM may unroll a short K loop (x2, x4): then the loop holds implied*u WMMAs; a
double-buffered kernel peels its last tile out of the loop. Either way the WMMAs outside the
loop are whole iterations and the rest is a whole number of loop trips (conservation law
below); schedules with >= 16 WMMAs per iteration are not unrolled and match exactly."""
import pytest

from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.model import find_main_loop
from wmma_gen.ops.gemm.model import estimate
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target

K = 512
P = GemmProblem(128, 128, K)
CASES = [
    ("gfx1100", "f16", Schedule(block_k=64)),                                             # 2x2x4 = 16
    ("gfx1100", "f16", Schedule(block_m=128, lds="ab", buffers=2, lds_pad=8)),            # 4x2x2 = 16
    ("gfx1100", "i8", Schedule(block_m=64, block_n=128, waves_m=1, waves_n=4, lds="b", buffers=2)),  # 4x2x2
    ("gfx1201", "f16", Schedule(block_m=128, block_n=128, lds="ab", buffers=2, lds_pad=8)),  # 4x4x2 = 32
    ("gfx1201", "f16", Schedule()),                                                       # 8, may unroll
    ("gfx1100", "f16", Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=1)),  # 4, may unroll
]


def _kernel(arch, dtype, s):
    d = GemmDirective(dtype, layout="NT")
    return d, compile_gemm(d, s, arch, P)


@pytest.mark.parametrize("arch,dtype,s", CASES)
def test_loop_wmma_count_matches_schedule(arch, dtype, s):
    d, k = _kernel(arch, dtype, s)
    ins = get_target(arch).instr(dtype, d.acc)
    implied = s.frags_m * s.frags_n * s.block_k // ins.k
    L = find_main_loop(k.compiled.isa)
    assert L.found
    if implied >= 16:
        assert L.wmma == implied
    unroll, rem = divmod(L.wmma, implied)
    assert rem == 0 and unroll in (1, 2, 4, 8)
    trips = K // s.block_k
    outside = sum(o.kind == "wmma" for o in L.outside)
    assert outside % implied == 0 and outside // implied <= unroll      # peeled whole iterations
    loop_trips, left = divmod(implied * trips - outside, L.wmma)
    assert left == 0 and loop_trips >= trips // unroll - 1


@pytest.mark.parametrize("arch,dtype,s", CASES[:4])
def test_estimate_on_compiled_kernel(arch, dtype, s):
    d, k = _kernel(arch, dtype, s)
    t = get_target(arch)
    e = estimate(k, d, s, t, P)
    assert e.source == "model" and 0 < e.tflops <= t.peak_tflops(dtype)
    f = e.figures
    assert f["occupancy"]["vgprs"] == k.compiled.metadata.vgpr_count
    assert f["loop"]["global_load_widths"]                    # the loop streams operands
    if s.lds != "none":
        assert f["loop"]["ds_read"] > 0 and f["loop"]["barrier"] > 0
    if s.lds_pad == 8 and dtype == "f16":
        assert f["lds_conflicts"]["ds_read"]["degree"] == 1.0


def test_unpadded_lds_reads_conflict_on_gfx11():
    s = Schedule(block_m=128, lds="ab", buffers=2, lds_pad=0)
    d, k = _kernel("gfx1100", "f16", s)
    e = estimate(k, d, s, "gfx1100", P)
    assert e.figures["lds_conflicts"]["ds_read"]["degree"] == 4.0
