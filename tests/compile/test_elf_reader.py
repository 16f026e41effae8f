"""wmma_gen's one ELF reader (codeobj/codeobject.py) as the compiler and the HIP device use
it: the facts of a linked code object, and a clear error -- never an IndexError or
struct.error -- for every truncation and for an ELF that is not an AMDGPU code object."""
from __future__ import annotations

import struct

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.compiler.metadata import read_metadata
from wmma_gen.codeobj.codeobject import ELFOSABI_AMDGPU_HSA, ET_DYN, CodeObjectError, load_code_object
from wmma_gen.errors import CompileError
from wmma_gen.targets import get_target

from test_compile_once import ONE_WMMA


@pytest.fixture(scope="module")
def obj() -> bytes:
    return compile_mlir(ONE_WMMA, "gfx1100", cache=False).hsaco


def test_linked_object_facts(obj):
    co = load_code_object(obj)
    assert co.e_type == ET_DYN and co.osabi == ELFOSABI_AMDGPU_HSA
    assert co.mach == get_target("gfx1100").elf_mach and co.arch == "gfx1100"
    assert {".text", ".rodata", ".note"} <= set(co.sections)
    (name, kernel), = co.kernels.items()
    assert name == "one_wmma" and len(kernel.descriptor) == 64 and len(kernel.code) % 4 == 0
    assert read_metadata(obj).name == "one_wmma" and read_metadata(obj).vgpr_count > 0


@pytest.mark.parametrize("keep", [3, 40, 63, 100, 1000, -200, -1])
def test_truncated_object_is_a_clear_error(obj, keep):
    cut = obj[:keep]
    with pytest.raises(CodeObjectError, match="truncated|not an ELF"):
        load_code_object(cut)
    with pytest.raises(CompileError, match="cannot be read"):    # the compiler names it its own way
        read_metadata(cut)


def test_non_amdgpu_elf_names_the_machine(obj):
    x86 = bytearray(obj)
    struct.pack_into("<H", x86, 18, 62)                       # EM_X86_64
    with pytest.raises(CodeObjectError, match="e_machine=62 is not allowed"):
        load_code_object(bytes(x86))


def test_bad_section_header_size_is_refused(obj):
    bad = bytearray(obj)
    struct.pack_into("<H", bad, 58, 16)                       # e_shentsize smaller than an ELF64 header
    with pytest.raises(CodeObjectError, match="e_shentsize=16"):
        load_code_object(bytes(bad))
