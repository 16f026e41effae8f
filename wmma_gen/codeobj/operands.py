"""Operand fields of the machine encodings -> `asm.Operand` values, the same objects the
ISA-text parser builds.

Scalar / vector source encodings (RDNA3 ISA guide §6.2 "Scalar operands" table "SSRC
encodings" / §7.1.2 "Vector operands" (SRC0 is 9 bits: 256-511 = VGPR 0-255); RDNA4 ISA guide
the same sections; identical for gfx11 and gfx12):
  0-105 SGPR, 106/107 VCC_LO/HI, 108-123 TTMP0-15, 124 NULL, 125 M0, 126/127 EXEC_LO/HI,
  128 integer 0, 129-192 integers 1..64, 193-208 integers -1..-16,
  233 DPP8, 234 DPP8 with FI=1, 240 0.5, 241 -0.5, 242 1.0, 243 -1.0, 244 2.0, 245 -2.0,
  246 4.0, 247 -4.0, 248 1/(2*pi), 250 DPP16, 253 SCC, 255 32-bit literal (the dword after the
  instruction), 256-511 VGPR 0-255.
A 16-bit VGPR operand of a VOP1/VOP2/VOPC (32-bit) encoding names a register half: bits [6:0]
the VGPR, bit 7 the high half (RDNA3 ISA guide §7.1.3 "16-bit VGPRs" / true16 operands).
"""
from __future__ import annotations

from .instr import INV_2PI, Operand

INLINE_FLOAT = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0,
                248: INV_2PI}
SRC_LITERAL, SRC_DPP16, SRC_DPP8, SRC_DPP8_FI, SRC_SCC = 255, 250, 233, 234, 253
_SPECIAL_NAMES = {106: "vcc_lo", 107: "vcc_hi", 124: "null", 125: "m0", 126: "exec_lo", 127: "exec_hi"}
_PAIR_NAMES = {106: "vcc", 126: "exec"}
TTMP0 = 108


def sreg_text(index: int, count: int) -> str:
    if count == 2 and index in _PAIR_NAMES:
        return _PAIR_NAMES[index]
    if index in _SPECIAL_NAMES and count == 1:
        return _SPECIAL_NAMES[index]
    if TTMP0 <= index < TTMP0 + 16:
        i = index - TTMP0
        return f"ttmp{i}" if count == 1 else f"ttmp[{i}:{i + count - 1}]"
    return f"s{index}" if count == 1 else f"s[{index}:{index + count - 1}]"


def vreg(index: int, count: int = 1, half: str | None = None) -> Operand:
    text = f"v{index}" if count == 1 else f"v[{index}:{index + count - 1}]"
    return Operand("v", index, count, half, None, text=text + (f".{half}" if half else ""))


def sreg(index: int, count: int = 1, half: str | None = None) -> Operand:
    return Operand("s", index, count, half, None, text=sreg_text(index, count) + (f".{half}" if half else ""))


def integer(value: int) -> Operand:
    return Operand("int", value=value, text=str(value) if -16 <= value <= 64 else hex(value & 0xFFFFFFFF))


OFF = Operand("off", text="off")


def label(target: int) -> Operand:
    name = f".Lpc_{target:x}"
    return Operand("label", value=name, text=name)


def source(code: int, count: int, literal: int | None, half: str | None = None) -> Operand:
    """A 9-bit (vector) or 8-bit (scalar) source field. `literal` is the instruction's literal
    dword (None if it has none); `count` registers for 64-bit operands."""
    if code >= 256:
        return vreg(code - 256, count, half)
    if code <= 127:
        return sreg(code, count, "h" if half == "h" else None)
    if code <= 192:
        return integer(code - 128)
    if code <= 208:
        return integer(192 - code)
    if code in INLINE_FLOAT:
        v = INLINE_FLOAT[code]
        return Operand("float", value=v, text="0.15915494" if code == 248 else repr(v))
    if code == SRC_LITERAL:
        if literal is None:
            raise ValueError("literal operand without a literal dword")
        return integer(literal)
    if code == SRC_SCC:
        return Operand("s", 253, 1, None, text="src_scc")
    raise ValueError(f"source encoding {code} is not an operand the emulator models")


def modified_text(op: Operand, neg: bool, absolute: bool) -> str:
    """`op` as LLVM prints it with source modifiers: `|x|` for abs, `-x` for neg, but
    `neg(x)` for a negated constant without abs -- `-1` would read back as the inline
    integer -1 and `-0` as 0 with the neg bit lost (LLVM AMDGPUInstPrinter::
    printOperandAndFPInputMods: "Use 'neg(...)' instead of '-' to avoid ambiguity")."""
    text = f"|{op.text}|" if absolute else op.text
    if not neg:
        return text
    return f"neg({text})" if op.kind in ("int", "float") and not absolute else "-" + text


def with_mods(op: Operand, neg: bool, absolute: bool) -> Operand:
    if not (neg or absolute):
        return op
    from dataclasses import replace
    return replace(op, neg=neg, abs=absolute, text=modified_text(op, neg, absolute))
