"""8-bit GEMM defaults load 64 bits per lane (defaults.fitted_default): an operand stored across K
then reaches LDS as byte pairs (v_perm_b32 + ds_store_b16), never as single bytes (ds_store_b8),
and the main loop issues fewer instructions than with 128-bit loads. Compiler output under the
loaded MLIR provider (both: WMMA_GEN_MLIR_PROVIDER=flydsl|mlir)."""
import pytest

from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.defaults import fitted_default
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.targets import get_target

CASES = [("gfx1100", "i8", "i32", "TT"), ("gfx1201", "fp8", "f32", "TT"), ("gfx1201", "bf8", "f32", "TN")]


def _loop(arch, d, s, p):
    k = compile_gemm(d, s, arch, p).compiled
    assert k.metadata.spills == 0
    return find_main_loop(k.isa)


@pytest.mark.parametrize("arch,dtype,acc,layout", CASES, ids=["-".join(c) for c in CASES])
def test_8bit_default_stages_byte_pairs(arch, dtype, acc, layout):
    d, p = GemmDirective(dtype, acc=acc, layout=layout), GemmProblem(4096, 4096, 4096)
    s = fitted_default(d, get_target(arch), p)
    assert s.load_bits == 64
    loop = _loop(arch, d, s, p)
    names = [op.mnemonic for op in loop.ops]
    assert not [n for n in names if n.startswith("ds_store_b8")], names
    assert any(n.startswith("ds_store_b16") for n in names)
    wide = _loop(arch, d, s.replace(load_bits=128), p)
    assert loop.wmma == wide.wmma
    assert loop.issued < wide.issued, (loop.issued, wide.issued)
