"""Static quality of the compiled main loop (issue 4), read from the ISA; no timing."""
import pytest

from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

QUALITY = Schedule(block_m=128, block_n=128, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2, lds_pad=8)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1151"])
@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_double_buffered_128x128x32_main_loop(arch, layout):
    k = compile_gemm(GemmDirective("f16", layout=layout), QUALITY, arch, GemmProblem(4096, 4096, 4096)).compiled
    assert k.metadata.spills == 0 and k.metadata.scratch_bytes == 0
    loop = find_main_loop(k.isa)
    assert loop.found
    assert set(loop.widths("vmem_load")) == {128}           # only 128-bit global loads
    assert set(loop.widths("ds_read")) <= {64, 128}          # wide LDS fragment reads
    # each wave owns 4x4 tiles and BK/16 = 2 K steps: 32 WMMA per K tile per wave
    assert loop.wmma >= 16 and loop.wmma % 32 == 0
    assert k.metadata.lds_bytes == 2 * (128 + 128) * (32 + 8) * 2


def test_default_large_schedule_keeps_the_prefetch_ahead_of_the_wmmas():
    from wmma_gen.ops.gemm.defaults import LARGE
    k = compile_gemm(GemmDirective("f16", layout="NT"), LARGE, "gfx1100", GemmProblem(4096, 4096, 4096)).compiled
    lines = [ln.strip() for ln in k.isa.splitlines()]
    first_wmma = next(i for i, ln in enumerate(lines) if ln.startswith("v_wmma"))
    # the sched_barrier after the prefetch keeps global loads above the first WMMA of the loop
    loop = find_main_loop(k.isa)
    assert loop.count("vmem_load") > 0 and k.metadata.spills == 0
    assert any(ln.startswith("global_load") for ln in lines[:first_wmma])
