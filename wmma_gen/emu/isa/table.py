"""The row type of the semantic tables (STYLE rule 11) and control signals.

A row names an opcode, the binder (`kind`) that decodes/fetches/writes back for it, its
operand roles as type tags, a pure semantic function over numpy arrays (lanes last), and
the manual section it implements. The family files (sop, sop_float, vop_int, vop_float, fp8_convert, vopc,
vop3p, lane, ds, global_smem, wmma11, wmma12) only contain rows; run/bind*.py hold the binders.

Operand role strings: space-separated tags, in the printed operand order. Lower-case tags
consume the next printed operand with that type (see operands.TYPES; `lm` = lane mask);
upper-case tags are implicit operands: SCC, EXEC (exec_lo), VCC (vcc_lo), M0, and D
(in a source list: read the destination again, e.g. v_fmac_f32's accumulator).

`archs`: the processors that have the opcode (empty = every target the emulator runs:
gfx11 and gfx12); on any other target the instruction binds to a fault naming the arch
(run/bind.py, via `allowed`). GFX11 / GFX12 below name the two families; a Program with no
`.amdgcn_target` counts as generic gfx11 (the emulator's original ISA): rows gated to the
whole gfx11 family run, rows gated to a subset of it or to gfx12 fault.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...codeobj.family import Family  # noqa: F401  (the decoder's; family() below builds it)

# Type tags of the operand roles: tag -> (bits, numpy dtype); `lm` (lane mask) is handled by
# the binders (run/operands.py).
TYPES = {
    "u32": (32, np.uint32), "i32": (32, np.int32), "f32": (32, np.float32), "b32": (32, np.uint32),
    "u16": (16, np.uint16), "i16": (16, np.int16), "f16": (16, np.float16), "b16": (16, np.uint16),
    "u64": (64, np.uint64), "i64": (64, np.int64), "f64": (64, np.float64), "b64": (64, np.uint64),
    "u8": (32, np.uint32),
}


# Processor families (llvm/docs/AMDGPUUsage.rst "Processors": GFX11 = RDNA3/RDNA3.5 and the
# gfx117x "RDNA 4m" parts, GFX12 = RDNA4). wmma_gen.targets lists the ones the generator compiles
# for. The sets name ENCODING families: gfx1170/gfx1171 decode and run as GFX11 (s_waitcnt,
# system-SGPR workgroup ids, GFX11 opcode tables) but their WMMA is GFX12's (llvm PR #180731:
# FeatureWMMA128bInsts "for GFX1170 and GFX12"; same VOP3P opcodes 0x40-0x45, 8 A/B elements
# per lane), hence WMMA12_ON_GFX11 and Family.wmma.
GFX11 = frozenset({"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
                   "gfx1153", "gfx1170", "gfx1171"})
GFX12 = frozenset({"gfx1200", "gfx1201"})
WMMA12_ON_GFX11 = frozenset({"gfx1170", "gfx1171"})
# FeatureSALUFloatInsts (llvm AMDGPU.td: FeatureISAVersion11_5_Common and, per PR #180185,
# FeatureISAVersion11_7_0; gfx1170 code built here uses s_mul_f32) and GFX12.
SALU_FLOAT = frozenset({"gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1170", "gfx1171"}) | GFX12
# HasIEEEMinimumMaximumInsts (v_maximum_f32, v_maximum3_f32, ...): GFX12 and gfx1170/gfx1171, for
# which LLVM selects them too (attention code built here for gfx1170 holds both; vop_float.py).
IEEE_MINMAX = GFX12 | WMMA12_ON_GFX11


def family(arch: str) -> Family:
    """'gfx12' for a GFX12 processor, else 'gfx11' (also for an unknown/empty target); its
    `.wmma` is the WMMA family (wmma_family)."""
    return Family("gfx12" if arch in GFX12 else "gfx11", wmma_family(arch))


def wmma_family(arch: str) -> str:
    """Family of the WMMA rows (layout and operand sizes) `arch` runs: 'gfx12' or 'gfx11'."""
    return "gfx12" if arch in GFX12 | WMMA12_ON_GFX11 else "gfx11"


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


class Fault(Exception):
    """Raised by instruction semantics; the scheduler turns it into EmulatorFault with
    kernel, pc, instruction and wave filled in. `wave` is the index inside the group."""

    def __init__(self, message: str, *, wave: int | None = None, lane: int | None = None,
                 address: int | None = None):
        super().__init__(message)
        self.message, self.wave, self.lane, self.address = message, wave, lane, address


class LaneFault(Fault):
    """Raised by a semantic function for the lanes in `mask` (broadcastable to (W, 32));
    the binder faults only if one of them is active, else it uses `result`."""

    def __init__(self, message: str, mask, result):
        super().__init__(message)
        self.mask, self.result = mask, result


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
