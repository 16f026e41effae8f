"""codeobj/listing.py: the ISA listing decoded from a code object is LLVM assembly for the
whole code object.

Where an llvm-mc that knows the target is installed (Debian's llvm-19 or llvm-22; CI installs
llvm-22; probed by assembling one v_wmma of the target with empty stderr, so an older LLVM such
as llvm-14, which knows neither gfx1100 nor gfx1201, skips with the reason), the listing of real kernels is assembled again, linked with the project's ld.lld,
and the rebuilt code object has the same instructions, the same code padding, the same
kernel descriptor and the same metadata: what `wmma-gen compile --out` writes to kernel.s is
a source a kernel engineer can edit and rebuild. (Instruction bytes may differ where two LLVM
versions encode an unused field differently, e.g. the src2 of a two-source VOP3 -- so the
check compares decoded instructions, not bytes.)"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.codeobj.listing import waitcnt_text
from wmma_gen.compiler.toolchain import find_linker
from wmma_gen.codeobj import decode, load_code_object
from wmma_gen.targets import get_target


# one WMMA per family, as the listings hold them: an llvm-mc that only knows the processor name
# (llvm-14 says "not a recognized processor" and still assembles s_endpgm) must not pass
PROBE = {"gfx11": "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\n",
         "gfx12": "v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]\n"}
_found: dict = {}


def _llvm_mc(arch: str) -> tuple[str | None, str]:
    """(an installed llvm-mc that assembles a WMMA for `arch` with empty stderr, "") or
    (None, why each candidate was rejected)."""
    if arch in _found:
        return _found[arch]
    why = []
    candidates = sorted(glob.glob("/usr/lib/llvm-*/bin/llvm-mc"), reverse=True) + [shutil.which("llvm-mc") or ""]
    for mc in dict.fromkeys(os.path.realpath(c) for c in candidates if c):
        try:
            probe = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-show-encoding"],
                                   input=PROBE[get_target(arch).family], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            why.append(f"{mc}: {e}")
            continue
        if probe.returncode == 0 and not probe.stderr.strip():
            _found[arch] = (mc, "")
            return _found[arch]
        first = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[0]
        why.append(f"{mc}: {first}")
    _found[arch] = (None, "; ".join(why) or "no llvm-mc on PATH or in /usr/lib/llvm-*/bin")
    return _found[arch]


def _kernels():
    from wmma_gen.ops.attention.defaults import default_schedule as attention_default
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.attention.kernel import build_attention
    from wmma_gen.ops.gemm import default_schedule
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    d, p = GemmDirective("f16"), GemmProblem(4096, 4096, 4096)
    a = AttentionDirective("f16", 128)
    yield "gemm-gfx1100", lambda: compile_gemm(d, default_schedule(d, "gfx1100", p), "gfx1100", p).compiled
    yield "gemm-gfx1201", lambda: compile_gemm(d, default_schedule(d, "gfx1201", p), "gfx1201", p).compiled
    for arch in ("gfx1100", "gfx1201"):
        t = get_target(arch)
        yield f"attention-{arch}", lambda t=t: compile_mlir(build_attention(a, attention_default(t, a), t).mlir, t.arch)


# gfx12 VOPD may read the same VGPR in the same source slot of both halves (llvm/llvm-project#196198,
# "The hardware allows this", GCNVOPDUtils.cpp AllowSameVGPR = hasGFX12Insts()); LLVM 24 emits such
# pairs, but assemblers before llvm/llvm-project#198034 (2026-05, after Debian's llvm-22) reject them
# with this message, so for those lines the test assembles the listed encoding bytes instead
SAME_VGPR_VOPD = "operands must use different VGPR banks"


def _same_vgpr_slots_only(line: str, family: str) -> bool:
    """The line's VOPD (decoded from its `; pc: hex` comment) has, in every source slot whose two
    VGPRs share a bank (index mod 4, AMDGPUBaseInfo VOPD_VGPR_BANK_MASKS), the same VGPR."""
    (ins,), _ = decode(bytes.fromhex(line.rsplit(":", 1)[1].strip()), family)
    if ins.pair is None:
        return False
    pairs = list(zip(ins.operands[1:], ins.pair.operands[1:]))
    clash = [(x, y) for x, y in pairs if x.kind == y.kind == "v" and x.index % 4 == y.index % 4]
    return bool(clash) and all(x.index == y.index for x, y in clash)


def _assemble(mc, arch, text, tmp_path):
    (tmp_path / "kernel.s").write_text(text)
    return subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj",
                           str(tmp_path / "kernel.s"), "-o", str(tmp_path / "kernel.o")], capture_output=True, text=True)


def _rebuild(k, tmp_path) -> bytes:
    mc, why = _llvm_mc(k.arch)
    if mc is None:
        pytest.skip(f"no llvm-mc assembles a {k.arch} v_wmma ({why}); install Debian's llvm-19 or llvm-22")
    r = _assemble(mc, k.arch, k.isa, tmp_path)
    family = get_target(k.arch).family
    if r.returncode and family == "gfx12":
        lines = k.isa.split("\n")
        rejected = {int(e.split(":")[1]) - 1 for e in r.stderr.splitlines() if SAME_VGPR_VOPD in e}
        errors = [e for e in r.stderr.splitlines() if ": error: " in e]
        if rejected and len(errors) == len(rejected):
            for n in rejected:
                assert _same_vgpr_slots_only(lines[n], family), f"a real VOPD bank clash: {lines[n]}"
                code = bytes.fromhex(lines[n].rsplit(":", 1)[1].strip())
                lines[n] = "\t.byte " + ", ".join(f"{b:#04x}" for b in code) + " ; " + lines[n].strip()
            r = _assemble(mc, k.arch, "\n".join(lines), tmp_path)
    assert r.returncode == 0, r.stderr[:2000]
    r = subprocess.run(list(find_linker().command) + ["-shared", str(tmp_path / "kernel.o"), "-o",
                                                      str(tmp_path / "kernel.hsaco")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]
    return (tmp_path / "kernel.hsaco").read_bytes()


@pytest.mark.parametrize("name,make", list(_kernels()), ids=[n for n, _ in _kernels()])
def test_listing_rebuilds_the_same_code_object(name, make, tmp_path):
    arch = name.split("-")[-1]
    if _llvm_mc(arch)[0] is None:      # before compiling: the skip costs nothing
        pytest.skip(f"no llvm-mc assembles a {arch} v_wmma ({_llvm_mc(arch)[1]}); install Debian's llvm-19 or llvm-22")
    k = make()
    original, again = load_code_object(k.hsaco), load_code_object(_rebuild(k, tmp_path))
    assert (again.arch, again.features) == (original.arch, original.features)
    (a,) = original.kernels.values()
    b = again.kernels[a.name]
    family = get_target(k.arch).family
    want, _ = decode(a.code, family, k.name, a.code_address)
    got, _ = decode(b.code, family, k.name, b.code_address)
    assert [i.text for i in got] == [i.text for i in want]
    assert a.tail and b.tail == a.tail                                 # the s_code_end padding
    # every descriptor field but the entry offset (bytes 16-23, the linker's layout)
    assert b.descriptor[:16] + b.descriptor[24:] == a.descriptor[:16] + a.descriptor[24:]
    assert again.metadata == original.metadata


def test_descriptor_directives_cover_every_field_we_set():
    """The directive list differs from LLVM's assembler input only in what GFX11/12 has no
    directive for: a descriptor with every such field nonzero keeps those values."""
    from wmma_gen.codeobj.listing import directives
    desc = bytearray(64)
    desc[44:48] = (0x3 | 17 << 4).to_bytes(4, "little")                # rsrc3: shared_vgpr_count 3, inst_pref_size 17
    desc[52:56] = ((1 << 24) | (1 << 30) | (14 << 1)).to_bytes(4, "little")
    got = dict(directives(bytes(desc), "gfx11", {".sgpr_count": 42}))
    assert got["shared_vgpr_count"] == 3 and got["inst_pref_size"] == 17 and got["user_sgpr_count"] == 14
    assert got["exception_fp_ieee_invalid_op"] == 1 and got["exception_int_div_zero"] == 1
    assert got["exception_fp_denorm_src"] == 0 and got["next_free_sgpr"] == 42
    assert "compute_pgm_rsrc1" not in got and "kernel_code_entry_byte_offset" not in got
    g12 = dict(directives(bytes(desc), "gfx12", {}))
    assert "shared_vgpr_count" not in g12 and "dx10_clamp" not in g12 and g12["inst_pref_size"] == 17


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
    # LLVM 24's attention kernel (fmul as fma with -0); llvm-objdump 22 prints these bytes so.
    # `-0` would read back as the constant 0 with neg_lo dropped, so a constant is neg(c)
    ("43 00 21 cc 06 bd 02 82", "v_fma_mixlo_f16 v67, v6, v94, neg(0)"),
    ("00 04 20 cc 01 05 ca 83", "v_fma_mix_f32 v0, v1, v2, -|1.0|"),
])
def test_mix_neg_and_abs_are_written_on_the_operands(encoding, text):
    from wmma_gen.codeobj.listing import _text
    from wmma_gen.emu.decode.asm import parse_instruction
    (ins,), _ = decode(bytes.fromhex(encoding.replace(" ", "")), "gfx11")
    assert _text(ins, "gfx11") == text
    # the text parser (what an edited kernel.s runs through) reads the same signs back
    want = [(bool(n), bool(a)) for n, a in zip(ins.mods["neg_lo"], ins.mods["neg_hi"])]
    assert [(o.neg, o.abs) for o in parse_instruction(text).operands[1:]] == want


@pytest.mark.parametrize("encoding,text", [
    # llvm-mc 22 -mcpu=gfx1100 -show-encoding of these lines (AMDGPUInstPrinter prints a negated
    # constant without abs as neg(c): `-0` is the constant 0, `-0.5` the inline constant -0.5)
    ("00 00 13 d6 01 05 02 82", "v_fma_f32 v0, v1, v2, neg(0)"),
    ("00 04 13 d6 01 e1 09 c4", "v_fma_f32 v0, v1, neg(0.5), -|v2|"),
])
def test_vop3_negated_constant_is_printed_as_neg(encoding, text):
    from wmma_gen.emu.decode.asm import parse_instruction
    (ins,), _ = decode(bytes.fromhex(encoding.replace(" ", "")), "gfx11")
    assert ins.text == text
    assert [(o.neg, o.abs) for o in parse_instruction(text).operands] == [(o.neg, o.abs) for o in ins.operands]
