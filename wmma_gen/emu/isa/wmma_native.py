"""Calling the compiled 16x16x16 WMMA kernel (emu/native/wmma.c) from the WMMA rows.

The rows keep their semantics and their numpy paths (wmma11.py, wmma12.py, wmma_f32acc.py);
this module only marshals: the layout of each operand as 16 rows of 16 consecutive lanes, the
register views as base and strides, and one int64 parameter block per call (see wmma.c).
`available()` says whether the kernel can run a layout; `run()` calls it.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import native
from .wmma_regs import NotReplicated, require_replicated

# element and accumulator codes of wmma.c
F16, BF16, U8, I8, U4, I4 = range(6)
OUT_F32, OUT_I32_WRAP, OUT_I32_CLAMP = range(3)
TYPES = {"f16": F16, "bf16": BF16}
BLOCK_WAVES = 32        # waves per block in the kernel (at most its WB, 32)

_TABLES: dict = {}
_local = threading.local()


def rows(lane: np.ndarray, elem: np.ndarray, per: int, k_major: bool):
    """Addresses of the (register, first lane, shift) tables, uint8 x 16 each, of the rows of
    the matrix whose element (i, j) is element elem[i, j] of lane lane[i, j] (`per` elements of
    32/per bits to a VGPR; k_major: the rows of the transpose, A^T) -- or None unless every
    row is 16 consecutive lanes (0-15 or 16-31) of one VGPR slot, the form the kernel reads
    (true of the gfx11 and gfx12 layouts in use; tests/emu/test_wmma_native.py checks them)."""
    key = (id(lane), id(elem), per, k_major)
    if key not in _TABLES:
        ln, el = (lane.T, elem.T) if k_major else (lane, elem)
        ok = ((np.diff(ln, axis=1) == 1).all() and (ln[:, 0] % 16 == 0).all()
              and ((el // per) == (el[:, :1] // per)).all() and ((el % per) == (el[:, :1] % per)).all())
        tables = tuple(np.ascontiguousarray(x, np.uint8)
                       for x in (el[:, 0] // per, ln[:, 0], (el[:, 0] % per) * (32 // per)))
        # the maps and tables are kept: the ids stay unique, the addresses valid
        _TABLES[key] = (lane, elem, tables, [t.ctypes.data for t in tables] if ok else None)
    return _TABLES[key][3]


def int_types(bits: int, neg_lo, clamp: bool) -> tuple[int, int, int]:
    """Codes for v_wmma_i32_16x16x16_iu{8,4}: NEG[0] / NEG[1] make A / B signed, CLMP
    saturates (RDNA3 ISA guide §7.5, §7.9)."""
    unsigned, signed = (U8, I8) if bits == 8 else (U4, I4)
    return (signed if neg_lo[0] else unsigned, signed if neg_lo[1] else unsigned,
            OUT_I32_CLAMP if clamp else OUT_I32_WRAP)


def available(*layouts) -> bool:
    """The kernel is loaded and every (lane, elem, per, k_major) layout has the row form."""
    return native.library() is not None and all(rows(*lay) is not None for lay in layouts)


def _operand(x: np.ndarray) -> tuple[np.ndarray, list]:
    """x (W, 32, R) with lanes contiguous (a view of the (R, W, 32) register file is; anything
    else is copied so) and its base, VGPR stride, wave stride (words) and VGPR count."""
    st = x.strides
    if st[1] != 4 or st[0] % 4 or st[2] % 4:
        x = np.ascontiguousarray(x.transpose(2, 0, 1)).transpose(1, 2, 0)
        st = x.strides
    return x, [x.ctypes.data, st[2] // 4, st[0] // 4, x.shape[2]]


def _params() -> tuple[np.ndarray, int]:
    """This thread's int64 parameter block and its address."""
    blk = getattr(_local, "params", None)
    if blk is None:
        arr = np.zeros(30, np.int64)
        blk = _local.params = (arr, arr.ctypes.data)
    return blk


def run(a, b, c, layouts, types: tuple[int, int, int], out=None, replicated: bool = False, fallback=None):
    """D (W, 32, 8) uint32 = A @ B + C by the kernel. layouts: (lane, elem, per, k_major) of A
    (k_major), B and C/D; types: (A element, B element, accumulator) codes. `out`: the (8, W, 32)
    D registers, written in place when the kernel can address them and nothing can stop it
    half way (integer rows, or a `fallback` for the waves with inf/NaN); else D goes to a new
    array, copied to `out` at the end. None when inf/NaN stop it and there is no fallback.
    `replicated` (gfx11): NotReplicated names the first wave not written."""
    a, b, c = (np.asarray(x, np.uint32) for x in (a, b, c))
    w = c.shape[0]
    regs_c = c.shape[2]
    stoppable = types[2] == OUT_F32 and fallback is None
    direct = (out is not None and not stoppable and out.dtype == np.uint32 and out.shape == (regs_c, w, 32)
              and out.strides[2] == 4 and not out.strides[0] % 4 and not out.strides[1] % 4)
    regs = out if direct else np.empty((regs_c, w, 32), np.uint32)
    a, pa = _operand(a)
    b, pb = _operand(b)
    c, pc = _operand(c)
    params, addr = _params()
    params[:30] = [w, types[0], replicated, *pa, *rows(*layouts[0]), *pb, *rows(*layouts[1]),
                   *pc, *rows(*layouts[2])[:2], regs.ctypes.data, regs.strides[0] // 4, regs.strides[1] // 4,
                   BLOCK_WAVES, 0, types[1], types[2]]
    code = native.library().wmma_native_call(addr)
    k = int(params[27])
    if code == 2:
        raise NotReplicated(k)
    if code == 1:             # inf/NaN in waves k..: the reference path, after the replication rule
        if fallback is None:
            return None
        if replicated:
            require_replicated(a[k:], b[k:], first_wave=k)
        np.copyto(regs[:, k:], np.asarray(fallback(a[k:], b[k:], c[k:]), np.uint32).transpose(2, 0, 1))
    elif code != 0:
        raise RuntimeError(f"native WMMA kernel returned {code} (more than 8 VGPRs in an operand, "
                           f"or BLOCK_WAVES={BLOCK_WAVES} outside 1..32)")
    if out is not None and regs is not out:
        np.copyto(out, regs)
    return regs.transpose(1, 2, 0)
