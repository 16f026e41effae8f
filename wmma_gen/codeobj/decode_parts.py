"""The pieces every instruction decoder of this package shares (machine.py's scalar / memory
decoders and valu.py's VALU ones): the kernel's dwords, the lazily read literal, a source
operand, an opcode's name from the per-family tables, and the finished Instr with its text."""
from __future__ import annotations

import struct

from ..errors import EmulatorFault
from .instr import Instr, Operand
from . import operands as O
from .optables import TABLES
from .roles import width
from .text import render

VCC_LO = O.sreg(106)


def words(code: bytes, pos: int, n: int) -> list[int] | None:
    if pos + 4 * n > len(code):
        return None
    return list(struct.unpack_from(f"<{n}I", code, pos))


class Literal:
    """Reads the literal dword lazily: only instructions with a literal operand have one."""

    def __init__(self, code: bytes, pos: int):
        self.code, self.pos, self.used = code, pos, False

    def __call__(self) -> int:
        w = words(self.code, self.pos, 1)
        if w is None:
            raise EmulatorFault("literal dword past the end of the kernel code")
        self.used = True
        return w[0]


def src_operand(code: int, tag: str, lit: Literal, half: str | None = None) -> Operand:
    return O.source(code, max(1, width(tag) // 32), lit() if code == O.SRC_LITERAL else None, half)


def unknown(cls: str, op: int) -> Instr:
    return Instr(f"<{cls} opcode {op}>", (), {}, f"<{cls} opcode {op}>")


def opcode_name(family: str, cls: str, op: int) -> str | None:
    return TABLES[family].get(cls, {}).get(op)


def finish(mnemonic: str, ops: list[Operand], mods: dict) -> Instr:
    ins = Instr(mnemonic, tuple(ops), mods)
    ins.text = render(ins)
    return ins
