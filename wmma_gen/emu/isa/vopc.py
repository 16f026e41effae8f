"""Vector compares (VOPC and their VOP3 forms): one row per (condition, type), plus the
v_cmpx_* forms that write EXEC instead of an SGPR (on gfx11 v_cmpx writes only EXEC).

Semantics: RDNA3 / RDNA3.5 ISA guide §3.4.6 "Vector Compares: VCC and VCCZ" (V_CMP updates all
bits of its mask) and §7.7 (DPP): "V_CMP and V_CMPX write the full mask, not a partial mask ...
lanes that have their EXEC mask bit set to zero ... a zero bit is written" -- so the result bit
of an inactive lane is 0. Opcode list: AMDGPUAsmGFX11.rst (VOPC).
Float conditions: the ordered ones (lt eq le gt lg ge o) are false on NaN; the unordered ones
(u nge nlg ngt nle neq nlt) are true on NaN.
"""
from __future__ import annotations

import numpy as np

from .table import Op, rows
from .vop_float import _class

C = "RDNA3 ISA §3.4.6 Vector Compares, §7.7 full-mask rule"

FLOAT_CONDS = {
    "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
    "lg": lambda a, b: (a < b) | (a > b), "ge": np.greater_equal,
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)), "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~(a >= b), "nlg": lambda a, b: ~((a < b) | (a > b)),
    "ngt": lambda a, b: ~(a > b), "nle": lambda a, b: ~(a <= b), "neq": lambda a, b: ~(a == b),
    "nlt": lambda a, b: ~(a < b), "t": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
}
FLOAT_CONDS["tru"] = FLOAT_CONDS["t"]  # gfx11 spelling of the always-true float compare
INT_CONDS = {
    "f": FLOAT_CONDS["f"], "lt": np.less, "eq": np.equal, "le": np.less_equal,
    "gt": np.greater, "ne": np.not_equal, "ge": np.greater_equal, "t": FLOAT_CONDS["t"],
}


def _rows():
    out = []
    for x, dst in (("cmp", "lm"), ("cmpx", "EXEC")):
        for t in ("f16", "f32", "f64"):
            out += [Op(f"v_{x}_{c}_{t}", "valu", dst, f"{t} {t}", f, C) for c, f in FLOAT_CONDS.items()]
            out.append(Op(f"v_{x}_class_{t}", "valu", dst, f"{t} u32", _class, C))
        for t in ("i16", "u16", "i32", "u32", "i64", "u64"):
            out += [Op(f"v_{x}_{c}_{t}", "valu", dst, f"{t} {t}", f, C) for c, f in INT_CONDS.items()
                    if not (t.endswith("16") and c in ("f", "t"))]  # gfx11 has no 16-bit f/t
    return out


VOPC = rows(*_rows())
