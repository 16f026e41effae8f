"""Shared MLIR blocks of the flash-attention kernels (forward; reusable by the backward).

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
         shared run order, fragments.lane_run) -> P^T is the B operand as is.
  gfx11: B needs all 16 keys in both half-waves (lanes 16-31 replicate 0-15; ISA 7.9), so
         the two halves swap their packed P values once (v_permlanex16_b32, `swap_halves`)
         and each lane puts [keys 0-7, keys 8-15] in order (`p_operand`).
Per-query row reductions are the lane's own values plus one `swap_halves`.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import _amdgpu_ops_gen as amdgpu
from ..compiler.mlir_api import _llvm_ops_gen as llvm
from ..compiler.mlir_api import _rocdl_ops_gen as rocdl
from ..compiler.mlir_api import arith, memref, vector

from . import irb

DYN = ir.ShapedType.get_dynamic_size()


def _flags():
    return ir.Attribute.parse("#arith.overflow<nsw>")


def iadd(a, b):
    """index add, no signed wrap (all attention index math is non-negative and < 2**31)."""
    return arith.AddIOp(a, irb._v(b), overflowFlags=_flags()).result


def imul(a, b):
    return arith.MulIOp(a, irb._v(b), overflowFlags=_flags()).result


def imin(a, b):
    return arith.MinSIOp(a, irb._v(b)).result


def imax(a, b):
    return arith.MaxSIOp(a, irb._v(b)).result


def i32_type() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def f32_type() -> ir.Type:
    return ir.F32Type.get()


# --- buffers --------------------------------------------------------------------------------

def pointer_type(dtype: str) -> ir.MemRefType:
    """Function-boundary type of a buffer argument: lowered to one bare pointer
    (use-bare-ptr-memref-call-conv, compiler/pipeline.py)."""
    return ir.MemRefType.get([1], irb.storage_type(dtype))


def flat_view(ptr: ir.Value, dtype: str) -> ir.Value:
    """`ptr` re-viewed as memref<?xT>: the kernels index it with their own i32 offsets
    (base + row * row_stride + col), so any strided layout is a matter of scalar strides."""
    t = ir.MemRefType.get([DYN], irb.storage_type(dtype))
    return memref.ReinterpretCastOp(t, ptr, [], [irb.c(2 ** 31 - 1)], [], [0], [DYN], [1]).result


def load_run(view: ir.Value, dtype: str, idx, n: int) -> ir.Value:
    """vector<n x T> at flat element index idx (a contiguous run)."""
    return vector.load(irb.vec(n, irb.storage_type(dtype)), view, [idx])


def global_pointer_type() -> ir.Type:
    """Function-boundary type of a buffer read through `global_load`: a global-address-space
    pointer (one 8-byte kernarg, like the bare-pointer memrefs)."""
    return ir.Type.parse("!llvm.ptr<1>")


def global_load(ptr: ir.Value, byte_off: ir.Value, n: int, dtype: str, imm: int = 0) -> ir.Value:
    """vector<n x T> at ptr + zext(byte_off) + imm, with ptr a uniform (kernel-argument)
    pointer and byte_off an unsigned 32-bit i32 offset: exactly the FLAT-global "saddr" form
    (64-bit SGPR base + zero-extended 32-bit VGPR offset + signed immediate; RDNA3 ISA guide
    ch. 10 "Global, Scratch and Flat", LLVM AMDGPU syntax `vaddr`), so a load costs no 64-bit
    address arithmetic. imm must fit the immediate field (13-bit signed on gfx11, 24 on gfx12);
    callers keep it below 4096. Alignment is the element's (b128 loads need none on global)."""
    i8, i64 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(64)
    dyn = -2 ** 31  # LLVM::GEPOp::kDynamicIndex
    flags = ir.IntegerAttr.get(i32_type(), 7)  # inbounds | nusw | nuw
    z = llvm.ZExtOp(i64, byte_off).result
    p = llvm.GEPOp(ptr.type, ptr, [z], ir.DenseI32ArrayAttr.get([dyn]), ir.TypeAttr.get(i8), flags).result
    if imm:
        p = llvm.GEPOp(ptr.type, p, [], ir.DenseI32ArrayAttr.get([imm]), ir.TypeAttr.get(i8), flags).result
    et = irb.storage_type(dtype)
    return llvm.LoadOp(irb.vec(n, et), p, alignment=ir.IntegerAttr.get(i64, et.width // 8)).result


def byte_offset(elems, dtype: str) -> ir.Value:
    """An index-typed element offset (>= 0, < 2**31) as the i32 byte offset `global_load` takes."""
    e = arith.index_cast(i32_type(), elems)
    return arith.MulIOp(e, arith.ConstantOp(i32_type(), irb.storage_type(dtype).width // 8).result,
                        overflowFlags=ir.Attribute.parse("#arith.overflow<nuw>")).result


# --- lanes ------------------------------------------------------------------------------------

def swap_halves(x: ir.Value, full_exec: bool = False) -> ir.Value:
    """The value of lane l ^ 16 (v_permlanex16_b32 with identity lane selects: lane i of each
    16-lane row reads lane i of the other row; RDNA3 ISA guide 6.x "V_PERMLANEX16_B32",
    same instruction on RDNA4). Works on f32 or i32 values.

    The instruction's destination is also its "old" operand (kept where the source lane is
    inactive). By default the old value is x itself, which costs a v_mov (x stays live);
    full_exec=True states that every lane is active at the call (no divergent branch around
    it), so the old value is never read and is passed as poison."""
    i32 = i32_type()
    v = x if x.type == i32 else arith.bitcast(i32, x)
    lo = arith.ConstantOp(i32, 0x76543210).result
    hi = arith.ConstantOp(i32, -0x1234568).result  # 0xfedcba98
    old = llvm.PoisonOp(i32).result if full_exec else v
    r = rocdl.PermlaneX16Op(i32, old, v, lo, hi, False, False).result
    return r if x.type == i32 else arith.bitcast(x.type, r)


PERM_LO = 0x05040100  # perm_b32(b, a, PERM_LO) = a[15:0] | b[15:0] << 16
PERM_HI = 0x07060302  # perm_b32(b, a, PERM_HI) = a[31:16] | b[31:16] << 16


def perm_b32(s0: ir.Value, s1: ir.Value, sel: int) -> ir.Value:
    """v_perm_b32 (llvm.amdgcn.perm): byte i of the result is byte sel[i] of the 8-byte value
    {s0, s1} (s1 = bytes 0-3, s0 = bytes 4-7) for selector bytes 0-7 (RDNA3 ISA guide,
    "V_PERM_B32"; same on RDNA4). i32 operands."""
    i32 = i32_type()
    c = arith.ConstantOp(i32, sel).result
    return llvm.CallIntrinsicOp(i32, "llvm.amdgcn.perm", [s0, s1, c], [], ir.DenseI32ArrayAttr.get([])).results[0]


def run_len(family: str) -> int:
    """Elements of the contiguous K run a lane holds of an A or B fragment."""
    return 16 if family == "gfx11" else 8


def run_offset(family: str, lane):
    """First k of the lane's run: 0 on gfx11 (16 elements, halves replicate), 8*(l//16) on
    gfx12 (the builder's shared run order; layouts.py / fragments.lane_run)."""
    if family == "gfx11":
        return irb.c(0)
    return imul(irb.div(lane, 16), 8)


def a_row(family: str, lane):
    """Matrix row the lane loads into an A fragment so that accumulator value v of lane l is
    row 8*(l//16)+v on both families (module docstring): sigma(r) = 8*(r%2) + r//2 on gfx11."""
    m = irb.rem(lane, 16)
    if family == "gfx11":
        return iadd(imul(irb.rem(m, 2), 8), irb.div(m, 2))
    return m


def acc_row0(lane):
    """Row of accumulator value 0 of the lane (value v is row acc_row0 + v)."""
    return imul(irb.div(lane, 16), 8)


def half_index(lane):
    """0 for lanes 0-15, 1 for lanes 16-31."""
    return irb.div(lane, 16)


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


def p_operand(family: str, p: ir.Value, lane, full_exec: bool = False) -> ir.Value:
    """The B operand (16 keys x 16 queries) of O^T += V^T P^T from the lane's 8 converted
    probabilities (keys 8h..8h+7 of a 16-key tile, vector<8 x f16|bf16>).

    gfx12: the lane's run is exactly these 8 keys -> returned as is.
    gfx11: both half-waves need keys 0..15 in order: swap the 4 packed registers with the
    other half (v_permlanex16_b32) and order [half 0's keys, half 1's keys]. full_exec: as
    in swap_halves."""
    if family == "gfx12":
        return p
    i32 = i32_type()
    et = ir.VectorType(p.type).element_type
    own = vector.bitcast(irb.vec(4, i32), p)
    first = irb.lt(lane, 16)
    regs_lo, regs_hi = [], []
    for r in range(4):
        mine = vector.extract(own, [], [r])
        other = swap_halves(mine, full_exec)
        regs_lo.append(arith.select(first, mine, other))
        regs_hi.append(arith.select(first, other, mine))
    packed = vector.from_elements(irb.vec(8, i32), regs_lo + regs_hi)
    return vector.bitcast(irb.vec(16, et), packed)


def wmma(a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    """acc += A @ B on one 16x16x16 tile (amdgpu.wmma -> v_wmma_f32_16x16x16_{f16,bf16})."""
    return amdgpu.WMMAOp(16, 16, 16, a, b, acc).result
