"""The grid-filling default (issue 38, defaults.grid_filling_base): where the 128x256 default
would leave more than a quarter of the CU-rounds idle, the fitted default takes a block of the
same 4x4-fragment wave tile with fewer waves. Those kernels, run on the emulator, match numpy."""
import pytest

from wmma_gen.ops.gemm import fit_schedule
from wmma_gen.ops.gemm.check import check_gemm
from wmma_gen.ops.gemm.defaults import FILL, LARGE, grid_fill
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.targets import get_target

# 256x256: LARGE runs 2 workgroups, 128x128 four; 200x260 guards every edge (LARGE 4 workgroups,
# 64x256 eight)
CASES = [("gfx1100", "f16", "NN", (256, 256, 64)), ("gfx1100", "i8", "TT", (200, 260, 96)),
         ("gfx1201", "f16", "NT", (200, 260, 96)), ("gfx1201", "i8", "TN", (256, 256, 64))]


@pytest.mark.parametrize("arch, dtype, layout, shape", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_grid_filling_default_matches_numpy(arch, dtype, layout, shape):
    d, p = GemmDirective(dtype, layout=layout), GemmProblem(*shape)
    s = fit_schedule(d, arch, p)
    assert (s.block_m, s.block_n, s.waves_m, s.waves_n) in {(f.block_m, f.block_n, f.waves_m, f.waves_n) for f in FILL}, s
    assert (s.frags_m, s.frags_n) == (LARGE.frags_m, LARGE.frags_n) == (4, 4)
    assert grid_fill(get_target(arch), p, s) > grid_fill(get_target(arch), p, LARGE)
    r = check_gemm(d, s, arch, p, "emu")
    assert r.source == "emulator"
    assert r.passed, r
    if d.is_int:
        assert r.max_abs == 0.0
