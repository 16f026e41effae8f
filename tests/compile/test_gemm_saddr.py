"""GEMM global accesses use the FLAT-global SADDR form (kernels/globalmem.py): a uniform 64-bit
base in SGPRs plus a 32-bit per-lane VGPR offset (RDNA3 ISA guide ch. 10, SADDR), so the
main loop carries no 64-bit per-lane address arithmetic and its density is at least that of
the compile-time-shape kernels (issue #10 "Keep: the static quality")."""
import re

import pytest

from wmma_gen.model.isa_loop import find_main_loop, kernel_lines
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.defaults import fitted_default
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.targets import get_target

# v_wmma per main-loop instruction of the default schedule with compile-time shapes
# (README, bench/gemm_static_quality.py before sizes became kernel arguments); bar: -3%
STATIC = {("gfx1100", "NT"): 0.266, ("gfx1100", "NN"): 0.211, ("gfx1100", "TN"): 0.193,
          ("gfx1201", "NT"): 0.322, ("gfx1201", "NN"): 0.311, ("gfx1201", "TN"): 0.286}
SADDR = re.compile(r"^global_(load|store)_\w+ .*, s\[\d+:\d+\]")
WIDE_ADDRESS = ("v_lshlrev_b64", "v_add_co_u32", "v_add_co_ci_u32", "v_mad_co_u64_u32", "v_mad_u64_u32")
P4096 = GemmProblem(4096, 4096, 4096)


@pytest.mark.parametrize("arch,layout", sorted(STATIC))
def test_default_schedule_addresses_with_sgpr_base(arch, layout):
    d = GemmDirective("f16", layout=layout)
    s = fitted_default(d, get_target(arch), P4096)
    k = compile_gemm(d, s, arch, P4096).compiled
    assert k.metadata.spills == 0 and k.metadata.scratch_bytes == 0
    lines = kernel_lines(k.isa)
    mem = [ln for ln in lines if ln.startswith(("global_load", "global_store"))]
    assert mem and all(SADDR.match(ln) for ln in mem), [ln for ln in mem if not SADDR.match(ln)][:3]
    assert not [ln for ln in lines if ln.startswith(WIDE_ADDRESS)]
    loop = find_main_loop(k.isa)
    assert loop.wmma / len(loop.ops) >= 0.97 * STATIC[(arch, layout)]


def test_gfx1201_default_unrolls_two_k_tiles():
    d = GemmDirective("f16", layout="NN")
    assert fitted_default(d, get_target("gfx1201"), P4096).k_unroll == 2


@pytest.mark.parametrize("layout", ["NN", "TT"])
def test_direct_fragment_loads_use_sgpr_base(layout):
    """64x64 tile, one wave, every fragment straight from global memory (the layout that
    spilled 155 VGPRs with 64-bit per-lane addresses)."""
    from wmma_gen.ops.gemm.schedule import Schedule
    s = Schedule(block_m=64, block_n=64, block_k=32, waves_m=1, waves_n=1, lds="none", load_bits=128)
    k = compile_gemm(GemmDirective("f16", layout=layout), s, "gfx1100", P4096).compiled
    mem = [ln for ln in kernel_lines(k.isa) if ln.startswith(("global_load", "global_store"))]
    assert mem and all(SADDR.match(ln) for ln in mem)
    assert k.metadata.spills == 0
