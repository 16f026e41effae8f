"""The row type of the semantic tables (STYLE rule 11) and control signals.

A row names an opcode, the binder (`kind`) that decodes/fetches/writes back for it, its
operand roles as type tags, a pure semantic function over numpy arrays (lanes last), and
the manual section it implements. The family files (sop, smem, vop*, ds, mem, ops_wmma)
only contain rows; `executor` holds the binders.

Operand role strings: space-separated tags, in the printed operand order. Lower-case tags
consume the next printed operand with that type (see operands.TYPES; `lm` = lane mask);
upper-case tags are implicit operands: SCC, EXEC (exec_lo), VCC (vcc_lo), M0, and D
(in a source list: read the destination again, e.g. v_fmac_f32's accumulator).

`archs`: the processors that have the opcode (empty = every target the emulator runs:
gfx11 and gfx12); on any other target the instruction binds to a fault naming the arch
(opcodes.bind, via `allowed`). GFX11 / GFX12 below name the two families; a Program with no
`.amdgcn_target` counts as generic gfx11 (the emulator's original ISA): rows gated to the
whole gfx11 family run, rows gated to a subset of it or to gfx12 fault.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


# Processor families (llvm/docs/AMDGPUUsage.rst "Processors": GFX11 = RDNA3/RDNA3.5,
# GFX12 = RDNA4). wmma_gen.targets lists the ones the generator compiles for.
GFX11 = frozenset({"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
                   "gfx1153"})
GFX12 = frozenset({"gfx1200", "gfx1201"})


def family(arch: str) -> str:
    """'gfx12' for a GFX12 processor, else 'gfx11' (also for an unknown/empty target)."""
    return "gfx12" if arch in GFX12 else "gfx11"


def allowed(archs: frozenset, arch: str) -> bool:
    """Whether a row gated to `archs` (empty = ungated) runs on `arch` ('' = generic gfx11)."""
    if not archs:
        return True
    return arch in archs if arch else GFX11 <= archs


@dataclass(frozen=True)
class Op:
    mnemonic: str
    kind: str
    dst: str = ""
    src: str = ""
    fn: Callable | None = None
    cite: str = ""
    archs: frozenset = frozenset()
    args: dict = field(default_factory=dict, hash=False, compare=False)


class Signal:
    """Control results an instruction closure may return instead of None (= next PC)."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Signal({self.name})"


BARRIER = Signal("barrier")
END = Signal("end")


class Split:
    """A scalar branch that goes different ways in different waves of a group."""
    __slots__ = ("taken", "target")

    def __init__(self, taken, target: int):
        self.taken, self.target = taken, target


def rows(*ops: Op) -> dict[str, Op]:
    out: dict[str, Op] = {}
    for op in ops:
        if op.mnemonic in out:
            raise ValueError(f"duplicate table row {op.mnemonic}")
        out[op.mnemonic] = op
    return out
