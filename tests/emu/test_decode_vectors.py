"""The decoder against LLVM's MC disassembler test vectors: each row is (family, bytes, the text
LLVM prints), copied from llvm-project llvm/test/MC/Disassembler/AMDGPU/ (file named per row).
The decoded instruction must equal the parsed expected text (same canonical form as the
cross-check: true16 halves, omitted defaults and cache-policy bits aside)."""
from __future__ import annotations

import pytest

from test_decode_crosscheck import canonical
from wmma_gen.emu.decode.asm import parse_instruction
from wmma_gen.codeobj import decode

SOP2 = "gfx11_dasm_sop2.txt"
VOP3 = "gfx11_dasm_vop3.txt"
FLAT11 = "gfx11_dasm_flat.txt"
WMMA11 = "gfx11_wmma (MC/AMDGPU/gfx11_asm_wmma_w32.s)"
VFLAT12 = "gfx12_dasm_vflat.txt"

VECTORS = [
    ("gfx11", SOP2, "0xff,0x02,0x00,0x80,0x73,0x72,0x71,0x3f", "s_add_u32 s0, 0x3f717273, s2"),
    ("gfx11", SOP2, "0xf7,0x02,0x00,0x80", "s_add_u32 s0, -4.0, s2"),
    ("gfx11", SOP2, "0x01,0xf0,0x00,0x80", "s_add_u32 s0, s1, 0.5"),
    ("gfx11", SOP2, "0x01,0x02,0x6a,0x82", "s_addc_u32 vcc_lo, s1, s2"),
    ("gfx11", SOP2, "0x01,0x7f,0x00,0x81", "s_add_i32 s0, s1, exec_hi"),
    ("gfx11", SOP2, "0x01,0x02,0x7e,0x8b", "s_and_b32 exec_lo, s1, s2"),
    ("gfx11", SOP2, "0x01,0x02,0x7d,0x83", "s_absdiff_i32 m0, s1, s2"),
    ("gfx11", SOP2, "0x01,0xc1,0x00,0x83", "s_absdiff_i32 s0, s1, -1"),
    ("gfx11", SOP2, "0x68,0x67,0x69,0x80", "s_add_u32 s105, s104, s103"),
    ("gfx11", VOP3, "0xff,0x00,0x55,0xd6,0x01,0x05,0x0e,0x04", "v_add3_u32 v255, v1, v2, v3"),
    ("gfx11", VOP3, "0x05,0x00,0x55,0xd6,0xf0,0x04,0x0e,0x04", "v_add3_u32 v5, 0.5, v2, v3"),
    ("gfx11", VOP3, "0x05,0x00,0x55,0xd6,0xc1,0x04,0x0e,0x04", "v_add3_u32 v5, -1, v2, v3"),
    ("gfx11", VOP3, "0x05,0x00,0x55,0xd6,0x7f,0x04,0x0e,0x04", "v_add3_u32 v5, exec_hi, v2, v3"),
    ("gfx11", VOP3, "0x05,0x00,0x55,0xd6,0x80,0x04,0x0e,0x04", "v_add3_u32 v5, 0, v2, v3"),
    ("gfx11", FLAT11, "0x00,0x00,0x5e,0xdc,0x01,0x00,0x68,0x05", "global_load_b128 v[5:8], v1, s[104:105]"),
    ("gfx11", FLAT11, "0xff,0x1f,0x5e,0xdc,0xff,0x00,0x68,0x05",
     "global_load_b128 v[5:8], v255, s[104:105] offset:-1"),
    ("gfx11", FLAT11, "0xff,0x0f,0x5e,0xdc,0xff,0x00,0x6a,0x05", "global_load_b128 v[5:8], v255, vcc offset:4095"),
    ("gfx11", FLAT11, "0x00,0x00,0x5e,0xdc,0x01,0x00,0x7c,0x05", "global_load_b128 v[5:8], v[1:2], off"),
    ("gfx11", FLAT11, "0x00,0x00,0x5e,0xdc,0x01,0x00,0x7a,0x05", "global_load_b128 v[5:8], v1, ttmp[14:15]"),
    ("gfx11", FLAT11, "0x00,0xf0,0x52,0xdc,0xff,0x00,0x7a,0xff",
     "global_load_b32 v255, v255, ttmp[14:15] offset:-4096 glc slc dlc"),
    ("gfx11", FLAT11, "0x00,0x00,0x52,0xdc,0x01,0x00,0x04,0x05", "global_load_b32 v5, v1, s[4:5]"),
    ("gfx11", WMMA11, "0x10,0x40,0x40,0xcc,0x00,0x11,0x42,0x1c",
     "v_wmma_f32_16x16x16_f16 v[16:23], v[0:7], v[8:15], v[16:23]"),
    ("gfx12", VFLAT12, "0x7c,0x40,0x0d,0xec,0x01,0x00,0x10,0x01,0x00,0x40,0x00,0x00",
     "flat_atomic_add_u32 v1, v[0:1], v2 offset:64 th:TH_ATOMIC_RETURN"),
    ("gfx12", VFLAT12, "0x7c,0x40,0x0d,0xec,0x00,0x00,0x00,0x01,0x00,0x40,0x00,0x00",
     "flat_atomic_add_u32 v[0:1], v2 offset:64"),
    ("gfx12", VFLAT12, "0x7c,0x40,0x0d,0xec,0x00,0x00,0x80,0x02,0x03,0x00,0x00,0x00", "flat_atomic_add_u32 v[3:4], v5"),
    ("gfx12", VFLAT12, "0x7c,0xc0,0x0c,0xec,0x00,0x00,0x90,0x01,0x01,0x00,0x08,0x00",
     "flat_atomic_swap_b32 v0, v[1:2], v3 offset:2048 th:TH_ATOMIC_RETURN"),
    ("gfx12", VFLAT12, "0x7c,0x00,0x0f,0xec,0x01,0x00,0x10,0x01,0x00,0x40,0x00,0x00",
     "flat_atomic_and_b32 v1, v[0:1], v2 offset:64 th:TH_ATOMIC_RETURN"),
]


@pytest.mark.parametrize("family,source,hexbytes,expected", VECTORS, ids=[v[3] for v in VECTORS])
def test_llvm_mc_vector(family, source, hexbytes, expected):
    code = bytes(int(b, 16) for b in hexbytes.split(","))
    instrs, _ = decode(code, family)
    assert len(instrs) == 1, f"{source}: decoded {[i.text for i in instrs]}"
    got = instrs[0]
    assert got.encoding == code.hex()
    want = parse_instruction(expected)
    assert canonical(got, {}, family) == canonical(want, {}, family), f"{source}: '{got.text}' vs '{expected}'"


def test_unknown_opcode_decodes_and_names_class():
    """A VOP3 opcode the tables do not list decodes to a placeholder that keeps the length
    right (the next instruction still decodes) and names the class and opcode."""
    code = bytes.fromhex("010000d7020702000000bfb0")   # VOP3 opcode 0x300|... then s_endpgm
    code = (0xD7FF0001).to_bytes(4, "little") + (0x00020702).to_bytes(4, "little") + \
        (0xBFB00000).to_bytes(4, "little")
    instrs, _ = decode(code, "gfx11")
    assert instrs[0].mnemonic == "<vop3 opcode 1023>" and instrs[0].fmt == "vop3"
    assert instrs[1].mnemonic == "s_endpgm" and instrs[1].pc == 8
