"""DPP16 / DPP8 source-lane permutation for wave32 (RDNA3 ISA guide §7.8 "Data Parallel
Processing"; modifier syntax: llvm/docs/AMDGPUModifierSyntax.rst, DPP section).

Each lane l reads src0 from lane src[l]. Rows are 16 lanes. A source outside the row (shift
modifiers) or an inactive source lane (unless fi:1) is *invalid*: with bound_ctrl set the
lane reads 0, otherwise the lane is not written. row_mask bit r / bank_mask bit b disable
writes to row r = l // 16 / bank b = (l // 4) % 4. LLVM prints BOUND_CTRL=1 as
`bound_ctrl:1` on gfx11 (`bound_ctrl:0` is the legacy spelling of the same bit).
"""
from __future__ import annotations

import numpy as np

from .table import Fault

L = np.arange(32)
ROW = L & ~15
IN_ROW = L & 15


def _shift(n):
    s = L + n
    return np.where((IN_ROW + n >= 0) & (IN_ROW + n < 16), s, -1)


# modifier -> function(value) -> source lane per lane (-1 = out of range)
CONTROLS = {
    "quad_perm": lambda p: (L & ~3) | np.asarray(p)[L & 3],
    "row_shl": lambda n: _shift(n),
    "row_shr": lambda n: _shift(-n),
    "row_ror": lambda n: ROW | ((IN_ROW - n) & 15),
    "row_mirror": lambda _: ROW | (15 - IN_ROW),
    "row_half_mirror": lambda _: (L & ~7) | (7 - (L & 7)),
    "row_share": lambda n: ROW | n,
    "row_xmask": lambda n: ROW | (IN_ROW ^ n),
    "dpp8": lambda p: (L & ~7) | np.asarray(p)[L & 7],
}


class DppPlan:
    def __init__(self, src: np.ndarray, writable: np.ndarray, bound_ctrl: bool, fi: bool):
        self.valid = src >= 0
        self.src = np.where(self.valid, src, L)
        self.writable, self.bound_ctrl, self.fi = writable, bound_ctrl, fi

    def _valid(self, g) -> np.ndarray:
        if self.fi or g.exec_all:
            return np.broadcast_to(self.valid, (g.W, 32))
        return self.valid & g.mask[:, self.src]

    def permute(self, g, raw: np.ndarray) -> np.ndarray:
        out = raw[:, self.src]
        if self.bound_ctrl:
            out = np.where(self._valid(g), out, np.uint32(0))
        return out

    def write_mask(self, g) -> np.ndarray:
        if self.bound_ctrl:
            return np.broadcast_to(self.writable, (g.W, 32))
        return self.writable & self._valid(g)


def dpp_plan(mods: dict) -> DppPlan:
    found = [k for k in CONTROLS if k in mods]
    if len(found) != 1:
        raise Fault(f"DPP instruction needs exactly one lane control, got {found or 'none'}")
    src = np.asarray(CONTROLS[found[0]](mods[found[0]]), dtype=np.int64)
    if found[0] == "dpp8":
        writable = np.ones(32, bool)
        bound = False
    else:
        rm, bm = int(mods.get("row_mask", 0xF)), int(mods.get("bank_mask", 0xF))
        writable = (((rm >> (L // 16)) & 1) & ((bm >> ((L // 4) % 4)) & 1)).astype(bool)
        bound = "bound_ctrl" in mods
    return DppPlan(src, writable, bound, bool(mods.get("fi", 0)))
