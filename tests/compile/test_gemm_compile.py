"""Every arch x supported dtype/acc compiles to a loadable AMDGPU code object."""
import re
import struct

import pytest

from wmma_gen.compiler import toolchain
from wmma_gen.codeobj.codeobject import ELFOSABI_AMDGPU_HSA, EM_AMDGPU, ET_DYN, load_code_object
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import TARGETS

CASES = [(arch, dt, acc) for arch, t in TARGETS.items() for (dt, acc) in t.wmma]


@pytest.fixture(scope="module")
def compiled():
    cache = {}

    def get(arch, dt, acc):
        key = (arch, dt, acc)
        if toolchain.chip_problem(arch):   # e.g. gfx1171 under mlir-gml's LLVM 23: tests/compile/test_targets_new.py
            pytest.skip(f"the loaded MLIR provider's LLVM does not know {arch}: {toolchain.chip_problem(arch)}")
        if key not in cache:
            d = GemmDirective(dt, acc=acc)
            cache[key] = compile_gemm(d, Schedule(block_m=64, block_n=64, block_k=32), arch, GemmProblem(64, 64, 64))
        return cache[key]
    return get


@pytest.mark.parametrize("arch,dtype,acc", CASES, ids=[f"{a}-{d}-{c}" for a, d, c in CASES])
def test_compiles_with_expected_wmma(compiled, arch, dtype, acc):
    k = compiled(arch, dtype, acc).compiled
    expected = TARGETS[arch].instr(dtype, acc).mnemonic
    found = set(re.findall(r"^\s*(v_wmma_\w+)", k.isa, re.M))
    assert found == {expected}
    # 64x64 tile, 2x2 waves -> 2x2 fragments per wave, block_k 32 -> 2 K steps: 8 per loop body
    assert len(re.findall(r"^\s*v_wmma_", k.isa, re.M)) % 8 == 0


@pytest.mark.parametrize("arch,dtype,acc", CASES, ids=[f"{a}-{d}-{c}" for a, d, c in CASES])
def test_hsaco_is_amdgpu_elf_for_chip(compiled, arch, dtype, acc):
    k = compiled(arch, dtype, acc).compiled
    info = load_code_object(k.hsaco)      # refuses any e_machine but EM_AMDGPU
    assert struct.unpack_from("<H", k.hsaco, 18)[0] == EM_AMDGPU == 224
    assert info.e_type == ET_DYN
    assert info.osabi == ELFOSABI_AMDGPU_HSA
    assert info.mach == TARGETS[arch].elf_mach
    assert info.metadata["amdhsa.target"].endswith(arch)


@pytest.mark.parametrize("arch,dtype,acc", CASES, ids=[f"{a}-{d}-{c}" for a, d, c in CASES])
def test_metadata_parses_without_spills(compiled, arch, dtype, acc):
    m = compiled(arch, dtype, acc).compiled.metadata
    assert m.spills == 0 and m.scratch_bytes == 0
    assert m.wavefront_size == 32
    assert 0 < m.vgpr_count <= 256
    # A, B, C pointers, then 10 i32 sizes/strides (M N K batch, (batch,row) strides of A B C)
    explicit = [a for a in m.args if not a.kind.startswith("hidden_")]
    assert [a.kind for a in explicit] == ["global_buffer"] * 3 + ["by_value"] * 10
    assert [a.offset for a in explicit] == [0, 8, 16] + [24 + 4 * i for i in range(10)]
    assert m.max_flat_workgroup_size == 128


def test_isa_agrees_with_hsaco_metadata(compiled):
    k = compiled("gfx1100", "f16", "f32").compiled
    vgpr = int(re.search(r"\.vgpr_count:\s+(\d+)", k.isa).group(1))
    assert vgpr == k.metadata.vgpr_count
