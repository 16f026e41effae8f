"""Operand fetch and write-back, built once per instruction at bind time.

Type tags used by the semantic tables: u32 i32 f32 b32, u16 i16 f16 b16, u64 i64 f64 b64,
lm (a wave32 lane mask held in one SGPR: read as (W, 32) bool, written as bits).

Constants (RDNA3 ISA guide §6.2.3 "Inline constants" and §6.2.4 "Literal"): integers are
raw bits sign-extended to the operand width; float constants are encoded in the operand's
own type (f16 / f32 / f64 bits); a 32-bit literal used as an f64 operand is its high dword.
"""
from __future__ import annotations

import numpy as np

from ...codeobj.instr import Operand
from ..isa.table import TYPES, Fault
from .state import EXEC, NULL, SCC, bits_to_mask, mask_to_bits

_RAW = {16: np.uint16, 32: np.uint32, 64: np.uint64}
FLOATS = {"f16", "f32", "f64"}


def const_bits(op: Operand, typ: str) -> int:
    width = TYPES[typ][0] if typ != "lm" else 32
    if op.kind == "float":
        ftype = {16: np.float16, 32: np.float32, 64: np.float64}[width]
        return int(np.array(op.value, ftype).view(_RAW[width]))
    v = int(op.value)
    if width == 64 and typ == "f64" and not -16 <= v <= 64:
        return (v & 0xFFFFFFFF) << 32
    return v & ((1 << width) - 1)


# ---- vector context: values broadcast against (W, 32) ------------------------------------
def vreader(op: Operand, typ: str, hi_sel: bool = False, pre=None):
    """Function g -> typed array broadcastable to (W, 32). `hi_sel`: take the high 16 bits
    of a 16-bit operand (VOP3 op_sel); true16 `.h` does the same. `pre(g, raw)` permutes a
    VGPR's raw (W, 32) bits across lanes first (DPP)."""
    width, dt = TYPES[typ] if typ != "lm" else (32, np.uint32)
    hi = hi_sel or op.half == "h"
    if pre is not None and op.kind != "v":
        raise Fault(f"DPP source {op.text!r} must be a VGPR")
    if op.kind == "v":
        i = op.index
        reg = (lambda g: g.v[i]) if pre is None else (lambda g: pre(g, g.v[i]))
        if width == 32:
            raw = reg
        elif width == 64:
            raw = lambda g: g.v[i].astype(np.uint64) | (g.v[i + 1].astype(np.uint64) << np.uint64(32))
        elif hi:
            raw = lambda g: (reg(g) >> 16).astype(np.uint16)
        else:
            raw = lambda g: reg(g).astype(np.uint16)
    elif op.kind == "s":
        i = op.index
        if typ == "lm":
            return lambda g: bits_to_mask(g.s[i])
        if width == 32:
            raw = lambda g: g.s[i][:, None]
        elif width == 64:
            raw = lambda g: (g.s[i].astype(np.uint64) | (g.s[i + 1].astype(np.uint64) << np.uint64(32)))[:, None]
        elif hi:
            raw = lambda g: (g.s[i] >> 16).astype(np.uint16)[:, None]
        else:
            raw = lambda g: g.s[i].astype(np.uint16)[:, None]
    elif op.kind in ("int", "float"):
        bits = const_bits(op, typ)
        if typ == "lm":
            m = bits_to_mask(np.array([bits], np.uint32))
            return lambda g: m
        c = np.array(bits, _RAW[width]).view(dt)
        c = _modify(c, op, typ)
        return lambda g: c
    else:
        raise Fault(f"operand {op.text!r} cannot be a vector source")
    fetch = raw if _RAW[width] is dt else (lambda g: raw(g).view(dt))
    if (op.neg or op.abs) and (typ in FLOATS or typ in _SIGN):
        return lambda g: _modify(fetch(g), op, typ)
    return fetch


_SIGN = {"b16": np.uint16(0x8000), "b32": np.uint32(0x80000000), "b64": np.uint64(1 << 63)}


def _modify(x, op: Operand, typ: str):
    """VOP3 abs/neg: float negation, or sign-bit operations on untyped bits (e.g. the
    `-v1` of v_cndmask_b32_e64 selecting a negated float)."""
    if typ in _SIGN:
        sign = _SIGN[typ]
        x = x & ~sign if op.abs else x
        return x ^ sign if op.neg else x
    if typ not in FLOATS:
        return x
    if op.abs:
        x = np.abs(x)
    if op.neg:
        x = -x
    return x


def to_raw(val, typ: str):
    """Typed value -> raw unsigned bits of the type's width."""
    width, dt = TYPES[typ]
    return np.asarray(val).astype(dt, copy=False).view(_RAW[width])


def vwriter(op: Operand, typ: str, hi_sel: bool = False):
    """Function (g, value, mask) writing a vector result; mask None = every lane."""
    if typ == "lm":
        return lm_writer(op)
    if op.kind != "v":
        raise Fault(f"operand {op.text!r} cannot be a vector destination")
    width, _ = TYPES[typ]
    i = op.index
    if width == 32:
        def w(g, val, mask):
            raw = to_raw(val, typ)
            if mask is None:
                g.v[i][...] = raw
            else:
                np.copyto(g.v[i], raw, where=mask)
    elif width == 64:
        def w(g, val, mask):
            raw = to_raw(val, typ)
            lo = (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            hi = (raw >> np.uint64(32)).astype(np.uint32)
            if mask is None:
                g.v[i][...] = lo
                g.v[i + 1][...] = hi
            else:
                np.copyto(g.v[i], lo, where=mask)
                np.copyto(g.v[i + 1], hi, where=mask)
    else:
        hi = hi_sel or op.half == "h"
        keep, shift = (np.uint32(0x0000FFFF), 16) if hi else (np.uint32(0xFFFF0000), 0)

        def w(g, val, mask):
            new = (g.v[i] & keep) | (to_raw(val, typ).astype(np.uint32) << np.uint32(shift))
            if mask is None:
                g.v[i][...] = new
            else:
                np.copyto(g.v[i], new, where=mask)
    return w


def lm_writer(op: Operand):
    """VOPC / carry-out destination: one bit per lane, inactive lanes write 0 (RDNA3 ISA guide
    §3.4.6 "Vector Compares: VCC and VCCZ" and §7.7: V_CMP writes the full mask, a zero bit for
    lanes whose EXEC bit is zero)."""
    if op.kind != "s":
        raise Fault(f"operand {op.text!r} cannot hold a lane mask")
    i = op.index

    def w(g, val, mask):
        m = np.broadcast_to(val, (g.W, 32)) & (g.mask if mask is None else mask)
        if i != NULL:
            g.s[i] = mask_to_bits(m)
        if i == EXEC:
            g.refresh_exec()
    return w


# ---- scalar context: values shaped (W,) ----------------------------------------------------
def sreader(op: Operand, typ: str):
    width, dt = TYPES[typ]
    if op.kind == "s":
        i = op.index
        if i == SCC or width == 32:
            raw = lambda g: g.s[i]
        elif width == 64:
            raw = lambda g: g.s[i].astype(np.uint64) | (g.s[i + 1].astype(np.uint64) << np.uint64(32))
        else:
            raw = lambda g: g.s[i].astype(np.uint16)
    elif op.kind in ("int", "float"):
        c = _modify(np.array(const_bits(op, typ), _RAW[width]).view(dt), op, typ)
        return lambda g: c
    else:
        raise Fault(f"operand {op.text!r} cannot be a scalar source")
    fetch = raw if _RAW[width] is dt else (lambda g: raw(g).view(dt))
    if (op.neg or op.abs) and (typ in FLOATS or typ in _SIGN):   # VOP3-encoded scalar ops (gfx12 v_s_*)
        return lambda g: _modify(fetch(g), op, typ)
    return fetch


def swriter(op: Operand, typ: str):
    if op.kind != "s":
        raise Fault(f"operand {op.text!r} cannot be a scalar destination")
    width, dt = TYPES[typ]
    i, n = op.index, width // 32 or 1
    touches_exec = i <= EXEC < i + n

    def w(g, val):
        raw = to_raw(np.broadcast_to(val, (g.W,)), typ)
        if width == 64:
            g.s[i] = (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            g.s[i + 1] = (raw >> np.uint64(32)).astype(np.uint32)
        elif i != NULL:
            g.s[i] = raw.astype(np.uint32)
        if touches_exec:
            g.refresh_exec()
    return w


def scc_writer(g, val) -> None:
    g.s[SCC] = np.broadcast_to(val, (g.W,)).astype(np.uint32)
