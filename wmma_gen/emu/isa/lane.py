"""Cross-lane VALU operations: readfirstlane / readlane / writelane, permlane16 /
permlanex16, swap. (DPP is a source modifier, see dpp.py; ds_swizzle / ds_bpermute are in
ds.py.)

Semantics: RDNA3 ISA guide §16 (V_READFIRSTLANE_B32, V_READLANE_B32, V_WRITELANE_B32,
V_PERMLANE16_B32, V_PERMLANEX16_B32, V_SWAP_B32). Role tags of kind 'lane' rows:
v = a VGPR's raw (W, 32) bits, s = a scalar (W,) u32 (SGPR or constant), D = the
destination VGPR's current bits; destinations: s (SGPR), v (VGPR, EXEC-masked),
vall (VGPR, every lane: writelane ignores EXEC), v2 (two VGPRs, swap).
"""
from __future__ import annotations

import numpy as np

from .table import Op, rows

u32 = np.uint32
C = "RDNA3 ISA §16 VOP1/VOP3 cross-lane opcodes"


def _first_lane(v, exec_mask, **_):
    first = np.where(exec_mask.any(axis=1), exec_mask.argmax(axis=1), 0)
    return v[np.arange(v.shape[0]), first]


def _read_lane(v, sel, exec_mask, **_):
    return v[np.arange(v.shape[0]), np.broadcast_to(sel & u32(31), (v.shape[0],)).astype(np.intp)]


def _write_lane(val, sel, old, exec_mask, **_):
    out = old.copy()
    out[np.arange(old.shape[0]), np.broadcast_to(sel & u32(31), (old.shape[0],)).astype(np.intp)] = val
    return out


def _permlane(cross):
    """Lane l of row r reads lane sel(l) of row r (permlane16) or of the other row
    (permlanex16); sel(l) = nibble l%16 of {S2, S1}. op_sel[0] = FI (fetch inactive lanes),
    op_sel[1] = BOUND_CTRL (an inactive source reads 0 instead of leaving the lane)."""
    lanes = np.arange(32)

    def fn(v, s1, s2, old, exec_mask, op_sel=(0, 0)):
        sel64 = (np.broadcast_to(s2, (v.shape[0],)).astype(np.uint64) << np.uint64(32)) | \
            np.broadcast_to(s1, (v.shape[0],)).astype(np.uint64)
        nib = ((sel64[:, None] >> (np.uint64(4) * (lanes % 16).astype(np.uint64))) & np.uint64(15)).astype(np.intp)
        row = lanes // 16
        src = ((1 - row) if cross else row) * 16 + nib
        w = np.arange(v.shape[0])[:, None]
        val = v[w, src]
        ok = np.ones_like(val, bool) if op_sel[0] else exec_mask[w, src]
        fill = np.zeros_like(val) if op_sel[1] else old
        return np.where(ok, val, fill)
    return fn


LANE = rows(
    Op("v_readfirstlane_b32", "lane", "s", "v", _first_lane, C),
    Op("v_readlane_b32", "lane", "s", "v s", _read_lane, C),
    Op("v_writelane_b32", "lane", "vall", "s s D", _write_lane, C),
    Op("v_permlane16_b32", "lane", "v", "v s s D", _permlane(False), C),
    Op("v_permlanex16_b32", "lane", "v", "v s s D", _permlane(True), C),
    Op("v_swap_b32", "lane", "v2", "v D", lambda a, b, exec_mask, **_: (a, b), C),  # (new dst, new src)
)
