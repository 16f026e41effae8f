"""VOP3P: packed 16-bit math, dot products and mixed-precision fma.

Semantics: RDNA3 ISA guide §7.5 "Packed Math" (op_sel / op_sel_hi / neg_lo / neg_hi) and
§16 VOP3P opcode pseudo-code; names as AMDGPUAsmGFX11.rst (VOP3P). Rows of kind
'vop3p' are elementwise and run on both halves at once; 'mix' rows are v_fma_mix*
(each source is f32, or f16 when its op_sel_hi bit is set; neg_hi acts as abs).
"""
from __future__ import annotations

import numpy as np

from .ieee import ieee_max, ieee_min
from .table import Op, rows
from .vop_float import fma

f16, f32, f64 = np.float16, np.float32, np.float64
u16, u32 = np.uint16, np.uint32
C = "RDNA3 ISA §7.5 Packed Math / §16 VOP3P"


C_MIX16 = (C + "; V_FMA_MIXLO_F16 / V_FMA_MIXHI_F16 round twice: fma to f32, then f32 -> f16 (RDNA3 and RDNA4 "
           "ISA guide pseudocode; llvm/test/CodeGen/AMDGPU/mad-mix-fptrunc-rounding.ll, llvm/llvm-project PR 219723)")


def fma_mix_f16(a, b, c):
    """V_FMA_MIX{LO,HI}_F16: the fused multiply-add rounded to f32, then that f32 converted to
    f16 -- two roundings, not one. The RDNA3 / RDNA4 ISA guides' pseudocode computes the fma in
    f32 and converts the f32 result to the 16-bit destination, and LLVM's
    llvm/test/CodeGen/AMDGPU/mad-mix-fptrunc-rounding.ll (PR 219723) states it: "V_{MAD,FMA}_MIX{LO,HI}
    round the f32 multiply or multiply-add to f32 and then convert that f32 to f16, the same two
    roundings the IR performs, so they match an fptrunc of an f32 multiply or multiply-add bit for
    bit". They differ from one rounding when the exact result lies just off an f16 halfway point
    by less than half an f32 ulp (1 + 2**-11 + 2**-30: once -> 1 + 2**-10, twice -> 1.0)."""
    return fma(a, b, c, f32).astype(f16)


def P(name, t, n, fn):
    return Op(name, "vop3p", t, " ".join([t] * n), fn, C)


def _halves(x, kind):
    x = np.asarray(x, u32)
    lo, hi = (x & u32(0xFFFF)).astype(u16), (x >> u32(16)).astype(u16)
    if kind == "f16":
        return lo.view(f16).astype(f64), hi.view(f16).astype(f64)
    # bf16: the 16 bits are the top half of an f32
    return (lo.astype(u32) << u32(16)).view(f32).astype(f64), (hi.astype(u32) << u32(16)).view(f32).astype(f64)


def _dot2(kind):
    """D.f32 = S0.lo*S1.lo + S0.hi*S1.hi + S2.f32, evaluated exactly and rounded once."""
    def fn(a, b, c):
        (al, ah), (bl, bh) = _halves(a, kind), _halves(b, kind)
        return (al * bl + ah * bh + np.asarray(c, f64)).astype(f32)
    return fn


def _dot_int(n, signed_a, signed_b):
    """V_DOT4 / V_DOT8: sum of n 32/n-bit products plus S2, integer (wrapping) (§16)."""
    bits = 32 // n

    def lanes(x, signed):
        x = np.asarray(x, u32).astype(np.int64)
        out = []
        for k in range(n):
            v = (x >> (bits * k)) & ((1 << bits) - 1)
            out.append(np.where(v >= (1 << (bits - 1)), v - (1 << bits), v) if signed else v)
        return out

    def fn(a, b, c):
        acc = np.asarray(c).astype(np.int64)
        for x, y in zip(lanes(a, signed_a), lanes(b, signed_b)):
            acc = acc + x * y
        return acc.astype(np.uint32) if not signed_a else acc.astype(np.int32)
    return fn


def _dot2_16(kind):
    """V_DOT2_F16_F16 / V_DOT2_BF16_BF16: 16-bit result in the low half (§16)."""
    def fn(a, b, c):
        (al, ah), (bl, bh) = _halves(a, kind), _halves(b, kind)
        (cl, _) = _halves(c, kind)
        r = al * bl + ah * bh + cl
        if kind == "f16":
            return r.astype(f16).view(u16).astype(u32)
        bits = r.astype(f32).view(u32)  # round to nearest even on the top 16 bits
        return ((bits + u32(0x7FFF) + ((bits >> u32(16)) & u32(1))) >> u32(16)).astype(u32)
    return fn


PACKED = rows(
    Op("v_dot4_i32_iu8", "valu", "i32", "b32 b32 i32", _dot_int(4, True, True), C),
    Op("v_dot4_u32_u8", "valu", "u32", "b32 b32 u32", _dot_int(4, False, False), C),
    Op("v_dot8_i32_iu4", "valu", "i32", "b32 b32 i32", _dot_int(8, True, True), C),
    Op("v_dot8_u32_u4", "valu", "u32", "b32 b32 u32", _dot_int(8, False, False), C),
    Op("v_dot2_f16_f16", "valu", "b16", "b32 b32 b32", _dot2_16("f16"), C),
    Op("v_dot2_bf16_bf16", "valu", "b16", "b32 b32 b32", _dot2_16("bf16"), C),
    Op("v_dot2acc_f32_f16", "valu", "f32", "b32 b32 D", _dot2("f16"), C),
    P("v_pk_add_f16", "f16", 2, lambda a, b: a + b),
    P("v_pk_mul_f16", "f16", 2, lambda a, b: a * b),
    P("v_pk_fma_f16", "f16", 3, lambda a, b, c: fma(a, b, c, f16)),
    P("v_pk_max_f16", "f16", 2, ieee_max),
    P("v_pk_min_f16", "f16", 2, ieee_min),
    P("v_pk_add_u16", "u16", 2, lambda a, b: a + b),
    P("v_pk_sub_u16", "u16", 2, lambda a, b: a - b),
    P("v_pk_add_i16", "i16", 2, lambda a, b: a + b),
    P("v_pk_sub_i16", "i16", 2, lambda a, b: a - b),
    P("v_pk_mul_lo_u16", "u16", 2, lambda a, b: a * b),
    P("v_pk_mad_u16", "u16", 3, lambda a, b, c: a * b + c),
    P("v_pk_mad_i16", "i16", 3, lambda a, b, c: a * b + c),
    P("v_pk_max_i16", "i16", 2, np.maximum), P("v_pk_min_i16", "i16", 2, np.minimum),
    P("v_pk_max_u16", "u16", 2, np.maximum), P("v_pk_min_u16", "u16", 2, np.minimum),
    Op("v_pk_lshlrev_b16", "vop3p", "u16", "u16 u16", lambda a, b: b << (a & u16(15)), C),
    Op("v_pk_lshrrev_b16", "vop3p", "u16", "u16 u16", lambda a, b: b >> (a & u16(15)), C),
    Op("v_pk_ashrrev_i16", "vop3p", "i16", "u16 i16", lambda a, b: b >> (a & u16(15)).astype(np.int16), C),
    Op("v_dot2_f32_f16", "valu", "f32", "b32 b32 f32", _dot2("f16"), C),
    Op("v_dot2_f32_bf16", "valu", "f32", "b32 b32 f32", _dot2("bf16"), C),
    Op("v_fma_mix_f32", "mix", "f32", "", lambda a, b, c: fma(a, b, c, f32), C),
    Op("v_fma_mixlo_f16", "mix", "f16", "lo", lambda a, b, c: fma_mix_f16(a, b, c), C_MIX16),
    Op("v_fma_mixhi_f16", "mix", "f16", "hi", lambda a, b, c: fma_mix_f16(a, b, c), C_MIX16),
)
