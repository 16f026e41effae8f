"""VALU encodings -> Instr: VOP1, VOP2, VOPC (32-bit, `_e32`), their DPP16/DPP8 forms (`_dpp`),
VOP3 / VOP3SD (`_e64` for opcodes that also have a 32-bit form, `_e64_dpp` with DPP), VOP3P
(packed math, v_fma_mix*, dot products, WMMA) and VOPD (`v_dual_x :: v_dual_y`).

Formats: RDNA3 ISA guide §15.3 (VOP2, VOP1, VOPC, VOP3, VOP3SD, VOP3P, VOPD, DPP16, DPP8); the
VOP3 opcode space holds VOPC at 0-255, VOP2 at 256-383 and VOP1 at 384-511 (§15.3.4 "VOP3":
"VOP3 opcodes 0-255: VOPC, 256-383: VOP2, 384-511: VOP1, 512+: VOP3 only"), so a VOP3
opcode below 512 prints with the `_e64` suffix. DPP control values (§15.3.8 DPP_CTRL
enumeration): 0x000-0x0FF quad_perm, 0x101-0x10F row_shl, 0x111-0x11F row_shr, 0x121-0x12F
row_ror, 0x140 row_mirror, 0x141 row_half_mirror, 0x150-0x15F row_share, 0x160-0x16F row_xmask.
VOP3 source modifiers: NEG[2:0] negates, ABS[2:0] takes |x| of src0..2; OPSEL[3:0] picks the
high half of 16-bit src0..2 / dst; OMOD 1/2/3 = mul:2 / mul:4 / div:2.
"""
from __future__ import annotations

from .instr import Instr
from . import formats as F
from . import operands as O
from .decode_parts import VCC_LO, finish, opcode_name, src_operand, unknown
from .roles import roles, row, width

_OMOD = {1: ("mul", 2), 2: ("mul", 4), 3: ("div", 2)}
_FMAMK = ("v_fmamk_f32", "v_fmamk_f16", "v_dual_fmamk_f32")
_FMAAK = ("v_fmaak_f32", "v_fmaak_f16", "v_dual_fmaak_f32")


def _dpp16_mods(d: dict) -> dict:
    c = d["dpp_ctrl"]
    if c <= 0xFF:
        mods = {"quad_perm": tuple((c >> (2 * i)) & 3 for i in range(4))}
    elif 0x101 <= c <= 0x10F:
        mods = {"row_shl": c & 15}
    elif 0x111 <= c <= 0x11F:
        mods = {"row_shr": c & 15}
    elif 0x121 <= c <= 0x12F:
        mods = {"row_ror": c & 15}
    elif c == 0x140:
        mods = {"row_mirror": True}
    elif c == 0x141:
        mods = {"row_half_mirror": True}
    elif 0x150 <= c <= 0x15F:
        mods = {"row_share": c & 15}
    elif 0x160 <= c <= 0x16F:
        mods = {"row_xmask": c & 15}
    else:
        mods = {"dpp_ctrl": c}       # reserved value: dpp_plan faults on it
    mods.update(row_mask=d["row_mask"], bank_mask=d["bank_mask"])
    if d["bc"]:
        mods["bound_ctrl"] = 1
    if d["fi"]:
        mods["fi"] = 1
    return mods


class _Dpp:
    """The DPP dword of an instruction whose src0 field is DPP16 / DPP8."""

    def __init__(self, code: int, lit, family: str):
        self.word = lit()            # the dword after the instruction (read like a literal)
        self.is8 = code in (O.SRC_DPP8, O.SRC_DPP8_FI)
        cls = "dpp8" if self.is8 else "dpp16"
        self.f = F.fields(self.word, family, cls)
        if self.is8:
            self.mods = {"dpp8": tuple((self.f["sel"] >> (3 * i)) & 7 for i in range(8))}
            if code == O.SRC_DPP8_FI:
                self.mods["fi"] = 1
        else:
            self.mods = _dpp16_mods(self.f)
        self.src0 = 256 + self.f["src0"]

    def src_mods(self, k: int) -> tuple[bool, bool]:
        if self.is8 or k > 1:
            return False, False
        return bool(self.f[f"src{k}_neg"]), bool(self.f[f"src{k}_abs"])


def _half(tag: str, hi: bool) -> str | None:
    return ("h" if hi else "l") if width(tag) == 16 else None


def _vgpr16(code: int, tag: str, base: int = 0):
    """(register code, half) of a 16-bit VGPR field in a 32-bit encoding (bit 7 = high half)."""
    if width(tag) == 16 and code >= base:
        r = code - base
        return base + (r & 0x7F), ("h" if r & 0x80 else "l")
    return code, None


def _operands(name, family, enc, f, lit, dpp):
    """Operands of a VOP1/VOP2/VOPC/VOP3 instruction from its row's roles. enc: 'e32' | 'e64'."""
    kind, dst, src = roles(name, family)
    e64 = enc == "e64"
    sd = e64 and "lm" in dst and len([t for t in dst if t.islower()]) > 1
    ops = []
    for t in dst:
        if t.isupper():
            continue
        if t == "lm":
            if not e64:
                ops.append(VCC_LO)
            elif sd:
                ops.append(O.source(f["sdst"], 1, None))
            else:
                ops.append(O.source(f["vdst"], 1, None))
            continue
        if kind == "lane" and t == "s":
            ops.append(O.sreg(f["vdst"]))
        elif kind == "salu" and e64:   # VOP3 with an SGPR VDST: gfx12 v_s_* (RDNA4 ISA §7.10)
            ops.append(O.sreg(f["vdst"], max(1, width(t) // 32)))
        elif e64:
            ops.append(O.vreg(f["vdst"], max(1, width(t) // 32), _half(t, (f["opsel"] >> 3) & 1 and not sd)))
        else:
            code, half = _vgpr16(f["vdst"], t)
            ops.append(O.vreg(code, max(1, width(t) // 32), half))
    if e64:
        fields = ["src0", "src1", "src2"]
    elif "vsrc1" in f:
        fields = ["src0", "vsrc1"]
    else:
        fields = ["src0"]
    if name in _FMAMK:
        fields = ["src0", "K", "vsrc1"]
    elif name in _FMAAK:
        fields = ["src0", "vsrc1", "K"]
    k = 0
    for t in src:
        if t == "D" or (t.isupper() and t != "VCC"):
            continue
        if t in ("lm", "VCC") and not e64:
            if t == "lm":
                ops.append(VCC_LO)
            continue
        if t == "VCC":
            continue
        field = fields[k] if k < len(fields) else None
        if field is None:
            break
        if field == "K":
            ops.append(O.integer(lit()))
            k += 1
            continue
        code = f[field]
        if field == "vsrc1":
            code += 256
        if k == 0 and dpp is not None:
            code = dpp.src0
        if e64:
            sel = (f["opsel"] >> k) & 1 if not sd and k < 3 else 0
            op = src_operand(code, t, lit, _half(t, sel) if code >= 256 or sel else None)
            neg = bool((f["neg"] >> k) & 1) if k < 3 else False
            ab = bool((f["abs"] >> k) & 1) if (k < 3 and not sd) else False
        else:
            code, half = _vgpr16(code, t, 256)
            op = src_operand(code, t, lit, half)
            neg = ab = False
        if dpp is not None and k < 2 and not e64:
            neg, ab = dpp.src_mods(k)
        ops.append(O.with_mods(op, neg, ab))
        k += 1
    mods = {}
    if kind == "lane" and e64 and f["opsel"] & 3:
        mods["op_sel"] = (f["opsel"] & 1, (f["opsel"] >> 1) & 1)
    if e64:
        if f["clamp"]:
            mods["clamp"] = True
        if f["omod"]:
            k_, v = _OMOD[f["omod"]]
            mods[k_] = v
    if e64 and name in _FP8_SEL:
        mods.update(_FP8_SEL[name](f["opsel"]))
    if dpp is not None:
        mods.update(dpp.mods)
    return ops, mods


def _nonzero(key, value):
    return {key: value} if any(value if isinstance(value, tuple) else (value,)) else {}


# gfx12 fp8/bf8 conversions (emu/isa/fp8_convert.py): OPSEL bits select bytes / words; printed as
# LLVM prints them (llvm-mc-22 -mcpu=gfx1201 -show-encoding; v_cvt_f32_fp8's byte_sel swaps the two
# bits, LLVM PR #80502).
_FP8_SEL = {
    **dict.fromkeys(("v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32"),       # op_sel:[src0, src1, dst word]
                    lambda o: _nonzero("op_sel", (o & 1, o >> 1 & 1, o >> 3 & 1))),
    **dict.fromkeys(("v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8"),       # op_sel:[src word, dst]
                    lambda o: _nonzero("op_sel", (o & 1, o >> 3 & 1))),
    **dict.fromkeys(("v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32"),       # byte_sel = OPSEL[3:2]
                    lambda o: _nonzero("byte_sel", o >> 2 & 3)),
    **dict.fromkeys(("v_cvt_f32_fp8", "v_cvt_f32_bf8"),             # byte_sel = {OPSEL[0], OPSEL[1]}
                    lambda o: _nonzero("byte_sel", (o & 1) << 1 | (o >> 1 & 1))),
}


def _e32(cls):
    def dec(f, family, lit):
        name = opcode_name(family, cls, f["op"])
        if name is None:
            if f["src0"] in (O.SRC_LITERAL, O.SRC_DPP16, O.SRC_DPP8, O.SRC_DPP8_FI):
                lit()
            return unknown(cls, f["op"]), 0
        dpp = _Dpp(f["src0"], lit, family) if f["src0"] in (O.SRC_DPP16, O.SRC_DPP8, O.SRC_DPP8_FI) else None
        ops, mods = _operands(name, family, "e32", f, lit, dpp)
        suffix = "_dpp" if dpp is not None else ("" if name in _FMAMK + _FMAAK or _no_suffix(name) else "_e32")
        return finish(name + suffix, ops, mods), 0
    return dec


def _no_suffix(name: str) -> bool:
    """VOP1/VOP2 opcodes LLVM prints without `_e32` (no VOP3 form to tell apart)."""
    return name in ("v_readfirstlane_b32", "v_nop", "v_pipeflush", "v_swap_b32", "v_swaprel_b32",
                    "v_swap_b16")


vop1, vop2, vopc = _e32("vop1"), _e32("vop2"), _e32("vopc")


def _vop3_name(family: str, op: int) -> str | None:
    """VOP3 opcodes 0-255 are VOPC, 256-383 VOP2, 384-511 VOP1, 512+ VOP3-only (§15.3.4)."""
    if op < 256:
        return opcode_name(family, "vopc", op)
    if op < 384:
        return opcode_name(family, "vop2", op - 256)
    if op < 512:
        return opcode_name(family, "vop1", op - 384)
    return opcode_name(family, "vop3", op)


def vop3(f, family, lit):
    name = _vop3_name(family, f["op"])
    if name is None:
        if O.SRC_LITERAL in (f["src0"], f["src1"], f["src2"]):
            lit()
        return unknown("vop3", f["op"]), 0
    dpp = _Dpp(f["src0"], lit, family) if f["src0"] in (O.SRC_DPP16, O.SRC_DPP8, O.SRC_DPP8_FI) else None
    ops, mods = _operands(name, family, "e64", f, lit, dpp)
    # LLVM prints every VOP3 DPP form `_e64_dpp`, VOP3-only opcodes too (llvm-mc-22 gfx1201:
    # `v_add3_u32_e64_dpp`, `v_cvt_pk_fp8_f32_e64_dpp`)
    suffix = "_e64" if (f["op"] < 512 and name not in _VOP3_BARE) or dpp is not None else ""
    return finish(name + suffix + ("_dpp" if dpp is not None else ""), ops, mods), 0


# opcodes < 512 that exist only in VOP3 (VOP3-only VOPC/VOP2-space ops print without _e64)
_VOP3_BARE = ("v_readlane_b32", "v_writelane_b32")


def vop3p(f, family, lit):
    name = opcode_name(family, "vop3p", f["op"])
    if name is None:
        if O.SRC_LITERAL in (f["src0"], f["src1"], f["src2"]):
            lit()
        return unknown("vop3p", f["op"]), 0
    kind, dst, src = roles(name, family)
    opsel = tuple((f["opsel"] >> k) & 1 for k in range(3))
    opsel_hi = (f["opsel_hi"] & 1, (f["opsel_hi"] >> 1) & 1, f["opsel_hi2"])
    neg_lo = tuple((f["neg"] >> k) & 1 for k in range(3))
    neg_hi = tuple((f["neg_hi"] >> k) & 1 for k in range(3))
    fields = ("src0", "src1", "src2")
    if kind == "wmma":
        w = row(name, family)
        ops = [O.vreg(f["vdst"], w.c_regs)]
        for field, n in zip(fields, (w.a_regs, w.b_regs, w.c_regs)):
            ops.append(src_operand(f[field], "b32", lit) if f[field] < 256 else O.vreg(f[field] - 256, n))
        mods = {k: v for k, v in (("op_sel", opsel), ("neg_lo", neg_lo), ("neg_hi", neg_hi)) if any(v)}
        if f["clamp"]:
            mods["clamp"] = True
        return finish(name, ops, mods), 0
    stags = [t for t in src if t.islower()]
    dtags = [t for t in dst if t.islower()] or ["b32"]
    ops = [O.vreg(f["vdst"], max(1, width(dtags[0]) // 32))]
    n = len(stags) if kind != "mix" else 3
    for k in range(n):
        t = stags[k] if k < len(stags) else "b32"
        ops.append(src_operand(f[fields[k]], "b32" if width(t) == 16 else t, lit))
    mods = {"op_sel": opsel[:n], "op_sel_hi": opsel_hi[:n], "neg_lo": neg_lo[:n], "neg_hi": neg_hi[:n]}
    if f["clamp"]:
        mods["clamp"] = True
    return finish(name, ops, mods), 0


def vopd(f, family, lit):
    nx = opcode_name(family, "vopdx", f["opx"])
    ny = opcode_name(family, "vopdy", f["opy"])
    if nx is None or ny is None:
        if O.SRC_LITERAL in (f["srcx0"], f["srcy0"]):
            lit()
        return unknown("vopd", f["opx"] * 32 + f["opy"]), 0
    vdsty = (f["vdsty"] << 1) | ((f["vdstx"] & 1) ^ 1)
    halves = []
    literal = []

    def shared():
        if not literal:
            literal.append(lit())
        return literal[0]
    for name, vdst, src0, vsrc1 in ((nx, f["vdstx"], f["srcx0"], f["vsrcx1"]), (ny, vdsty, f["srcy0"], f["vsrcy1"])):
        _, _, src = roles(name, family)
        stags = [t for t in src if t.islower() and t != "lm"]
        fields = [src0, 256 + vsrc1]
        if name in _FMAMK:
            fields = [src0, "K", 256 + vsrc1]
        elif name in _FMAAK:
            fields = [src0, 256 + vsrc1, "K"]
        ops = [O.vreg(vdst)]
        for t, code in zip(stags, fields):
            ops.append(O.integer(shared()) if code == "K" else
                       O.source(code, 1, shared() if code == O.SRC_LITERAL else None))
        halves.append(Instr(name, tuple(ops), {}))
    x, y = halves
    x.pair = y
    from .text import render
    x.text = render(x)
    return x, 0
