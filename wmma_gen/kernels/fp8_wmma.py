"""gfx12's 8-bit float WMMA operands, shared by paged decode (ops/paged_attention/fp8_tiles.py)
and MLA decode (ops/mla/fp8_native.py): both multiply an fp8 cache's bytes as they are,

    S^T = K8 @ Q8^T        v_wmma_f32_16x16x16_{fp8,bf8}_fp8   (K E4M3 / E5M2, Q E4M3)
    O^T += V8^T @ P8^T     v_wmma_f32_16x16x16_{fp8,bf8}_fp8   (V E4M3 / E5M2, P E4M3)

RDNA4 ISA guide, "V_WMMA_F32_16X16X16_FP8_FP8" / "_FP8_BF8" / "_BF8_FP8" / "_BF8_BF8" (the A
type first); GPUOpen, "Using the Matrix Cores of AMD RDNA 4" (8-bit A/B: 8 values per lane, two
VGPRs). The 8-bit A/B layout (layouts.a_coord, bits=8): lane l holds row (A) or column (B)
l % 16 and k = 8*(l//16) + i, i = 0..7 -- the 16-bit forms' run order of the builders
(lanes.run_offset / run_len), so the same row and column addresses serve, and the S^T
accumulator (C/D layout, layouts.c_coord on gfx12: lane l keys 8*(l//16) + v of its query) is
exactly the lane's P^T B run: P converts in place, no lane moves.

Quantisation (f32 -> E4M3: v_cvt_pk_fp8_f32, two values per instruction into one half of a
VGPR, round to nearest even; RDNA4 ISA guide, VOP3 "V_CVT_PK_FP8_F32"; added for GFX12 by
llvm/llvm-project#78414):

  Q  per query row: s_q = max(amax |q|, 2**-24) / 448 (448 = E4M3's largest finite value) and
     q8 = cvt(q * (448 / amax)). No value can overflow (|q8| <= 448) and the row uses the whole
     E4M3 range: every element above amax * 2**-14.8 is normal (relative error <= 2**-4),
     smaller ones carry an absolute error <= amax * 2**-10 / 448 -- against the row's dot
     products, which amax bounds, that is below the normals' 2**-4 term. s_q multiplies the
     row's exp2 factor (the row is the lane's query: one scalar per lane). `row_amax` is the
     lane's and its other half-wave's part; a kernel whose row is spread over more registers
     (MLA: over waves) maxes further before `quantize_row`.
  P  in [0, 1] after exp2; quantised as P * 2**8 (<= 256 < 448): E4M3 normals then reach
     down to P = 2**-14 (2**-6 without the shift), so weights far below the row maximum keep
     3 mantissa bits. The row sum l stays the f32 sum of the unquantised P; the 2**-8 goes
     into the epilogue's v_scale / l. Each weight's error is then <= 2**-4 P + 2**-18.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import llvm_ops as llvm
from ..compiler.mlir_api import rocdl_ops as rocdl
from ..compiler.mlir_api import arith, vector

from . import attention_blocks as ab
from . import irb
from .attention_blocks import iadd, perm_b32
from .staging.kv_tiles import thread_slots   # the copy plans' thread -> (row group, column) map

E4M3_MAX = 448.0        # OCP FP8 E4M3 largest finite value (S.1111.110 = 1.75 * 2**8)
AMAX_FLOOR = 2.0 ** -24  # an all-zero query row: scale stays finite, q8 = 0
P_SHIFT = 256.0         # P * 2**8 before E4M3 (module doc)
ZERO_BYTE = 0x0C        # v_perm_b32 selector byte 12: the byte 0x00 (RDNA3/RDNA4 ISA "V_PERM_B32")


def cache_type(kv_dtype: str) -> ir.Type:
    """The WMMA element type of the cache's bytes (or of a Q given as fp8, q_dtype)."""
    return ir.Type.parse("f8E4M3FN" if kv_dtype == "fp8e4m3" else "f8E5M2")


def to_e4m3(vals: list) -> ir.Value:
    """8 f32 values -> vector<8 x f8E4M3FN> (value i in byte i): four v_cvt_pk_fp8_f32, each
    writing bytes 2j, 2j+1 of its word (wordSel picks the half)."""
    i32 = ir.IntegerType.get_signless(32)
    words = []
    for w in range(2):
        word = llvm.PoisonOp(i32).result
        for half in range(2):
            a, b = vals[4 * w + 2 * half], vals[4 * w + 2 * half + 1]
            word = rocdl.CvtPkFp8F32Op(i32, a, b, word, bool(half)).result
        words.append(word)
    packed = vector.from_elements(irb.vec(2, i32), words)
    return vector.bitcast(irb.vec(8, ir.Type.parse("f8E4M3FN")), packed)


def f32s(x) -> list:
    """The 8 elements of a vector<8 x f16|bf16|f32> as f32 values."""
    f32 = ab.f32_type()
    if ir.VectorType(x.type).element_type != f32:
        x = arith.extf(irb.vec(8, f32), x)
    return [vector.extract(x, [], [i]) for i in range(8)]


def row_amax(fam: str, vals: list):
    """max |q| over the lane's runs (lists of f32s) and the other half-wave's (lane ^ 16 holds
    the row's other k; the call runs with every lane on), at least AMAX_FLOOR."""
    amax = irb.cf(AMAX_FLOOR, ab.f32_type())
    for run in vals:
        for v in run:
            amax = ab.fmax(fam, amax, ab.fmax(fam, v, arith.negf(v)))
    return ab.fmax(fam, amax, ab.swap_halves(amax, full_exec=True))


def quantize_row(vals: list, amax):
    """(E4M3 operands of the runs scaled by 448 / amax, s_q = amax / 448)."""
    f32 = ab.f32_type()
    r = arith.divf(irb.cf(E4M3_MAX, f32), amax)
    return ([to_e4m3([arith.mulf(v, r) for v in run]) for run in vals],
            arith.mulf(amax, irb.cf(1.0 / E4M3_MAX, f32)))


def p_operand(p) -> ir.Value:
    """P^T's B operand from the lane's 8 probabilities (vector<8 x f32>, in [0, 1]): E4M3 of
    P * 2**8, in place (module doc)."""
    k = irb.cf(P_SHIFT, ab.f32_type())
    return to_e4m3([arith.mulf(v, k) for v in f32s(p)])


def a_run(lds, row, col, kv_type):
    """The lane's 8-byte A run at LDS [row][col] (one ds_load_b64) as kv_type values."""
    raw = vector.load(irb.vec(8, ir.IntegerType.get_signless(8)), lds, [row, col])
    return vector.bitcast(irb.vec(8, kv_type), raw)


def _byte_sel(j: int) -> int:
    """v_perm_b32 selector: byte j of s1 (bytes 0-3) then byte j of s0 (bytes 4-7), two zero
    bytes above."""
    return j | (j + 4) << 8 | ZERO_BYTE << 16 | ZERO_BYTE << 24


def store_transposed(p, lds, tid, vals: list) -> None:
    """A tile's bytes (vector<w x i8> per row and chunk, as a transposed copy plan p's loads
    return them) into LDS [d][key + pad]: for each column, the g consecutive keys of the
    thread's row group as one g-byte store (g = 4: three v_perm_b32; g = 2: one; g = 1: a byte
    store)."""
    i8, i16, i32 = (ir.IntegerType.get_signless(n) for n in (8, 16, 32))
    for ps, (r0, col) in enumerate(thread_slots(p, tid)):
        for k in range(p.cpt):
            c0 = iadd(col, k * p.lpr * p.w)
            chunk = [vals[(ps * p.g + e) * p.cpt + k] for e in range(p.g)]
            if p.g == 1:
                for j in range(p.w):
                    one = vector.from_elements(irb.vec(1, i8), [vector.extract(chunk[0], [], [j])])
                    vector.store(one, lds, [iadd(c0, j), r0])
                continue
            words = [vector.bitcast(irb.vec(p.w // 4, i32), x) for x in chunk]
            for j in range(p.w):
                w = [vector.extract(x, [], [j // 4]) for x in words]
                sel = _byte_sel(j % 4)
                lo = perm_b32(w[1], w[0], sel)                        # rows 0, 1 in bytes 0, 1
                if p.g == 2:
                    two = vector.bitcast(irb.vec(2, i8), vector.from_elements(irb.vec(1, i16), [arith.trunci(i16, lo)]))
                    vector.store(two, lds, [iadd(c0, j), r0])
                    continue
                hi = perm_b32(w[3], w[2], sel)                        # rows 2, 3
                four = perm_b32(hi, lo, ab.PERM_LO)                   # lo[15:0] | hi[15:0] << 16
                vector.store(vector.bitcast(irb.vec(4, i8), vector.from_elements(irb.vec(1, i32), [four])),
                             lds, [iadd(c0, j), r0])
