"""gfx12 (RDNA4) VALU float rows that gfx11 lacks: V_MAXIMUM_* / V_MINIMUM_* (VOP3).

llvm VOP3Instructions.td defines V_MAXIMUM_F32/F16 and V_MINIMUM_F32/F16 under
SubtargetPredicate HasIEEEMinimumMaximumInsts (GFX12) with the `fmaximum` / `fminimum`
patterns: IEEE 754-2019 maximum / minimum, i.e. a NaN operand gives NaN (unlike maxNum)
and -0 orders below +0. LLVM selects them for arith.maximumf (relu). The NaN result is the
quieted NaN operand, S0 first (signalling before quiet, as the RDNA pseudo-code of the
V_MAX_NUM family orders them); the exact payload is not observable in our kernels.
"""
from __future__ import annotations

import numpy as np

from .ieee import _is_snan, _quiet
from .table import GFX12, Op, rows

CITE = "llvm VOP3Instructions.td V_MAXIMUM_*/V_MINIMUM_* (HasIEEEMinimumMaximumInsts, GFX12), IEEE 754-2019"


def _ieee(is_max: bool):
    def fn(a, b):
        a, b = np.broadcast_arrays(a, b)
        zeros = (a == 0) & (b == 0)
        pick_a = np.where(zeros, np.signbit(b) if is_max else np.signbit(a),
                          (a >= b) if is_max else (a <= b))
        r = np.where(pick_a, a, b)
        r = np.where(np.isnan(b), _quiet(b), r)
        r = np.where(np.isnan(a) & ~_is_snan(b), _quiet(a), r)
        return np.where(_is_snan(a), _quiet(a), r).astype(a.dtype)
    return fn


def _ieee3(is_max: bool):
    two = _ieee(is_max)
    return lambda a, b, c: two(two(a, b), c)


# V_MAXIMUM3_F32/F16, V_MINIMUM3_*: the same operation over three sources, (S0 op S1) op S2
# (VOP3Instructions.td, HasIEEEMinimumMaximumInsts; LLVM forms them from two fmaximum).
FLOAT12 = rows(*[Op(f"v_{name}_{t}", "valu", t, f"{t} {t}", _ieee(name == "maximum"), CITE, archs=GFX12)
                 for name in ("maximum", "minimum") for t in ("f32", "f16")],
               *[Op(f"v_{name}3_{t}", "valu", t, f"{t} {t} {t}", _ieee3(name == "maximum"), CITE, archs=GFX12)
                 for name in ("maximum", "minimum") for t in ("f32", "f16")])
