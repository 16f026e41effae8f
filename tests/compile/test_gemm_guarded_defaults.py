"""Fitted GEMM defaults at sizes that are not tile multiples (row, column and depth guards) and
with split-K compile without spills under the loaded MLIR provider: they keep LLVM's default
scheduler and the sched_barrier before the epilogue (ops/gemm/kernel._double_buffered). These
spilled 8-53 VGPRs when the barrier was dropped for every kernel (compiler output, mlir-gml)."""
import pytest

from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.defaults import fitted_default, sched_strategy
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.signature import spec_key
from wmma_gen.targets import get_target

CASES = [("gfx1100", "f16", "TT", 1000, 1), ("gfx1201", "f16", "NT", 1000, 1), ("gfx1201", "bf16", "TT", 1000, 1),
         ("gfx1201", "bf16", "NT", (256, 256, 4096), 4)]


@pytest.mark.parametrize("arch,dtype,layout,size,split_k", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-sk{c[4]}" for c in CASES])
def test_guarded_and_split_k_defaults_do_not_spill(arch, dtype, layout, size, split_k):
    m, n, k = size if isinstance(size, tuple) else (size,) * 3
    d, p = GemmDirective(dtype, acc="f32", layout=layout), GemmProblem(m, n, k)
    t = get_target(arch)
    s = fitted_default(d, t, p).replace(split_k=split_k)
    assert sched_strategy(d, s, t, spec_key(d, s, p.as_dict())) is None
    md = compile_gemm(d, s, arch, p).compiled.metadata
    assert md.spills == 0 and md.scratch_bytes == 0, (md.vgpr_count, md.vgpr_spill_count)


def test_full_tiles_keep_iterative_ilp():
    """The same gfx1201 default at 4096^3 (no guards) stays on iterative-ilp."""
    d, p = GemmDirective("f16", acc="f32", layout="NT"), GemmProblem(4096, 4096, 4096)
    t = get_target("gfx1201")
    s = fitted_default(d, t, p)
    assert sched_strategy(d, s, t, spec_key(d, s, p.as_dict())) == "iterative-ilp"
