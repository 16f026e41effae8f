"""The opcode table: every row of every family (`OPS`) and the per-family WMMA tables.
`OPS` doubles as the coverage list; run/bind.py turns a Program's instructions into closures."""
from __future__ import annotations

from ...codeobj.instr import Instr
from .ds import DS
from .fp8_convert import FP8_CONVERT
from .global_smem import CACHE12, GLOBAL, SCRATCH, SMEM
from .lane import LANE
from .sop import CONTROL, CONTROL12, SALU, SALU12
from .sop_float import SALU_FLOAT, SALU_FLOAT12
from .table import Op
from .vop3p import PACKED
from .vop_float import FLOAT, FLOAT12
from .vop_int import INT, INT12
from .vopc import VOPC
from .wmma11 import WMMA_OPS
from .wmma12 import WMMA12_OPS

# WMMA rows per family: the same mnemonic (v_wmma_f32_16x16x16_f16) has different operand
# sizes and lane layouts on gfx11 and gfx12, so the Program's arch selects the table.
WMMA_TABLES = {"gfx11": WMMA_OPS, "gfx12": WMMA12_OPS}

OPS: dict[str, Op] = {}
for _table in (SALU, SALU12, SALU_FLOAT, SALU_FLOAT12, CONTROL, CONTROL12, SMEM, INT, INT12, FLOAT, FLOAT12,
               FP8_CONVERT, VOPC, PACKED, LANE, DS, GLOBAL, SCRATCH, CACHE12):
    for _k, _row in _table.items():
        if _k in OPS:
            raise ValueError(f"opcode {_k} defined twice")
        OPS[_k] = _row


def lookup(ins: Instr) -> Op | None:
    return OPS.get(ins.mnemonic) or OPS.get(ins.base)


def coverage() -> list[str]:
    """Every mnemonic the emulator executes (without encoding suffixes)."""
    return sorted(set(OPS) | set(WMMA_OPS) | set(WMMA12_OPS))
