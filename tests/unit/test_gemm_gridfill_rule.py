"""defaults.grid_filling_base (issue 38): which problems leave the 128x256 default's grid idle
enough to take a smaller block of the same wave tile (targets.py CU counts: gfx1100 96,
gfx1151 40, gfx1201 64)."""
import dataclasses

import pytest

from wmma_gen.ops.gemm.defaults import FILL, LARGE, fitted_default, grid_filling_base
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.targets import get_target


@pytest.mark.parametrize("arch, n, fills", [
    ("gfx1100", 1024, True),    # 32 workgroups for 96 CUs
    ("gfx1100", 2048, True),    # 128: second round a third full
    ("gfx1100", 4096, False),   # 512: 5.33 rounds, 11% idle
    ("gfx1151", 1024, False),   # 32 on 40 CUs; 128x128 gives 64 on 40: no better
    ("gfx1201", 1024, True),    # 32 on 64
    ("gfx1201", 2048, False)])  # 128 on 64: full rounds
def test_which_problems_fill_the_grid(arch, n, fills):
    base = grid_filling_base(get_target(arch), GemmProblem(n, n, n))
    assert (base is not LARGE) == fills
    assert (base.frags_m, base.frags_n) == (LARGE.frags_m, LARGE.frags_n)


def test_every_fill_block_keeps_the_wave_tile():
    assert all((s.frags_m, s.frags_n, s.block_k) == (LARGE.frags_m, LARGE.frags_n, LARGE.block_k) for s in FILL)
    assert all(s.waves_m * s.waves_n < LARGE.waves_m * LARGE.waves_n for s in FILL)


def test_unknown_cu_count_and_explicit_base_keep_large():
    t = get_target("gfx1100")
    assert grid_filling_base(dataclasses.replace(t, cus=None), GemmProblem(1024, 1024, 1024)) is LARGE
    s = fitted_default(GemmDirective("f16"), t, GemmProblem(1024, 1024, 1024), LARGE)
    assert (s.block_m, s.block_n) == (128, 256)
