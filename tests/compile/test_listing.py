"""compiler/listing.py: the ISA listing decoded from a code object is valid LLVM assembly.

Where an llvm-mc that knows the target is installed (Debian's llvm-19 or llvm-22), the
instruction part of the listing of real kernels is assembled again and the result decodes to
the same instructions: what `wmma-gen compile --out` writes to kernel.s is assembly LLVM
reads back, not just text that looks like it. (The bytes may differ where two LLVM versions
encode an unused field differently, e.g. the src2 of a two-source VOP3 -- so the check
compares decoded instructions, not bytes.)"""
from __future__ import annotations

import glob
import shutil
import subprocess

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.compiler.listing import waitcnt_text
from wmma_gen.emu.decode import decode, load_code_object
from wmma_gen.targets import get_target


def _tools(arch: str):
    """(llvm-mc, llvm-objcopy) of an installed LLVM that assembles for `arch`, else None."""
    for mc in sorted(glob.glob("/usr/lib/llvm-*/bin/llvm-mc"), reverse=True) + [shutil.which("llvm-mc") or ""]:
        objcopy = mc.replace("llvm-mc", "llvm-objcopy")
        if not mc or not shutil.which(objcopy):
            continue
        probe = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-show-encoding"],
                               input="s_endpgm\n", capture_output=True, text=True)
        if probe.returncode == 0 and "error" not in probe.stderr:
            return mc, objcopy
    return None


def _kernels():
    from wmma_gen.ops.attention.defaults import default_schedule as attention_default
    from wmma_gen.ops.attention.directive import AttentionDirective
    from wmma_gen.ops.attention.kernel import build_attention
    from wmma_gen.ops.gemm import default_schedule
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    d = GemmDirective("f16", 4096, 4096, 4096)
    a, t = AttentionDirective("f16", 128), get_target("gfx1100")
    yield "gemm-gfx1100", lambda: compile_gemm(d, default_schedule(d, "gfx1100"), "gfx1100").compiled
    yield "gemm-gfx1201", lambda: compile_gemm(d, default_schedule(d, "gfx1201"), "gfx1201").compiled
    yield "attention-gfx1100", lambda: compile_mlir(build_attention(a, attention_default(t, a), t).mlir, "gfx1100")


@pytest.mark.parametrize("name,make", list(_kernels()), ids=[n for n, _ in _kernels()])
def test_listing_reassembles_to_the_same_instructions(name, make, tmp_path):
    k = make()
    tools = _tools(k.arch)
    if tools is None:
        pytest.skip(f"no llvm-mc that assembles {k.arch} (install Debian's llvm-19 or llvm-22)")
    mc, objcopy = tools
    text_part = k.isa[:k.isa.index("\t.rodata")]                 # instructions and labels
    (tmp_path / "k.s").write_text(text_part + "\n")
    r = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={k.arch}", "-filetype=obj",
                        str(tmp_path / "k.s"), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]
    subprocess.run([objcopy, "-O", "binary", "--only-section=.text", str(tmp_path / "k.o"), str(tmp_path / "t.bin")],
                   check=True)
    (kernel,) = load_code_object(k.hsaco).kernels.values()
    family = get_target(k.arch).family
    original, _ = decode(kernel.code, family, k.name, kernel.code_address)
    again, _ = decode((tmp_path / "t.bin").read_bytes()[:len(kernel.code)], family, k.name, kernel.code_address)
    assert [i.text for i in again] == [i.text for i in original]


@pytest.mark.parametrize("simm16,text", [
    (0xFC07, "s_waitcnt lgkmcnt(0)"),                 # LLVM's text of the one-WMMA kernel, same bits
    (0x03F7, "s_waitcnt vmcnt(0)"),
    (0x0007, "s_waitcnt vmcnt(0) lgkmcnt(0)"),
    (0x0C77, "s_waitcnt vmcnt(3) lgkmcnt(7)"),
    (0xFFFF, "s_waitcnt vmcnt(63) expcnt(7) lgkmcnt(63)"),   # nothing waited on: LLVM prints all three
])
def test_gfx11_waitcnt_is_spelled_as_llvm_prints_it(simm16, text):
    assert waitcnt_text(simm16) == text


@pytest.mark.parametrize("encoding,text", [
    # encodings printed by Debian llvm-mc 22 (-mcpu=gfx1100 -show-encoding) for these very lines
    ("00 02 20 cc 01 05 0e 24", "v_fma_mix_f32 v0, -v1, |v2|, v3"),
    ("05 45 21 cc 01 05 0e 9c", "v_fma_mixlo_f16 v5, |v1|, v2, -|v3| op_sel_hi:[1,1,1]"),
])
def test_mix_neg_and_abs_are_written_on_the_operands(encoding, text):
    from wmma_gen.compiler.listing import _text
    (ins,), _ = decode(bytes.fromhex(encoding.replace(" ", "")), "gfx11")
    assert _text(ins, "gfx11") == text
