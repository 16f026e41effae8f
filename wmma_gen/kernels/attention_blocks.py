"""Shared MLIR blocks of the flash-attention kernels: the swap-A/B accumulator layout, buffer
views, softmax math and precision conversions. Lane helpers live in kernels/lanes.py, the saddr
addressing in kernels/saddr.py and the visibility rule in kernels/attention_mask.py; the names
are re-exported here for the builders that import them from this module.

The attention kernels compute transposed products ("swap A/B"): S^T = K Q^T and
O^T += V^T P^T, so that the accumulator's lane column is a *query* and its rows are keys
(or head-dim rows). Everything here is about making that accumulator layout identical on
gfx11 and gfx12, so the softmax and the epilogue are written once:

    accumulator value v of lane l  <->  row 8*(l // 16) + v, column l % 16      (both families)

gfx12 has that layout natively (C/D element v is row 8*(l//16)+v; GPUOpen "Using the Matrix
Cores of AMD RDNA 4", layouts.c_coord). gfx11's C/D element v is row 2*v + l//16 (RDNA3 ISA
guide 7.9, layouts.c_coord); row r of D is row r of A, and A's row r is whatever matrix row
the lanes r and r+16 load. Loading matrix row sigma(r) = 8*(r % 2) + r // 2 into A row r
therefore puts matrix row 8*h + v into element v of half-wave h (`a_row`). The permutation
costs nothing: it only changes the row address each lane loads.

With that layout a lane holds, for its query, 8 consecutive keys 8h..8h+7 of a 16-key tile:
  gfx12: exactly the B operand run of the lane (8 elements, k = 8h + i in the builder's
         shared run order, lanes.lane_run) -> P^T is the B operand as is.
  gfx11: B needs all 16 keys in both half-waves (lanes 16-31 replicate 0-15; ISA 7.9), so
         the two halves swap their packed P values once (v_permlanex16_b32, `swap_halves`)
         and each lane puts [keys 0-7, keys 8-15] in order (`p_operand`).
Per-query row reductions are the lane's own values plus one `swap_halves`.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import amdgpu_ops as amdgpu
from ..compiler.mlir_api import rocdl_ops as rocdl
from ..compiler.mlir_api import arith, vector

from . import irb, saddr
from .irb import iadd, imax, imin, imul  # noqa: F401  (re-exported: the attention builders' index math)
from .lanes import (PERM_HI, PERM_LO, a_row, acc_row0, half_index, p_operand, perm_b32,  # noqa: F401
                    run_len, run_offset, swap_halves)  # re-exported: kernels/lanes.py owns them
from .views import flat_view, pointer_type  # noqa: F401  (re-exported: the one memref-view helper)


def i32_type() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def f32_type() -> ir.Type:
    return ir.F32Type.get()


# --- buffers --------------------------------------------------------------------------------

def global_pointer_type() -> ir.Type:
    """Function-boundary type of a buffer read as a global_tensor.GlobalTensor (saddr.pointer_type)."""
    return saddr.pointer_type()


# --- math -------------------------------------------------------------------------------------

def exp2(x: ir.Value) -> ir.Value:
    """2**x on f32 with v_exp_f32 (rocdl.exp2; no denormal range fix-up: inputs are <= 0
    and results below 2**-126 only matter as 0 for softmax)."""
    return rocdl.ROCDLExp2(x.type, x).result


def fmax(family: str, a, b):
    """max of f32 values (scalars or vectors): arith.maxnumf -> v_max_f32 on gfx11;
    arith.maximumf -> v_maximum_f32 on gfx12 (one VOP3 op; maxnumf there becomes
    v_max_num_f32 plus canonicalizing maxes). They differ only on NaN inputs."""
    if family == "gfx12":
        return arith.MaximumFOp(a, b).result
    return arith.MaxNumFOp(a, b).result


def max_kind(family: str):
    """vector.reduction kind matching `fmax`."""
    return ir.Attribute.parse("#vector.kind<maximumf>" if family == "gfx12" else "#vector.kind<maxnumf>")


def splat(v: ir.Value, n: int) -> ir.Value:
    return vector.broadcast(irb.vec(n, v.type), v)


def to_dtype(x: ir.Value, dtype: str) -> ir.Value:
    """vector<n x f32> probabilities (0 <= p <= 1) -> vector<n x f16|bf16> for the second WMMA.

    f16: v_cvt_pk_rtz_f16_f32 (rocdl.cvt.pkrtz), one instruction per pair, round toward
    zero: each p loses < 1 f16 ulp (relative < 2**-10, mean 2**-11) while l sums the
    unrounded p, so O is biased low by at most 2**-10 relative -- inside the f16 tolerance
    (tests/emu/attention_fwd_helpers.py) and half the instructions of truncf (RNE cvt + pack).
    bf16: round half away from zero on the bit pattern (add 0x8000, keep the high 16 bits):
    exact for every finite x the softmax produces (0 <= p <= 1, no NaN), one add per value
    and one v_perm per pair instead of LLVM's ~5-instruction software round-to-nearest-even;
    it differs from RNE only on exact ties (then by one bf16 ulp)."""
    n = ir.VectorType(x.type).shape[0]
    if dtype == "f16":
        f16x2 = irb.vec(2, ir.F16Type.get())
        pairs = [rocdl.CvtPkRtz(f16x2, vector.extract(x, [], [2 * i]), vector.extract(x, [], [2 * i + 1])).result
                 for i in range(n // 2)]
        words = [vector.bitcast(irb.vec(1, i32_type()), p) for p in pairs]
        packed = vector.from_elements(irb.vec(n // 2, i32_type()), [vector.extract(w, [], [0]) for w in words])
        return vector.bitcast(irb.vec(n, ir.F16Type.get()), packed)
    i32 = i32_type()
    bits = arith.bitcast(irb.vec(n, i32), x)
    bits = arith.addi(bits, splat(arith.ConstantOp(i32, 0x8000).result, n))
    halves = vector.bitcast(irb.vec(2 * n, ir.IntegerType.get_signless(16)), bits)
    hi = vector.shuffle(halves, halves, [2 * i + 1 for i in range(n)])
    return vector.bitcast(irb.vec(n, ir.BF16Type.get()), hi)


def to_dtype_out(x: ir.Value, dtype: str) -> ir.Value:
    """vector<n x f32> -> vector<n x f16|bf16>, round to nearest even (outputs)."""
    n = ir.VectorType(x.type).shape[0]
    et = ir.F16Type.get() if dtype == "f16" else ir.BF16Type.get()
    return arith.truncf(irb.vec(n, et), x)


def wmma(a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    """acc += A @ B on one 16x16x16 tile (amdgpu.wmma -> v_wmma_f32_16x16x16_{f16,bf16})."""
    return amdgpu.WMMAOp(16, 16, 16, a, b, acc).result


def recomputed(v):
    """v (an index value) through an opaque `v_mov_b32` with side effects: values derived from
    the copy are computed where it stands. LLVM can neither hoist nor CSE such inline asm (LLVM
    LangRef, "Inline Assembler Expressions": `sideeffect`), so per-lane values needed only after
    the key loop or inside its boundary-tile branch are recomputed there from the thread id
    instead of being held live across the loop (LLVM 24 otherwise spills them at head dim 256)."""
    from ..compiler.mlir_api import llvm_ops as llvm
    x = arith.index_cast(i32_type(), v)
    y = llvm.InlineAsmOp(i32_type(), [x], "v_mov_b32 $0, $1", "=v,v", has_side_effects=True).result
    return arith.index_cast(irb.index(), y)
