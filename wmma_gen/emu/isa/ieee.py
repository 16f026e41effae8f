"""IEEE-mode float helpers shared by the scalar and vector float tables.

RDNA3 ISA guide §16 (V_MIN_F32 / V_MAX_F32 pseudo-code) with MODE.IEEE = 1, which our
kernels' descriptors set (`.amdhsa_ieee_mode 1`): a signalling NaN operand (S0 first, then
S1) is returned quieted, a quiet NaN operand loses to a number, and -0 orders below +0.
numpy's fmin/fmax differ on the last two points.
"""
from __future__ import annotations

import numpy as np

_RAW = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_QUIET_BIT = {2: 9, 4: 22, 8: 51}     # the top mantissa bit: set = quiet NaN


def _quiet(x):
    """cvtToQuietNAN: set the quiet bit, keep sign and payload."""
    x = np.asarray(x)
    raw = _RAW[x.dtype.itemsize]
    q = raw(1 << _QUIET_BIT[x.dtype.itemsize])
    return (x.view(raw) | q).view(x.dtype)


def _is_snan(x):
    x = np.asarray(x)
    raw = _RAW[x.dtype.itemsize]
    quiet = (x.view(raw) >> raw(_QUIET_BIT[x.dtype.itemsize])) & raw(1)
    return np.isnan(x) & (quiet == 0)


def _minmax(pick_first):
    """§16 V_MIN_F32 / V_MAX_F32 with IEEE=1: sNaN in S0, then S1 -> quieted; a qNaN operand
    loses; -0 orders below +0; otherwise `pick_first(a, b)` chooses S0."""
    def fn(a, b):
        a, b = np.broadcast_arrays(a, b)
        neg_a, neg_b = np.signbit(a), np.signbit(b)
        zeros = (a == 0) & (b == 0)
        first = np.where(zeros, pick_first(neg_b, neg_a), pick_first(a, b))
        r = np.where(first, a, b)
        r = np.where(np.isnan(b), a, np.where(np.isnan(a), b, r))
        r = np.where(_is_snan(b), _quiet(b), r)
        return np.where(_is_snan(a), _quiet(a), r).astype(a.dtype)
    return fn




ieee_min = _minmax(lambda a, b: a <= b)     # zeros: a first when b is +0 or a is -0
ieee_max = _minmax(lambda a, b: a >= b)


def _num(is_max: bool):
    """RDNA4 ISA §16.7 V_MAX_NUM_F32 / V_MIN_NUM_F32 (and _F16, _F64), IEEE 754-2019
    maximumNumber / minimumNumber: a NaN operand -- quiet OR signalling (a signalling one only
    raises INVALID) -- loses to a number; two NaNs give S0 quieted; +0 > -0; otherwise the
    larger (smaller) operand, S1 on a tie. Unlike the RDNA3 IEEE-mode V_MAX_F32 above, a
    signalling NaN is not returned."""
    def fn(a, b):
        a, b = np.broadcast_arrays(a, b)
        na, nb = np.isnan(a), np.isnan(b)
        zeros = (a == 0) & (b == 0)
        if is_max:
            first = (a > b) | (zeros & ~np.signbit(a) & np.signbit(b))
        else:
            first = (a < b) | (zeros & np.signbit(a) & ~np.signbit(b))
        r = np.where(first, a, b)
        r = np.where(nb & ~na, a, np.where(na & ~nb, b, r))
        return np.where(na & nb, _quiet(a), r).astype(a.dtype)
    return fn


num_max = _num(True)
num_min = _num(False)

