"""gfx12 fp8 / bf8 conversions (VOP1 and VOP3), one row each.

Formats: gfx12 uses the OCP 8-bit floats, fp8 = E4M3 "FN" (max 448, NaN S.1111.111 only, no inf)
and bf8 = E5M2 (IEEE-like); the byte codec is wmma_gen.numerics (the one the WMMA rows use).
Opcodes (RDNA4 ISA guide, VOP1 / VOP3 opcode tables; codeobj/optables_gfx12.py):
  VOP1 108 v_cvt_f32_fp8, 109 v_cvt_f32_bf8, 110 v_cvt_pk_f32_fp8, 111 v_cvt_pk_f32_bf8
  VOP3 873 v_cvt_pk_fp8_f32, 874 v_cvt_pk_bf8_f32, 875 v_cvt_sr_fp8_f32, 876 v_cvt_sr_bf8_f32
LLVM added them for GFX12 in PR #78414 ("supported on GFX940 (MI300)": VOP1, VOP3 and their DPP8 /
DPP16 forms; v_cvt_pk_f32_{fp8,bf8} have no DPP form, llvm-mc-22 refuses it); byte_sel syntax:
PRs #90244 (sr) and #90887 (cvt_f32).

Byte / word selection (VOP3 OPSEL bits; the decoder prints them as LLVM does, checked against
`llvm-mc-22 -mcpu=gfx1201 -show-encoding`; run/bind_alu passes the modifier named by args["sel"]):
  v_cvt_f32_{fp8,bf8}      byte_sel:N reads source byte N (N = OPSEL[0]*2 + OPSEL[1]: the two bits
                           are swapped, LLVM PR #80502); the VOP1 form reads byte 0.
  v_cvt_pk_f32_{fp8,bf8}   op_sel:[w,_] reads source word w (OPSEL[0]) and writes two f32:
                           byte 0 of the word -> D[0], byte 1 -> D[1].
  v_cvt_pk_{fp8,bf8}_f32   op_sel:[_,_,w] (OPSEL[3]) writes D.word[w] = {cvt(S1), cvt(S0)}
                           (S0 in the low byte); the other word of D keeps its value.
  v_cvt_sr_{fp8,bf8}_f32   byte_sel:N (OPSEL[3:2]) writes D.byte[N] = cvt_sr(S0, seed S1); the
                           other three bytes keep their value.

Rounding and special values of f32 -> fp8/bf8 (with MODE.FP16_OVFL = 0, what
`.amdhsa_fp16_overflow 0`, LLVM's default, starts a wave with; AMDGPUUsage.rst kernel descriptor
FP16_OVFL; the saturating mode FP16_OVFL = 1 is not modelled):
  * pk: round to nearest even, subnormals produced (numerics.f32_to_fp8_e4m3 / f32_to_bf8_e5m2).
  * sr: stochastic: the magnitude's significand, aligned to the format's minimum normal exponent
    (bits shifted out by that alignment are dropped, no sticky bit), plus the top D bits of the
    seed S1 (D = 23 - mantissa bits: 20 for fp8, 21 for bf8), truncated to the format.
  * Overflow (after rounding past max finite) and +-inf: fp8 -> NaN with the input's sign
    (E4M3 FN has no inf), bf8 -> +-inf.
  * NaN -> the canonical byte 0xFF (fp8) / 0xFE (bf8) whatever the input's sign.
  The NaN byte and the sr seed alignment are the behaviour recorded from RDNA4 hardware by an
  open-source RDNA4 emulator (its narrow_fp8, "established by GPU captures"); the guide's
  pseudo-code does not spell them out.
f8 -> f32 is exact; the f32 of an fp8/bf8 NaN is a quiet NaN (bits not pinned by the tests).
"""
from __future__ import annotations

import numpy as np

from ... import numerics
from .table import GFX12, Op, rows

u32, u64 = np.uint32, np.uint64
C = ("RDNA4 ISA guide VOP1/VOP3 V_CVT_*FP8*/*BF8* (GFX12: LLVM PR #78414); "
     "OPSEL forms per llvm-mc-22 (module doc)")

# per format: (decode, RNE encode, mantissa bits, exponent bias, canonical NaN byte, overflow byte)
_FORMATS = {
    "fp8": (numerics.fp8_e4m3_to_f32, numerics.f32_to_fp8_e4m3, 3, 7, 0xFF, 0x7F),
    "bf8": (numerics.bf8_e5m2_to_f32, numerics.f32_to_bf8_e5m2, 2, 15, 0xFE, 0x7C),
}


def _byte(x, n) -> np.ndarray:
    return ((np.asarray(x).astype(u32) >> u32(8 * n)) & u32(0xFF)).astype(np.uint8)


def encode_rne(x, fmt: str) -> np.ndarray:
    """f32 -> fp8/bf8 bytes as v_cvt_pk_*_f32 writes them (module doc: RNE, no saturation,
    canonical NaN)."""
    _, enc, _, _, nan, _ = _FORMATS[fmt]
    x = np.asarray(x, np.float32)
    code = enc(x, saturate=False)
    return np.where(np.isnan(x), np.uint8(nan), code).astype(np.uint8)


def encode_sr(x, seed, fmt: str) -> np.ndarray:
    """f32 -> fp8/bf8 bytes with stochastic rounding by `seed` (module doc), on the f32 bits."""
    _, _, man, bias, nan, over = _FORMATS[fmt]
    bits = np.asarray(x, np.float32).view(u32).astype(np.int64)
    seed = np.asarray(seed).astype(u32).astype(np.int64)
    sign = (bits >> 24) & 0x80
    mag = bits & 0x7FFFFFFF
    drop = 23 - man                                  # f32 mantissa bits the format drops
    e = (mag >> 23) - (127 - bias)                   # the format's biased exponent
    sig = (mag & 0x7FFFFF) | 0x800000
    align = np.clip(1 - e, 0, 40)                    # below min normal: shift to its exponent
    sig = np.where(align < 32, sig >> np.minimum(align, 31), 0)
    q = (sig + (seed >> (32 - drop))) >> drop        # the top `drop` seed bits round
    q = q + np.where(e > 0, (e - 1) << man, 0)       # exponent field + mantissa (carry included)
    q = np.minimum(q, over)                          # past max finite (and inf): NaN / inf
    code = (sign | q).astype(np.uint8)
    return np.where(mag > 0x7F800000, np.uint8(nan), code).astype(np.uint8)


def _cvt_f32(fmt):
    dec = _FORMATS[fmt][0]

    def fn(src, byte_sel=None):
        return dec(_byte(src, byte_sel or 0)).astype(np.float32)
    return fn


def _cvt_pk_f32(fmt):
    dec = _FORMATS[fmt][0]

    def fn(src, op_sel=None):
        word = (op_sel or (0,))[0]
        lo, hi = (dec(_byte(src, 2 * word + k)).astype(np.float32).view(u32).astype(u64) for k in (0, 1))
        return lo | (hi << u64(32))
    return fn


def _cvt_pk(fmt):
    def fn(a, b, old, op_sel=None):
        shift = u32(16 * (op_sel or (0,))[-1])
        pair = encode_rne(a, fmt).astype(u32) | (encode_rne(b, fmt).astype(u32) << u32(8))
        keep = np.asarray(old).astype(u32) & ~(u32(0xFFFF) << shift)
        return keep | (pair << shift)
    return fn


def _cvt_sr(fmt):
    def fn(x, seed, old, byte_sel=None):
        shift = u32(8 * (byte_sel or 0))
        keep = np.asarray(old).astype(u32) & ~(u32(0xFF) << shift)
        return keep | (encode_sr(x, seed, fmt).astype(u32) << shift)
    return fn


def _row(name, dst, src, fn, sel):
    return Op(name, "valu", dst, src, fn, C, GFX12, {"sel": sel})


FP8_CONVERT = rows(
    _row("v_cvt_f32_fp8", "f32", "u32", _cvt_f32("fp8"), "byte_sel"),
    _row("v_cvt_f32_bf8", "f32", "u32", _cvt_f32("bf8"), "byte_sel"),
    _row("v_cvt_pk_f32_fp8", "b64", "u32", _cvt_pk_f32("fp8"), "op_sel"),
    _row("v_cvt_pk_f32_bf8", "b64", "u32", _cvt_pk_f32("bf8"), "op_sel"),
    _row("v_cvt_pk_fp8_f32", "b32", "f32 f32 D", _cvt_pk("fp8"), "op_sel"),
    _row("v_cvt_pk_bf8_f32", "b32", "f32 f32 D", _cvt_pk("bf8"), "op_sel"),
    _row("v_cvt_sr_fp8_f32", "b32", "f32 u32 D", _cvt_sr("fp8"), "byte_sel"),
    _row("v_cvt_sr_bf8_f32", "b32", "f32 u32 D", _cvt_sr("bf8"), "byte_sel"),
)
