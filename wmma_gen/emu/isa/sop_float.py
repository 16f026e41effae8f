"""RDNA3.5 / RDNA4 scalar floating point (gfx1150, gfx1151, gfx12): SOP1 / SOP2 / SOPC rows.

RDNA3.5 ISA guide §6.8 "SALU Floating Point": the scalar float instructions "produce
identical results with their VALU counterparts" (no operand modifiers); S_CMP_* set SCC,
the others leave it; F16 ops read bits [15:0] of each SGPR and write 0 to bits [31:16] of
the destination (the f16 writer zero-extends). Per-opcode pseudo-code: §16.1 SOP2, §16.3
SOP1, §16.4 SOPC. Names and operand order as llvm/docs/AMDGPU/AMDGPUAsmGFX1150.rst; LLVM
gates them on FeatureSALUFloatInsts (SOPInstructions.td `HasSALUFloatInsts`), which only
the gfx115x processors have. Float behaviour (denormals kept, RNE, correctly rounded fma,
VALU conversion rules) is vop_float's; min/max follow the §16 V_MIN_F32 pseudo-code in IEEE
mode: a signalling NaN operand gives its quieted NaN, a quiet NaN loses, -0 < +0.
"""
from __future__ import annotations

import numpy as np

from .ieee import _quiet, ieee_max, ieee_min, num_max, num_min
from .table import GFX12, SALU_FLOAT, Op, rows
from .vop_float import _cvt_pk_rtz, _ieee, _to_int, fma
from .vopc import FLOAT_CONDS

f16, f32, i32, u32 = np.float16, np.float32, np.int32, np.uint32
# FeatureSALUFloatInsts (llvm AMDGPU.td, FeatureISAVersion11_5_Common) and GFX12: llvm
# SOPInstructions.td defines these rows SOP1/SOP2/SOPC_Real_gfx11_gfx12 ("GFX1150, GFX12");
# on GFX12 s_{min,max}_f{32,16} print as s_{min,max}_num_f{32,16} (old names stay aliases).
ARCHS = SALU_FLOAT
C2, C1, CC = ("RDNA3.5 ISA §6.8, §16.1 SOP2", "RDNA3.5 ISA §6.8, §16.3 SOP1", "RDNA3.5 ISA §6.8, §16.4 SOPC")


def F(name, dst, src, fn, cite=C2):
    return Op(name, "salu", dst, src, fn, cite, archs=ARCHS)


def _cvt(dt):
    """Float conversion; a NaN comes out quiet (cvtToQuietNAN; numpy's f16<->f32 casts
    would keep a signalling NaN signalling)."""
    def fn(a):
        r = np.asarray(a).astype(dt)
        return np.where(np.isnan(r), _quiet(r), r)
    return fn


_MIN, _MAX = ieee_min, ieee_max


def _arith(t):
    ft = {"f16": f16, "f32": f32}[t]
    tt = f"{t} {t}"
    return [
        F(f"s_add_{t}", t, tt, lambda a, b: (a + b).astype(ft)),
        F(f"s_sub_{t}", t, tt, lambda a, b: (a - b).astype(ft)),
        F(f"s_mul_{t}", t, tt, lambda a, b: (a * b).astype(ft)),
        F(f"s_min_{t}", t, tt, _MIN),
        F(f"s_max_{t}", t, tt, _MAX),
        F(f"s_fmac_{t}", t, f"{tt} D", lambda a, b, d: fma(a, b, d, ft)),   # D = S0 * S1 + D
        F(f"s_ceil_{t}", t, t, np.ceil, C1), F(f"s_floor_{t}", t, t, np.floor, C1),
        F(f"s_trunc_{t}", t, t, np.trunc, C1), F(f"s_rndne_{t}", t, t, np.rint, C1),
        *[F(f"s_cmp_{c}_{t}", "SCC", tt, FLOAT_CONDS[c], CC)
          for c in ("lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt")],
    ]


SALU_FLOAT = rows(
    *_arith("f32"), *_arith("f16"),
    F("s_fmamk_f32", "f32", "f32 f32 f32", lambda a, k, b: fma(a, k, b, f32)),   # D = S0 * K + S1
    F("s_fmaak_f32", "f32", "f32 f32 f32", lambda a, b, k: fma(a, b, k, f32)),   # D = S0 * S1 + K
    F("s_cvt_pk_rtz_f16_f32", "b32", "f32 f32",                                   # round toward zero
      lambda a, b: _cvt_pk_rtz(_cvt(f32)(a), _cvt(f32)(b))),
    F("s_cvt_f32_i32", "f32", "i32", lambda a: np.asarray(a).astype(f32), C1),   # RNE
    F("s_cvt_f32_u32", "f32", "u32", lambda a: np.asarray(a).astype(f32), C1),
    F("s_cvt_i32_f32", "i32", "f32", lambda a: _to_int(a, i32), C1),            # trunc, saturate, NaN -> 0
    F("s_cvt_u32_f32", "u32", "f32", lambda a: _to_int(a, u32), C1),
    F("s_cvt_f16_f32", "f16", "f32", _cvt(f16), C1),                              # RNE, overflow -> inf
    F("s_cvt_f32_f16", "f32", "f16", _cvt(f32), C1),
    F("s_cvt_hi_f32_f16", "f32", "b32",                                           # S0[31:16] as f16
      lambda a: _cvt(f32)((np.asarray(a) >> u32(16)).astype(np.uint16).view(f16)), C1),
)

# GFX12 (RDNA4) SOP2 64-67 / 73-76 / 79-82 print as s_{min,max}_num_f{32,16} and add s_{minimum,maximum}_f{32,16}
# (optables_gfx12 "sop2"). "SALU float produces identical results with its VALU counterpart" (RDNA3.5
# §6.8; RDNA4 keeps the rule), so the _num rows take V_MIN_NUM/V_MAX_NUM's minimumNumber/maximumNumber
# (RDNA4 ISA §16.7: a signalling NaN loses to a number as well, unlike the RDNA3.5 s_min_f32 above)
# and s_minimum/s_maximum take V_MINIMUM/V_MAXIMUM's IEEE 754-2019 minimum/maximum (vop_float.FLOAT12).
C_NUM = "RDNA4 ISA §16.1 SOP2 S_MIN_NUM/S_MAX_NUM: the VALU V_MIN_NUM/V_MAX_NUM (§16.7) on one value"
SALU_FLOAT12 = rows(*[Op(f"s_{n}_num_{t}", "salu", t, f"{t} {t}", fn, C_NUM, archs=GFX12)
                      for n, fn in (("min", num_min), ("max", num_max)) for t in ("f32", "f16")],
                    *[Op(f"s_{n}_{t}", "salu", t, f"{t} {t}", _ieee(n == "maximum"),
                         "RDNA4 ISA §16.1 SOP2 S_MINIMUM/S_MAXIMUM: the VALU V_MINIMUM/V_MAXIMUM on one value",
                         archs=GFX12) for n in ("minimum", "maximum") for t in ("f32", "f16")])
