"""Vector floating-point operations and conversions (VOP1 / VOP2 / VOP3), one row each.

Semantics: RDNA3 ISA guide chapter 7 (§7.1-§7.4 opcode tables, pseudo-code in §16);
names as llvm/docs/AMDGPU/AMDGPUAsmGFX11.rst. Float behaviour (denormals kept, IEEE
minNum/maxNum, correctly rounded fma, f64-evaluated transcendentals) is stated in
run/bind_alu.py's docstring. Conversions to integers saturate and map NaN to 0 (§16 V_CVT_I32_F32).
"""
from __future__ import annotations

import numpy as np

from .ieee import _is_snan, _quiet, ieee_max, ieee_min, num_max, num_min
from .table import GFX12, IEEE_MINMAX, Op, rows

f16, f32, f64 = np.float16, np.float32, np.float64
u16, u32, u64, i16, i32, i64 = np.uint16, np.uint32, np.uint64, np.int16, np.int32, np.int64
C = "RDNA3 ISA §7 / §16 VOP opcode pseudo-code"


def V(name, dst, src, fn, cite=C):
    return Op(name, "valu", dst, src, fn, cite)


def fma(a, b, c, out=f32):
    """Correctly rounded a*b+c for f16/f32: the product is exact in f64, the sum is
    rounded to odd in f64 (TwoSum error term), then rounded once to `out`."""
    a, b, c = (np.asarray(x, f64) for x in (a, b, c))
    p = a * b
    s = p + c
    bp = s - p
    err = (p - (s - bp)) + (c - bp)
    fix = np.isfinite(err) & (err != 0) & ((s.view(u64) & u64(1)) == 0)
    s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(out)


def _to_int(x, dt):
    info = np.iinfo(dt)
    x = np.asarray(x, f64)
    return np.where(np.isnan(x), 0, np.clip(np.trunc(x), info.min, info.max)).astype(dt)


def _t(fn, dt):
    """Evaluate fn in f64 and round once to dt."""
    return lambda *a: np.asarray(fn(*[np.asarray(x, f64) for x in a])).astype(dt)


def _fract(x):
    r = x - np.floor(x)
    return np.where(np.isinf(x), np.nan, np.minimum(r, np.nextafter(x.dtype.type(1), x.dtype.type(0))))


def _ldexp(x, e):
    return np.ldexp(np.asarray(x, f64), np.clip(np.asarray(e).astype(i64), -1100, 1100)).astype(np.asarray(x).dtype)


def _frexp_mant(x):
    m, _ = np.frexp(x)
    return np.where(np.isfinite(x), m, x)


def _frexp_exp(x):
    _, e = np.frexp(np.asarray(x, f64))
    return np.where(np.isfinite(x), e, 0).astype(i32)


def _class(x, mask):
    """V_CMP_CLASS: bit k of S1 tests class k: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
    4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf (§16 V_CMP_CLASS_F32)."""
    x = np.asarray(x)
    tiny = np.finfo(x.dtype).tiny
    neg = np.signbit(x)
    ax = np.abs(x)
    bits = x.view({2: u16, 4: u32, 8: u64}[x.dtype.itemsize])
    quiet_bit = {2: 9, 4: 22, 8: 51}[x.dtype.itemsize]
    isnan = np.isnan(x)
    quiet = ((bits >> quiet_bit) & 1).astype(bool)
    classes = [isnan & ~quiet, isnan & quiet, np.isneginf(x), neg & (ax >= tiny) & np.isfinite(x),
               neg & (ax < tiny) & (ax > 0), neg & (ax == 0), ~neg & (ax == 0),
               ~neg & (ax < tiny) & (ax > 0), ~neg & (ax >= tiny) & np.isfinite(x), np.isposinf(x)]
    out = np.zeros(np.broadcast(x, mask).shape, bool)
    for k, c in enumerate(classes):
        out |= c & (((mask >> k) & 1) != 0)
    return out


def _cvt_pk_rtz(a, b):
    """Two f32 -> f16 rounded toward zero, packed (§16 V_CVT_PK_RTZ_F16_F32)."""
    def rtz(x):
        x = np.asarray(x, f32)
        h = x.astype(f16)
        over = np.abs(h.astype(f32)) > np.abs(x)
        h = np.where(over & np.isfinite(x), np.nextafter(h, f16(0)), h)
        return h.view(u16).astype(u32)
    return rtz(a) | (rtz(b) << u32(16))


def _pk16(lo, hi):
    return np.asarray(lo).view(u16).astype(u32) | (np.asarray(hi).view(u16).astype(u32) << u32(16))


def _ubyte(k):
    return lambda a: ((a >> u32(8 * k)) & u32(0xFF)).astype(f32)


def _div_fixup(q, d, n):
    """Special cases of n/d; otherwise the quotient estimate q (§16 V_DIV_FIXUP_F32)."""
    q, d, n = np.broadcast_arrays(q, d, n)
    exact = (n / d).astype(q.dtype)
    special = np.isnan(d) | np.isnan(n) | (d == 0) | np.isinf(d) | np.isinf(n) | (n == 0)
    return np.where(special, exact, q)


def _exponent(x):
    """Biased exponent field of f32 values (0 for zero/denormals, 255 for inf/NaN)."""
    return ((np.asarray(x, f32).view(u32) >> u32(23)) & u32(0xFF)).astype(np.int64)


def _is_denorm(x):
    """|x| below the f32 normal range (nonzero): a denormal once rounded to f32."""
    a = np.abs(np.asarray(x, f64))
    return (a > 0) & (a < np.finfo(f32).tiny)


def _div_scale(s0, s1, s2):
    """V_DIV_SCALE_F32 (RDNA3 ISA §16 pseudo-code): returns (D, VCC). S1 is the denominator,
    S2 the numerator, S0 the one being scaled. D = S0 unless, in this order:
      S1 or S2 zero                       -> D = NaN (V_DIV_FIXUP_F32 gives the result)
      exponent(S2) - exponent(S1) >= 96   -> VCC = 1; D = S0 * 2^64 if S0 == S1 (quotient near max)
      S1 denormal                         -> D = S0 * 2^64
      1/S1 and S2/S1 denormal             -> VCC = 1; D = S0 * 2^64 if S0 == S1
      1/S1 denormal                       -> D = S0 * 2^-64
      S2/S1 denormal                      -> VCC = 1; D = S0 * 2^64 if S0 == S2 (tiny quotient)
      exponent(S2) <= 23                  -> D = S0 * 2^64 (tiny numerator)
    The VCC cases are undone by V_DIV_FMAS_F32. 'Denormal' is a nonzero magnitude below
    the f32 normal range."""
    s0, s1, s2 = (np.asarray(x, f32) for x in np.broadcast_arrays(s0, s1, s2))
    e1, e2 = _exponent(s1), _exponent(s2)
    with np.errstate(all="ignore"):
        inv = 1.0 / s1.astype(f64)
        quo = s2.astype(f64) / s1.astype(f64)
    up = (s0.astype(f64) * 2.0 ** 64).astype(f32)
    down = (s0.astype(f64) * 2.0 ** -64).astype(f32)
    cases = [  # (condition, vcc, D)
        ((s2 == 0) | (s1 == 0), False, np.full(s0.shape, np.nan, f32)),
        (e2 - e1 >= 96, True, np.where(s0 == s1, up, s0)),
        (_is_denorm(s1), False, up),
        (_is_denorm(inv) & _is_denorm(quo), True, np.where(s0 == s1, up, s0)),
        (_is_denorm(inv), False, down),
        (_is_denorm(quo), True, np.where(s0 == s2, up, s0)),
        (e2 <= 23, False, up),
    ]
    d, vcc = s0.copy(), np.zeros(s0.shape, bool)
    done = np.zeros(s0.shape, bool)
    for cond, v, val in cases:
        hit = cond & ~done
        d = np.where(hit, val, d)
        vcc = vcc | (hit & v)
        done |= cond
    return d.astype(f32), vcc


def _div_fmas(a, b, c, vcc):
    """V_DIV_FMAS_F32 (§16): fma(S0, S1, S2), scaled by 2^64 if VCC and exponent(S2) > 127
    (the denominator was scaled up) or by 2^-64 if VCC otherwise (the numerator was)."""
    r = fma(a, b, c, f64)
    scale = np.where(_exponent(c) > 127, 2.0 ** 64, 2.0 ** -64)
    return np.where(vcc, r * scale, r).astype(f32)


def _arith(t):
    ft = {"f16": f16, "f32": f32, "f64": f64}[t]
    tt = f"{t} {t}"
    return [
        V(f"v_add_{t}", t, tt, lambda a, b: a + b),
        V(f"v_sub_{t}", t, tt, lambda a, b: a - b),
        V(f"v_subrev_{t}", t, tt, lambda a, b: b - a),
        V(f"v_mul_{t}", t, tt, lambda a, b: a * b),
        V(f"v_max_{t}", t, tt, ieee_max),
        V(f"v_min_{t}", t, tt, ieee_min),
        V(f"v_fma_{t}", t, f"{tt} {t}", lambda a, b, c: fma(a, b, c, ft)),
        V(f"v_ldexp_{t}", t, f"{t} i32" if t != "f16" else f"{t} i16", _ldexp),
        V(f"v_floor_{t}", t, t, np.floor), V(f"v_ceil_{t}", t, t, np.ceil),
        V(f"v_trunc_{t}", t, t, np.trunc), V(f"v_rndne_{t}", t, t, np.rint),
        V(f"v_fract_{t}", t, t, _fract),
        V(f"v_sqrt_{t}", t, t, _t(np.sqrt, ft)),
        V(f"v_rcp_{t}", t, t, _t(lambda x: 1.0 / x, ft)),
        V(f"v_rsq_{t}", t, t, _t(lambda x: 1.0 / np.sqrt(x), ft)),
        V(f"v_frexp_mant_{t}", t, t, _frexp_mant),
        V(f"v_frexp_exp_{'i16' if t == 'f16' else 'i32'}_{t}", "i16" if t == "f16" else "i32", t, _frexp_exp),
        V(f"v_div_fixup_{t}", t, f"{tt} {t}", _div_fixup),
    ]


def _mac(t):
    ft = {"f16": f16, "f32": f32}[t]
    return [
        V(f"v_fmac_{t}", t, f"{t} {t} D", lambda a, b, c: fma(a, b, c, ft)),
        V(f"v_fmamk_{t}", t, f"{t} {t} {t}", lambda a, k, b: fma(a, k, b, ft)),   # D = S0 * K + S1
        V(f"v_fmaak_{t}", t, f"{t} {t} {t}", lambda a, b, k: fma(a, b, k, ft)),   # D = S0 * S1 + K
        V(f"v_max3_{t}", t, f"{t} {t} {t}", lambda a, b, c: ieee_max(ieee_max(a, b), c)),
        V(f"v_min3_{t}", t, f"{t} {t} {t}", lambda a, b, c: ieee_min(ieee_min(a, b), c)),
        V(f"v_med3_{t}", t, f"{t} {t} {t}", lambda a, b, c: np.fmax(np.fmin(a, b), np.fmin(np.fmax(a, b), c))),
        V(f"v_exp_{t}", t, t, _t(np.exp2, ft)),
        V(f"v_log_{t}", t, t, _t(np.log2, ft)),
        # V_SIN/V_COS take the angle in revolutions: sin(2*pi*x) (§16 V_SIN_F32)
        V(f"v_sin_{t}", t, t, _t(lambda x: np.sin(2 * np.pi * x), ft)),
        V(f"v_cos_{t}", t, t, _t(lambda x: np.cos(2 * np.pi * x), ft)),
    ]


def _mm(t, outer, inner):
    """V_MAXMIN_*: max then min; V_MINMAX_*: min then max (gfx11, §16)."""
    return V(f"v_{outer[0]}{inner[0]}_{t}", t, f"{t} {t} {t}", lambda a, b, c: inner[1](outer[1](a, b), c))


_MAX, _MIN = ("max", ieee_max), ("min", ieee_min)
_IMAX, _IMIN = ("max", np.maximum), ("min", np.minimum)

FLOAT = rows(
    *_arith("f32"), *_arith("f16"), *[r for r in _arith("f64") if "sub" not in r.mnemonic and "ldexp" not in r.mnemonic
                                      and "frexp" not in r.mnemonic and "fixup" not in r.mnemonic],
    *_mac("f32"), *_mac("f16"),
    *[_mm(t, o, i) for t in ("f32", "f16") for o, i in ((_MAX, _MIN), (_MIN, _MAX))],
    *[_mm(t, o, i) for t in ("i32", "u32") for o, i in ((_IMAX, _IMIN), (_IMIN, _IMAX))],
    V("v_div_scale_f32", "f32 lm", "f32 f32 f32", _div_scale),
    V("v_div_fmas_f32", "f32", "f32 f32 f32 VCC", _div_fmas),
    V("v_fma_dx9_zero_f32", "f32", "f32 f32 f32",
      lambda a, b, c: np.where((a == 0) | (b == 0), c + f32(0), fma(a, b, c, f32))),
    V("v_fmac_dx9_zero_f32", "f32", "f32 f32 D",
      lambda a, b, c: np.where((a == 0) | (b == 0), c + f32(0), fma(a, b, c, f32))),
    V("v_cvt_floor_i32_f32", "i32", "f32", lambda a: _to_int(np.floor(a), i32)),
    V("v_cvt_nearest_i32_f32", "i32", "f32", lambda a: _to_int(np.floor(np.asarray(a, f64) + 0.5), i32)),
    V("v_cvt_pk_i16_i32", "b32", "i32 i32", lambda a, b: _pk16(np.clip(a, -32768, 32767).astype(i16),
                                                              np.clip(b, -32768, 32767).astype(i16))),
    V("v_cvt_pk_u16_u32", "b32", "u32 u32", lambda a, b: _pk16(np.minimum(a, 65535).astype(u16),
                                                              np.minimum(b, 65535).astype(u16))),
    V("v_mul_dx9_zero_f32", "f32", "f32 f32", lambda a, b: np.where((a == 0) | (b == 0), f32(0), a * b)),
    V("v_rcp_iflag_f32", "f32", "f32", _t(lambda x: 1.0 / x, f32)),
    V("v_cvt_f32_i32", "f32", "i32", lambda a: np.asarray(a).astype(f32)),
    V("v_cvt_f32_u32", "f32", "u32", lambda a: np.asarray(a).astype(f32)),
    V("v_cvt_i32_f32", "i32", "f32", lambda a: _to_int(a, i32)),
    V("v_cvt_u32_f32", "u32", "f32", lambda a: _to_int(a, u32)),
    V("v_cvt_rpi_i32_f32", "i32", "f32", lambda a: _to_int(np.floor(np.asarray(a, f64) + 0.5), i32)),
    V("v_cvt_flr_i32_f32", "i32", "f32", lambda a: _to_int(np.floor(a), i32)),
    V("v_cvt_f16_f32", "f16", "f32", lambda a: np.asarray(a).astype(f16)),
    V("v_cvt_f32_f16", "f32", "f16", lambda a: np.asarray(a).astype(f32)),
    V("v_cvt_f16_i16", "f16", "i16", lambda a: np.asarray(a).astype(f16)),
    V("v_cvt_f16_u16", "f16", "u16", lambda a: np.asarray(a).astype(f16)),
    V("v_cvt_i16_f16", "i16", "f16", lambda a: _to_int(a, i16)),
    V("v_cvt_u16_f16", "u16", "f16", lambda a: _to_int(a, u16)),
    V("v_cvt_i32_i16", "i32", "i16", lambda a: np.asarray(a).astype(i32)),
    V("v_cvt_u32_u16", "u32", "u16", lambda a: np.asarray(a).astype(u32)),
    V("v_cvt_f64_f32", "f64", "f32", lambda a: np.asarray(a).astype(f64)),
    V("v_cvt_f32_f64", "f32", "f64", lambda a: np.asarray(a).astype(f32)),
    V("v_cvt_f64_i32", "f64", "i32", lambda a: np.asarray(a).astype(f64)),
    V("v_cvt_f64_u32", "f64", "u32", lambda a: np.asarray(a).astype(f64)),
    V("v_cvt_i32_f64", "i32", "f64", lambda a: _to_int(a, i32)),
    V("v_cvt_u32_f64", "u32", "f64", lambda a: _to_int(a, u32)),
    *[V(f"v_cvt_f32_ubyte{k}", "f32", "u32", _ubyte(k)) for k in range(4)],
    V("v_cvt_pk_rtz_f16_f32", "b32", "f32 f32", _cvt_pk_rtz),
    V("v_pack_b32_f16", "b32", "f16 f16",
      lambda a, b: np.asarray(a).view(u16).astype(u32) | (np.asarray(b).view(u16).astype(u32) << u32(16))),
)


# ---- gfx12 (RDNA4) rows ------------------------------------------------------------
# gfx12 (RDNA4) VALU float rows that gfx11 lacks: V_MAXIMUM_* / V_MINIMUM_* (VOP3).
#
# llvm VOP3Instructions.td defines V_MAXIMUM_F32/F16 and V_MINIMUM_F32/F16 under
# SubtargetPredicate HasIEEEMinimumMaximumInsts (GFX12) with the `fmaximum` / `fminimum`
# patterns: IEEE 754-2019 maximum / minimum, i.e. a NaN operand gives NaN (unlike maxNum)
# and -0 orders below +0. LLVM selects them for arith.maximumf (relu). The NaN result is the
# quieted NaN operand, S0 first (signalling before quiet, as the RDNA pseudo-code of the
# V_MAX_NUM family orders them); the exact payload is not observable in our kernels.
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
# V_MINIMUMMAXIMUM_* / V_MAXIMUMMINIMUM_* (VOP3 620-623): the inner operation on S0, S1, then the
# outer one with S2 (the V_MINMAX/V_MAXMIN structure of RDNA3.5 ISA §16.12 with IEEE maximum/minimum).
def _ieee_mm(first_max: bool):
    one, two = _ieee(first_max), _ieee(not first_max)
    return lambda a, b, c: two(one(a, b), c)


# ---- gfx12 maximumNumber / minimumNumber family (the gfx11 V_MAX_F32 etc. are renamed _NUM_) --------
# RDNA4 ISA §16.7 VOP2: V_MIN_NUM_F64 13, V_MAX_NUM_F64 14, V_MIN_NUM_F32 21, V_MAX_NUM_F32 22,
# V_MIN_NUM_F16 48, V_MAX_NUM_F16 49 -- IEEE 754-2019 minimumNumber / maximumNumber (ieee.num_max:
# any NaN loses to a number, two NaNs give S0 quieted, +0 > -0). VOP3 (RDNA4 ISA §16.12; opcodes
# optables_gfx12 553-562, 616-619): V_MIN3/MAX3_NUM = the two-operand op applied twice,
# (S0 op S1) op S2; V_MED3_NUM = the median, or V_MIN3_NUM when any operand is NaN; V_MINMAX_NUM =
# max_num(min_num(S0, S1), S2), V_MAXMIN_NUM = min_num(max_num(S0, S1), S2) -- the RDNA3.5 ISA §16.12
# V_MAX3_F32 / V_MED3_F32 / V_MINMAX_F32 pseudo-code with the _NUM operation in place of V_MAX_F32.
C_NUM2, C_NUM3 = "RDNA4 ISA §16.7 VOP2 (IEEE 754-2019 maximumNumber/minimumNumber)", \
    "RDNA4 ISA §16.12 VOP3 (built from §16.7 V_MAX_NUM/V_MIN_NUM as RDNA3.5 §16.12 V_MAX3/V_MED3/V_MINMAX)"


def _med3_num(a, b, c):
    a, b, c = np.broadcast_arrays(a, b, c)
    mx = num_max(num_max(a, b), c)
    med = np.where(mx == a, num_max(b, c), np.where(mx == b, num_max(a, c), num_max(a, b)))
    anynan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    return np.where(anynan, num_min(num_min(a, b), c), med).astype(a.dtype)


def _num_rows():
    out = []
    for t in ("f32", "f16", "f64"):
        out += [Op(f"v_max_num_{t}", "valu", t, f"{t} {t}", num_max, C_NUM2, archs=GFX12),
                Op(f"v_min_num_{t}", "valu", t, f"{t} {t}", num_min, C_NUM2, archs=GFX12)]
    for t in ("f32", "f16"):
        t3 = f"{t} {t} {t}"
        out += [Op(f"v_max3_num_{t}", "valu", t, t3, lambda a, b, c: num_max(num_max(a, b), c), C_NUM3, archs=GFX12),
                Op(f"v_min3_num_{t}", "valu", t, t3, lambda a, b, c: num_min(num_min(a, b), c), C_NUM3, archs=GFX12),
                Op(f"v_med3_num_{t}", "valu", t, t3, _med3_num, C_NUM3, archs=GFX12),
                Op(f"v_minmax_num_{t}", "valu", t, t3, lambda a, b, c: num_max(num_min(a, b), c), C_NUM3, archs=GFX12),
                Op(f"v_maxmin_num_{t}", "valu", t, t3, lambda a, b, c: num_min(num_max(a, b), c), C_NUM3, archs=GFX12)]
    return out


# ---- gfx12 pseudo-scalar transcendentals (RDNA4 ISA §7.10, opcodes VOP3 640-649) ------------------
# "VALU ops that operate on a single lane of data where both the source and destination are SGPRs",
# VOP3-encoded, destination in VDST; EXEC is ignored (they run with EXEC == 0); 16-bit data in bits
# [15:0] with the upper half of the destination written 0; "the usual DENORMAL and ROUND mode bits";
# the same results as their VALU equivalents (V_RCP_F32 etc., 1 ULP). Kind "salu": the scalar binder
# (one value per wave, no EXEC) runs them; the decoder reads VDST as an SGPR for a VOP3 salu row.
C_PST = "RDNA4 ISA §7.10 Pseudo-scalar Transcendental ALU ops (results as the VALU V_EXP/LOG/RCP/RSQ/SQRT)"
_TRANS = {"exp": np.exp2, "log": np.log2, "rcp": lambda x: 1.0 / x, "rsq": lambda x: 1.0 / np.sqrt(x),
          "sqrt": np.sqrt}


def _pseudo_scalar(fn, dt):
    f = _t(fn, dt)

    def run(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return f(x)
    return run


PSEUDO_SCALAR = [Op(f"v_s_{n}_{t}", "salu", t, t, _pseudo_scalar(fn, {"f32": f32, "f16": f16}[t]), C_PST,
                    archs=GFX12) for n, fn in _TRANS.items() for t in ("f32", "f16")]

FLOAT12 = rows(*[Op(f"v_{name}_{t}", "valu", t, f"{t} {t}", _ieee(name == "maximum"), CITE, archs=IEEE_MINMAX)
                 for name in ("maximum", "minimum") for t in ("f32", "f16", "f64")],
               *[Op(f"v_{name}3_{t}", "valu", t, f"{t} {t} {t}", _ieee3(name == "maximum"), CITE, archs=IEEE_MINMAX)
                 for name in ("maximum", "minimum") for t in ("f32", "f16")],
               *[Op(f"v_{n}_{t}", "valu", t, f"{t} {t} {t}", _ieee_mm(n.startswith("maximum")), CITE, archs=GFX12)
                 for n in ("maximumminimum", "minimummaximum") for t in ("f32", "f16")],
               *_num_rows(), *PSEUDO_SCALAR)
