"""Vector integer and bit operations (VOP1 / VOP2 / VOP3), one row each.

Semantics: RDNA3 ISA guide chapter 7 "Vector ALU Operations" (§7.1 VOP2, §7.2 VOP1,
§7.4 VOP3 opcode tables and their pseudo-code in §16 "Instructions"); names as
llvm/docs/AMDGPU/AMDGPUAsmGFX11.rst. Values broadcast to (W, 32); lanes last.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .table import GFX12, Op, rows

u16, u32, u64, i16, i32, i64 = np.uint16, np.uint32, np.uint64, np.int16, np.int32, np.int64
C = "RDNA3 ISA §7 / §16 VOP opcode pseudo-code"
LANE = np.arange(32, dtype=u32)


def V(name, dst, src, fn, cite=C):
    return Op(name, "valu", dst, src, fn, cite)


def _u64(x):
    return np.asarray(x).astype(u64)


def _u24(x):
    return (x & u32(0xFFFFFF)).astype(u64)


def _i24(x):
    return ((x.astype(u32) << u32(8)).view(i32) >> 8).astype(i64) if np.ndim(x) else \
        np.int64(np.int32(np.uint32(x) << np.uint32(8)) >> 8)


def _carry_add(a, b, c=None):
    """a + b (+ carry-in c) mod 2^32 and the carry out, in 32-bit arithmetic: the sum wrapped
    iff it is below an addend (one wrap at most per step)."""
    s = np.add(a, b, dtype=u32)
    carry = s < a
    if c is not None:
        t = np.add(s, c, dtype=u32)
        return t, carry | (t < s)
    return s, carry


def _borrow_sub(a, b, c=None):
    """a - b (- borrow-in c) mod 2^32 and the borrow out (the exact difference is negative)."""
    d = np.subtract(a, b, dtype=u32)
    borrow = np.asarray(b) > a
    if c is not None:
        t = np.subtract(d, c, dtype=u32)
        return t, borrow | (t > d)
    return d, borrow


def _bfe(a, off, width, signed):
    off, width = off & u32(31), width & u32(31)
    x = (a >> off).astype(u32)
    mask = ((u64(1) << width.astype(u64)) - u64(1)).astype(u32)
    r = x & mask
    if not signed:
        return np.where(width == 0, u32(0), r)
    sh = (u32(32) - width) & u32(31)
    return np.where(width == 0, 0, ((r << sh).view(i32) >> sh.astype(i32)).astype(i32))


def _perm(a, b, sel):
    """V_PERM_B32: byte k of the result from selector byte k (§16 V_PERM_B32): 0-7 pick a byte
    of {S0, S1} (S1 is bytes 0-3), 8-11 replicate the sign bit of bytes 1/3/5/7, 12 gives 0x00,
    13 and up 0xFF. Vectorised as one gather from a 14-entry byte table per lane."""
    sel = np.asarray(sel, u32)
    if sel.ndim == 0 or (sel.size and (sel == sel.flat[0]).all()):
        return _perm_uniform(np.asarray(a, u32), np.asarray(b, u32), int(sel.flat[0]))
    a, b, sel = np.broadcast_arrays(np.asarray(a, u32), np.asarray(b, u32), sel)
    data = np.stack([b, a], axis=-1).view(np.uint8)                       # (..., 8) little endian
    sign = np.where(data[..., 1::2] & np.uint8(0x80), np.uint8(0xFF), np.uint8(0))
    table = np.concatenate([data, sign, np.zeros(sel.shape + (1,), np.uint8),
                            np.full(sel.shape + (1,), 0xFF, np.uint8)], axis=-1)
    idx = np.minimum(np.ascontiguousarray(sel).view(np.uint8).reshape(sel.shape + (4,)), 13)
    out = np.take_along_axis(table, idx.astype(np.intp), axis=-1)
    return np.ascontiguousarray(out).view(u32)[..., 0]


def _perm_uniform(a, b, sel: int):
    """_perm with one selector for every lane (LLVM's usual literal): each result byte is a
    shifted and masked source byte, a sign fill or a constant, so no per-lane table."""
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape), u32)
    for k in range(4):
        c = (sel >> (8 * k)) & 0xFF
        if c < 8:                                   # byte c of {S0, S1}: S1 holds bytes 0-3
            byte = ((b if c < 4 else a) >> u32(8 * (c % 4))) & u32(0xFF)
        elif c < 12:                                # sign of byte 1, 3 (S1) / 5, 7 (S0)
            bit = u32(8 * (2 * (c - 8) % 4) + 15)
            byte = (((b if c < 10 else a) >> bit) & u32(1)) * u32(0xFF)
        else:
            byte = u32(0 if c == 12 else 0xFF)
        out |= byte << u32(8 * k)
    return out


def _clz(a):
    a = np.asarray(a).astype(u64)
    return np.where(a == 0, -1, 31 - np.floor(np.log2(np.maximum(a, 1).astype(np.float64)))).astype(i32)


def _ctz(a):
    a = np.asarray(a).astype(u64)
    low = a & (~a + u64(1))
    return np.where(a == 0, -1, np.log2(np.maximum(low, 1).astype(np.float64))).astype(i32)


def _cls(a):
    a = np.asarray(a).view(i32) if np.asarray(a).dtype == u32 else np.asarray(a)
    x = np.where(a < 0, ~a, a).astype(u32)
    r = _clz(x)
    return np.where((a == 0) | (a == -1), -1, r - 1 + (x == 0)).astype(i32)


def _med3(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def _sh(x, bits):
    return x & {16: u16(15), 32: u32(31), 64: u32(63)}[bits]


INT = rows(
    V("v_mov_b32", "b32", "b32", lambda a: a),
    V("v_mov_b16", "b16", "b16", lambda a: a),
    V("v_not_b32", "b32", "b32", lambda a: ~a),
    V("v_not_b16", "b16", "b16", lambda a: ~a),
    V("v_bfrev_b32", "b32", "b32", lambda a: _brev(a)),
    V("v_cndmask_b32", "b32", "b32 b32 lm", lambda a, b, m: np.where(m, b, a)),
    V("v_cndmask_b16", "b16", "b16 b16 lm", lambda a, b, m: np.where(m, b, a)),
    V("v_add_nc_u32", "u32", "u32 u32", lambda a, b: a + b),
    V("v_sub_nc_u32", "u32", "u32 u32", lambda a, b: a - b),
    V("v_subrev_nc_u32", "u32", "u32 u32", lambda a, b: b - a),
    V("v_add_nc_i32", "i32", "i32 i32", lambda a, b: a + b),
    V("v_sub_nc_i32", "i32", "i32 i32", lambda a, b: a - b),
    V("v_add_nc_u16", "u16", "u16 u16", lambda a, b: a + b),
    V("v_sub_nc_u16", "u16", "u16 u16", lambda a, b: a - b),
    V("v_add_nc_i16", "i16", "i16 i16", lambda a, b: a + b),
    V("v_sub_nc_i16", "i16", "i16 i16", lambda a, b: a - b),
    V("v_mul_lo_u16", "u16", "u16 u16", lambda a, b: a * b),
    V("v_add_co_u32", "u32 lm", "u32 u32", _carry_add),
    V("v_sub_co_u32", "u32 lm", "u32 u32", _borrow_sub),
    V("v_subrev_co_u32", "u32 lm", "u32 u32", lambda a, b: _borrow_sub(b, a)),
    V("v_add_co_ci_u32", "u32 lm", "u32 u32 lm", _carry_add),
    V("v_sub_co_ci_u32", "u32 lm", "u32 u32 lm", _borrow_sub),
    V("v_subrev_co_ci_u32", "u32 lm", "u32 u32 lm", lambda a, b, c: _borrow_sub(b, a, c)),
    V("v_mul_lo_u32", "u32", "u32 u32", lambda a, b: a * b),
    V("v_mul_hi_u32", "u32", "u32 u32", lambda a, b: ((_u64(a) * _u64(b)) >> u64(32)).astype(u32)),
    V("v_mul_hi_i32", "i32", "i32 i32", lambda a, b: ((np.asarray(a).astype(i64) * b) >> 32).astype(i32)),
    V("v_mul_u32_u24", "u32", "u32 u32", lambda a, b: (_u24(a) * _u24(b)).astype(u32)),
    V("v_mul_hi_u32_u24", "u32", "u32 u32", lambda a, b: ((_u24(a) * _u24(b)) >> u64(32)).astype(u32)),
    V("v_mul_i32_i24", "i32", "u32 u32", lambda a, b: (_i24(a) * _i24(b)).astype(i32)),
    V("v_mul_hi_i32_i24", "i32", "u32 u32", lambda a, b: ((_i24(a) * _i24(b)) >> 32).astype(i32)),
    V("v_mad_u32_u24", "u32", "u32 u32 u32", lambda a, b, c: (_u24(a) * _u24(b) + c).astype(u32)),
    V("v_mad_i32_i24", "i32", "u32 u32 i32", lambda a, b, c: (_i24(a) * _i24(b) + c).astype(i32)),
    V("v_mad_u32_u16", "u32", "u16 u16 u32", lambda a, b, c: (_u64(a) * b + c).astype(u32)),
    V("v_mad_i32_i16", "i32", "i16 i16 i32", lambda a, b, c: (np.asarray(a).astype(i64) * b + c).astype(i32)),
    V("v_mad_u16", "u16", "u16 u16 u16", lambda a, b, c: a * b + c),
    V("v_mad_i16", "i16", "i16 i16 i16", lambda a, b, c: a * b + c),
    # 64-bit multiply-add: D.u64 = S0.u32 * S1.u32 + S2.u64, carry-out to SDST (§16 V_MAD_U64_U32)
    V("v_mad_u64_u32", "u64 lm", "u32 u32 u64", lambda a, b, c: _mad64(a, b, c, False)),
    V("v_mad_i64_i32", "i64 lm", "i32 i32 i64", lambda a, b, c: _mad64(a, b, c, True)),
    V("v_lshlrev_b32", "b32", "u32 b32", lambda a, b: b << _sh(a, 32)),
    V("v_lshrrev_b32", "b32", "u32 b32", lambda a, b: b >> _sh(a, 32)),
    V("v_ashrrev_i32", "i32", "u32 i32", lambda a, b: b >> _sh(a, 32).astype(i32)),
    V("v_lshlrev_b64", "b64", "u32 b64", lambda a, b: b << _sh(a, 64).astype(u64)),
    V("v_lshrrev_b64", "b64", "u32 b64", lambda a, b: b >> _sh(a, 64).astype(u64)),
    V("v_ashrrev_i64", "i64", "u32 i64", lambda a, b: b >> _sh(a, 64).astype(i64)),
    V("v_lshlrev_b16", "b16", "u16 b16", lambda a, b: b << _sh(a, 16)),
    V("v_lshrrev_b16", "b16", "u16 b16", lambda a, b: b >> _sh(a, 16)),
    V("v_ashrrev_i16", "i16", "u16 i16", lambda a, b: b >> _sh(a, 16).astype(i16)),
    V("v_lshl_add_u32", "u32", "u32 u32 u32", lambda a, b, c: (a << _sh(b, 32)) + c),
    V("v_add_lshl_u32", "u32", "u32 u32 u32", lambda a, b, c: (a + b) << _sh(c, 32)),
    V("v_lshl_or_b32", "b32", "b32 u32 b32", lambda a, b, c: (a << _sh(b, 32)) | c),
    V("v_and_or_b32", "b32", "b32 b32 b32", lambda a, b, c: (a & b) | c),
    V("v_or3_b32", "b32", "b32 b32 b32", lambda a, b, c: a | b | c),
    V("v_xor3_b32", "b32", "b32 b32 b32", lambda a, b, c: a ^ b ^ c),
    V("v_add3_u32", "u32", "u32 u32 u32", lambda a, b, c: a + b + c),
    V("v_xad_u32", "u32", "u32 u32 u32", lambda a, b, c: (a ^ b) + c),
    V("v_and_b32", "b32", "b32 b32", lambda a, b: a & b),
    V("v_or_b32", "b32", "b32 b32", lambda a, b: a | b),
    V("v_xor_b32", "b32", "b32 b32", lambda a, b: a ^ b),
    V("v_xnor_b32", "b32", "b32 b32", lambda a, b: ~(a ^ b)),
    V("v_and_b16", "b16", "b16 b16", lambda a, b: a & b),
    V("v_or_b16", "b16", "b16 b16", lambda a, b: a | b),
    V("v_xor_b16", "b16", "b16 b16", lambda a, b: a ^ b),
    V("v_bfe_u32", "u32", "u32 u32 u32", lambda a, b, c: _bfe(a, b, c, False)),
    V("v_bfe_i32", "i32", "u32 u32 u32", lambda a, b, c: _bfe(a, b, c, True)),
    V("v_bfi_b32", "b32", "b32 b32 b32", lambda a, b, c: (a & b) | (~a & c)),
    V("v_bfm_b32", "b32", "u32 u32",
      lambda a, b: (((u64(1) << _u64(_sh(a, 32))) - u64(1)) << _u64(_sh(b, 32))).astype(u32)),
    V("v_alignbit_b32", "b32", "b32 b32 u32",
      lambda a, b, c: (((_u64(a) << u64(32)) | _u64(b)) >> _u64(_sh(c, 32))).astype(u32)),
    V("v_alignbyte_b32", "b32", "b32 b32 u32",
      lambda a, b, c: (((_u64(a) << u64(32)) | _u64(b)) >> (u64(8) * _u64(c & u32(3)))).astype(u32)),
    V("v_perm_b32", "b32", "b32 b32 b32", _perm),
    V("v_bcnt_u32_b32", "u32", "b32 u32", lambda a, b: np.bitwise_count(a).astype(u32) + b),
    # MBCNT: count of set bits of S0 in lanes below this one (§16 V_MBCNT_LO_U32_B32)
    V("v_mbcnt_lo_u32_b32", "u32", "b32 u32",
      lambda a, b: np.bitwise_count(a & ((u32(1) << LANE) - u32(1))).astype(u32) + b),
    V("v_mbcnt_hi_u32_b32", "u32", "b32 u32", lambda a, b: np.broadcast_to(b, np.broadcast(a, b).shape)),
    V("v_clz_i32_u32", "i32", "u32", _clz),
    V("v_ctz_i32_b32", "i32", "b32", _ctz),
    V("v_cls_i32", "i32", "i32", _cls),
    *[V(f"v_{op}_{t}", t, f"{t} {t}", f)
      for t in ("i32", "u32", "i16", "u16") for op, f in (("max", np.maximum), ("min", np.minimum))],
    *[V(f"v_{op}3_{t}", t, f"{t} {t} {t}", lambda a, b, c, f=f: f(f(a, b), c))
      for t in ("i32", "u32", "i16", "u16") for op, f in (("max", np.maximum), ("min", np.minimum))],
    *[V(f"v_med3_{t}", t, f"{t} {t} {t}", _med3) for t in ("i32", "u32", "i16", "u16")],
    V("v_sad_u32", "u32", "u32 u32 u32",
      lambda a, b, c: (np.abs(np.asarray(a).astype(i64) - b) + c).astype(u32)),
)


def _mad64(a, b, c, signed):
    if signed:
        p = np.asarray(a).astype(i64) * np.asarray(b).astype(i64)  # exact: |p| < 2^62
        r = (p.astype(u64) + np.asarray(c).astype(i64).astype(u64)).view(i64) if np.ndim(p) else \
            np.int64(np.uint64(p) + np.uint64(np.int64(c)))
        over = ((p >= 0) == (np.asarray(c) >= 0)) & ((r >= 0) != (p >= 0))
        return r, over
    p = _u64(a) * _u64(b)  # < 2^64, exact
    r = p + _u64(c)
    return r, r < p


def _brev(a):
    b = np.asarray(a).astype(u32)
    r = np.zeros_like(b)
    for i in range(32):
        r |= ((b >> u32(i)) & u32(1)) << u32(31 - i)
    return r


# gfx12 renames (same opcode and semantics; llvm VOP3Instructions.td defines V_MAD_U64_U32 /
# V_MAD_I64_I32 with GFX12 mnemonics v_mad_co_u64_u32 / v_mad_co_i64_i32; AMDGPUAsmGFX12.rst VOP3).
INT12 = rows(*[replace(INT[old], mnemonic=new, archs=GFX12, cite=f"{INT[old].cite}; {new} on GFX12")
               for old, new in (("v_mad_u64_u32", "v_mad_co_u64_u32"), ("v_mad_i64_i32", "v_mad_co_i64_i32"))])
