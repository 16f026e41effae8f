"""Parsing of LLVM's gfx11 assembly lines (wmma_gen.emu.decode.asm)."""
from __future__ import annotations

import pytest

from wmma_gen.emu.decode.asm import parse_instruction, parse_operand
from wmma_gen.codeobj.instr import INV_2PI


@pytest.mark.parametrize("text,kind,index,count,half", [
    ("v3", "v", 3, 1, None), ("v[4:7]", "v", 4, 4, None), ("v0.h", "v", 0, 1, "h"),
    ("s[0:1]", "s", 0, 2, None), ("vcc_lo", "s", 106, 1, None), ("vcc", "s", 106, 2, None),
    ("exec_lo", "s", 126, 1, None), ("m0", "s", 125, 1, None), ("null", "s", 124, 1, None),
])
def test_registers(text, kind, index, count, half):
    op = parse_operand(text)
    assert (op.kind, op.index, op.count, op.half) == (kind, index, count, half)


@pytest.mark.parametrize("text,kind,value", [
    ("-1", "int", -1), ("0x3f800000", "int", 0x3F800000), ("0.5", "float", 0.5),
    ("-4.0", "float", -4.0), ("0.15915494", "float", INV_2PI), ("1/(2*pi)", "float", INV_2PI),
    (".LBB0_3", "label", ".LBB0_3"),
])
def test_constants_and_labels(text, kind, value):
    op = parse_operand(text)
    assert op.kind == kind and op.value == value


def test_source_modifiers():
    assert parse_operand("-v1").neg and not parse_operand("-v1").abs
    op = parse_operand("-|v[2:3]|")
    assert op.neg and op.abs and op.count == 2


def test_modifiers_and_dpp_controls():
    ins = parse_instruction("v_add_f32_dpp v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0x3 bound_ctrl:1")
    assert ins.base == "v_add_f32" and len(ins.operands) == 3
    assert ins.mods == {"quad_perm": (1, 0, 3, 2), "row_mask": 15, "bank_mask": 3, "bound_ctrl": 1}
    ld = parse_instruction("ds_load_2addr_stride64_b32 v[0:1], v2 offset0:1 offset1:3")
    assert ld.mods == {"offset0": 1, "offset1": 3}
    g = parse_instruction("global_load_d16_hi_b16 v5, v[0:1], off offset:-16 glc")
    assert g.operands[2].kind == "off" and g.mods == {"offset": -16, "glc": True}
    w = parse_instruction("v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7] op_sel:[0,0,1] neg_lo:[1,0,0]")
    assert w.mods == {"op_sel": (0, 0, 1), "neg_lo": (1, 0, 0)}
    sw = parse_instruction('ds_swizzle_b32 v1, v0 offset:swizzle(BITMASK_PERM,"01pip")')
    assert sw.mods["offset"] == 'swizzle(BITMASK_PERM,"01pip")'


def test_vopd_pair():
    ins = parse_instruction("v_dual_mov_b32 v17, v16 :: v_dual_and_b32 v24, 0xf0, v0")
    assert ins.mnemonic == "v_dual_mov_b32" and ins.pair.mnemonic == "v_dual_and_b32"
    assert ins.pair.operands[1].value == 0xF0


def test_hint_instructions_keep_raw_text():
    ins = parse_instruction("s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)")
    assert ins.operands == () and "instskip" in ins.mods["raw"]


def test_bad_operand_raises():
    with pytest.raises(ValueError, match="cannot parse operand"):
        parse_operand("v[1:")


@pytest.mark.parametrize("text", ["v_bfe_u32 v20, v10, 0x101, 0x10a", "v_fma_f32 v0, 1.5, v1, 2.5",
                                  "v_add3_u32 v0, 0x1000, v1, 100"])
def test_two_different_literals_are_refused(text):
    # RDNA3.5 ISA §7.2.2.3: one literal constant per instruction (llvm-mc refuses these lines too)
    with pytest.raises(ValueError, match="two different literal constants"):
        parse_instruction(text)


@pytest.mark.parametrize("text", ["v_bfe_u32 v20, v10, 0x101, 0x101", "v_fma_f32 v0, 1.5, v1, 2.0",
                                  "v_add3_u32 v0, -16, v1, 64", "v_add3_u32 v0, 0xffffffff, v1, 0x7fff",
                                  "v_fma_f32 v0, 0.15915494, v1, -4.0"])
def test_one_literal_with_inline_constants_is_accepted(text):
    assert parse_instruction(text).mnemonic == text.split()[0]
