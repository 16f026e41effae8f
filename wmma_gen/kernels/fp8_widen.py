"""OCP 8-bit floats -> IEEE half bit patterns on the integer ALUs (gfx11 has no fp8 conversion or fp8 WMMA;
the paged kernel widens an fp8 KV cache to the 16-bit tiles its f16 WMMA reads). One 32-bit word of four
bytes b0..b3 becomes two words of halves (b0, b1) and (b2, b3), byte 0 in the low half.

Formats (OCP "8-bit Floating Point Specification (OFP8)" rev. 1.0, 2023, section 5.1; IEEE 754 binary16):
  E5M2    S.EEEEE.MM   bias 15, subnormals, +-inf S.11111.00, NaN S.11111.{01,10,11}
  E4M3FN  S.EEEE.MMM   bias 7, subnormals, no inf, NaN S.1111.111 only (largest finite 448 = S.1111.110)
  f16     S.EEEEE.MMMMMMMMMM  bias 15

E5M2 -> f16 is exact for every byte as pure placement: E5M2 is the high byte of the half (same exponent
width and bias), h = b << 8 -- zeros, subnormals, normals, inf and NaN alike. One v_perm_b32 per output word.

E4M3 -> f16 (`e4m3_words`): h = S << 15 | (b & 0x7f) << 7 keeps the 4-bit exponent field as the low bits of
the 5-bit one, so the half is x * 2**(7 - 15) = x * 2**-8 for every finite x: E4M3 normals (exponent 1..15,
value 2**(e-7) * 1.mmm) become f16 normals 2**(e-15) * 1.mmm, E4M3 subnormals (2**-6 * 0.mmm) become f16
subnormals (2**-14 * 0.mmm) -- no rounding anywhere; the caller folds the 2**8 into its scale (an exact power
of two). NaN (m = b & 0x7f = 0x7f) must land on the f16 exponent 11111, i.e. bit 14 set, which the placement
never sets for a finite value: bit 14 of the half is the NaN flag. Per input word x (RDNA3 ISA guide,
"V_PERM_B32", "V_PK_LSHLREV_B16"):

    y = (x & 0x7f7f7f7f)                         m_j                          v_and_b32
    f = y + 0x01010101                           bit 7 of byte j = [m_j == 0x7f] (m_j + 1 <= 0x80: no carry
                                                 crosses a byte)              v_add_nc_u32
    y' = (f & 0x80808080) | y                    byte j = NaN_j << 7 | m_j    v_and_or_b32
    z = x >> 7                                   bit 0 of byte j = S_j        v_lshrrev_b32
    per output word (bytes j, j+1):
      v = perm({y', z})                          half = z_j << 8 | y'_j       v_perm_b32
      h = v << 7   (two 16-bit lanes)            bit 15 = z_j bit 0 = S_j, bits 14..7 = NaN_j m_j,
                                                 bits 6..0 = 0 (the rest of z_j shifts out)   v_pk_lshlrev_b16

Eight VALU instructions per four bytes, as many as the sign/magnitude masks they replace (which mapped NaN to
480 * 2**-8), now exact for all 256 bytes (tests/emu/test_fp8_widen.py runs the machine code on every byte).
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, vector

from . import irb
from .lanes import perm_b32

ZERO = 0x0C                 # v_perm_b32 selector 12: the byte 0x00 (RDNA3 ISA guide "V_PERM_B32")
E4M3_SCALE = 256.0          # e4m3_words gives x * 2**-8: multiply the result (or a scale) by this


def _sel(*src: int) -> int:
    return src[0] | src[1] << 8 | src[2] << 16 | src[3] << 24


def _i32(v: int) -> ir.Value:
    return irb.ci(v - 2 ** 32 if v >= 2 ** 31 else v, 32)


def e5m2_words(x: ir.Value) -> list:
    """i32 of four E5M2 bytes -> [halves (b0, b1), halves (b2, b3)] as i32: b << 8 each (exact)."""
    return [perm_b32(x, x, _sel(ZERO, 2 * k, ZERO, 2 * k + 1)) for k in range(2)]


def e4m3_words(x: ir.Value) -> list:
    """i32 of four E4M3FN bytes -> [halves (b0, b1), halves (b2, b3)] as i32, each half the f16 of
    b * 2**-8 (NaN -> f16 NaN with the byte's sign), per the module docstring."""
    i16x2 = irb.vec(2, ir.IntegerType.get_signless(16))
    y = arith.andi(x, _i32(0x7F7F7F7F))
    flag = arith.andi(arith.addi(y, _i32(0x01010101)), _i32(0x80808080))
    y = arith.ori(flag, y)
    z = arith.shrui(x, _i32(7))
    seven = arith.ConstantOp(i16x2, ir.DenseElementsAttr.get_splat(i16x2, ir.IntegerAttr.get(i16x2.element_type, 7)))
    i32x1 = irb.vec(1, ir.IntegerType.get_signless(32))
    out = []
    for k in range(2):
        v = perm_b32(y, z, _sel(4 + 2 * k, 2 * k, 5 + 2 * k, 2 * k + 1))   # {S0 = y', S1 = z}: y' is bytes 4-7
        h = arith.shli(vector.bitcast(i16x2, vector.from_elements(i32x1, [v])), seven)
        out.append(vector.extract(vector.bitcast(i32x1, h), [], [0]))
    return out


def widen_words(kind: str, x: ir.Value) -> list:
    """The two half words of one fp8 word; kind "fp8e4m3" (x 2**-8) or "fp8e5m2"."""
    if kind == "fp8e4m3":
        return e4m3_words(x)
    if kind == "fp8e5m2":
        return e5m2_words(x)
    raise ValueError(f"kind={kind!r} is not allowed: fp8e4m3 or fp8e5m2")
