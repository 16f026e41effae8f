"""Semantics of every gfx11 (RDNA3 / RDNA3.5, wave32) WMMA instruction: one table row each.

    D = A (16x16) * B (16x16) + C (16x16)

Each row's `fn(a, b, c, *, neg_lo, neg_hi, op_sel, clamp)` takes raw VGPR bits as uint32
arrays of shape (W, 32, regs) (W waves, 32 lanes, register index last) and returns D as
uint32 (W, 32, c_regs). EXEC is not an input: the instruction forces EXEC to all ones while
it runs (ISA pseudocode "saved_exec = EXEC; EXEC = 64'B(-1); ..."), so the binder must
write D to every lane regardless of EXEC.

Sources (cited next to the code that uses them):
  [ISA]  AMD "RDNA3.5 Instruction Set Architecture Reference Guide" (text read from the
         markdown copy woct0rdho/rdna35-isa-markdown; the RDNA3 guide of 2023-02-20 has the
         same WMMA chapter), section 7.5 "VOP3P Instruction Fields" (NEG, NEG_HI, OPSEL,
         CLMP, "V_WMMA...IU... with NEG") and section 7.9 "Wave Matrix Multiply Accumulate
         (WMMA)" with Table 33 and the wave32 VGPR layout tables.
         Not modelled here (the binder's job, run/bind_vec.py, same sections): EXEC forced to all ones; C may be
         an inline constant, replicated into both 16-bit halves for F16/BF16; A/B must be
         VGPRs; a WMMA whose D overlaps the next WMMA's A/B needs one V_NOP in between.
  [CALC] ROCm/amd_matrix_instruction_calculator, matrix_calculator.py, class InstCalcGfx11:
         A/B element k in VGPR floor(k/E) bits [b*(k%E)+b-1 : b*(k%E)] (E = 32/b elements of
         b bits per VGPR), lanes i and i+16; C/D entry (i, j) in VGPR floor(i/2), lane
         16*(i%2)+j; 16-bit C/D uses bits [15:0] with OPSEL=0 and [31:16] with OPSEL=4.
  [LLVM] llvm/lib/Target/AMDGPU/VOP3PInstructions.td (WMMAInst, WMMAType): gfx11 float WMMA
         has no clamp operand (WMMARegular / WMMAOpSel), only iu8/iu4 do (WMMAUIClamp);
         f16/bf16-accumulate WMMA exist as _TIED variants with vdst = src2.
         https://reviews.llvm.org/D158059: two f16-accumulate WMMAs with op_sel 0 and 1 write
         the low and high halves of the same D registers and both results survive, so a
         16-bit WMMA leaves the unselected half of each D VGPR unchanged.

Modelled semantics (and the choice made where the manual is silent):
  * A/B lanes 16-31: [ISA] 7.9 requires "lanes 0-15 data are replicated into lanes 16-31";
    the result for unreplicated data is unspecified. fn reads A and B from lanes 0-15 only.
    `unreplicated_waves()` reports waves whose lanes 16-31 differ so the binder can fault.
  * Float products and sums: the manual says only "fused multiply add" and RNE. We model an
    exact fused result: products of f16/bf16 are exact in float64, the 16 products and C
    are summed in float64 (error <= 2^-53 relative per add, far below an f32 ulp) and the
    sum is rounded ONCE to the output type with RNE. (f32-accumulating f16/bf16 rows without
    modifiers run the same float64 operations through wmma_f32acc.py, bit for bit.) Real hardware may round partial sums
    to f32 in some order; tests therefore allow the f32 accumulation error bound
    gamma_17 * (sum|a*b| + |c|), which covers every summation order.
  * Denormals: f16/bf16/f32 subnormal inputs are used exactly and subnormal results are
    kept (no flush). WMMA does not read the MODE register ([LLVM]: ReadsModeReg = 0) and
    the manual gives no flush rule for it; flushing would be an observable change to test.
  * NaN/inf follow IEEE (inf*0 and inf-inf give NaN; any NaN in a row of A, a column of B
    or in C gives NaN). A NaN result is written as the default quiet NaN of the output type
    (f32 0x7FC00000, f16 0x7E00, bf16 0x7FC0); the hardware payload is unspecified.
    "WMMA does not generate any ALU exceptions" [ISA 7.9].
  * Overflow: results round to +-inf (RNE overflow) for f32/f16/bf16.
  * neg_lo/neg_hi, float variants [ISA 7.9]: "NEG[1:0] is applied on SRC1 and SRC0's low
    16bit. NEG_HI[1:0] is applied on SRC1 and SRC0's high 16bit. {NEG_HI[2], NEG[2]} is
    applied on SRC2, act as {ABS, NEG}." So neg_lo[0] flips the sign of A elements in the
    low half of each VGPR (even k), neg_hi[0] of the odd k; same for B with index 1; C gets
    |C| if neg_hi[2], then -C if neg_lo[2]. Sign flips act on the raw bits (NaN keeps NaN).
  * neg_lo, iu8/iu4 [ISA 7.5, 7.9]: NEG[0]=1 -> A signed, NEG[1]=1 -> B signed, 0 ->
    unsigned; NEG[2] and NEG_HI must be zero (undefined): fn raises EmulatorFault.
  * op_sel [ISA 7.5]: OPSEL[0], OPSEL[1] are unused for WMMA (ignored). OPSEL[2] on f16/bf16
    outputs selects the half of each C/D VGPR that is read and written; the other half of D
    is left unchanged. fn has no view of the old D, so it copies the other half from C: that
    equals "unchanged" whenever D and C are the same registers, which LLVM guarantees for
    16-bit WMMA it emits with op_sel (_TIED, [LLVM]). For f32/i32 outputs OPSEL[2] must be 0
    ([ISA 7.5]: "If either the source operand or destination operand is 32bits, the
    corresponding OPSEL bit must set to zero") and fn raises EmulatorFault otherwise.
  * clamp: iu8/iu4 saturate D to [-2^31, 2^31-1] ([ISA 7.5] CLMP, signed integer); without
    clamp the 32-bit sum wraps (two's complement). The 16 products of one dot product never
    overflow int32 (|sum| <= 16*255*255), so only the final addition of C can; we saturate
    the exact final sum. Float gfx11 WMMA has no clamp operand in LLVM [LLVM] and the
    manual's float CLMP rule is untested on WMMA, so clamp=True on a float row raises.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from wmma_gen import layouts, numerics
from wmma_gen.errors import EmulatorFault

from . import wmma_native
from .wmma_f32acc import fused_f32_acc
from .wmma_regs import RegPlan, index_plan, into, inverse, reg_view, require_replicated

FAMILY = "gfx11"
T = layouts.TILE          # 16
HALF = layouts.WAVE // 2  # 16 lanes hold unique A/B data

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


@dataclass(frozen=True)
class WmmaOp:
    mnemonic: str
    a_regs: int
    b_regs: int
    c_regs: int
    fn: Callable
    cite: str
    writes_out: bool = False    # fn takes out=: the (c_regs, W, 32) uint32 D block, written in place
    checks_replication: bool = False   # fn takes replicated=True: raises NotReplicated ([ISA] 7.9)


# --------------------------------------------------------------------------- index maps
def _ab_maps(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(lane[16,16], elem[16,16]) such that A[m, k] (kind 'a') or B[k, n] (kind 'b') is
    element elem of lane lane, lanes 0-15 only. Built once from layouts.py."""
    coord = layouts.a_coord if kind == "a" else layouts.b_coord
    lane_of = np.full((T, T), -1)
    elem_of = np.full((T, T), -1)
    for lane in range(HALF):
        for i in range(layouts.ab_elements(FAMILY)):
            r, c = coord(FAMILY, lane, i)
            if lane_of[r, c] != -1:
                raise AssertionError(f"layouts.{kind}_coord maps two elements to ({r}, {c})")
            lane_of[r, c], elem_of[r, c] = lane, i
    if (lane_of < 0).any():
        raise AssertionError(f"layouts.{kind}_coord leaves part of the 16x16 tile uncovered")
    return lane_of, elem_of


def _c_maps() -> tuple[np.ndarray, np.ndarray]:
    """(row[32, 8], col[32, 8]): accumulator value v of lane l is C[row[l, v], col[l, v]]."""
    rows = np.array([[layouts.c_coord(FAMILY, l, v)[0] for v in range(8)] for l in range(32)])
    cols = np.array([[layouts.c_coord(FAMILY, l, v)[1] for v in range(8)] for l in range(32)])
    seen = np.zeros((T, T), dtype=int)
    np.add.at(seen, (rows, cols), 1)
    if not (seen == 1).all():
        raise AssertionError("layouts.c_coord does not cover the 16x16 tile exactly once")
    return rows, cols


_A_LANE, _A_ELEM = _ab_maps("a")
_B_LANE, _B_ELEM = _ab_maps("b")
_C_ROW, _C_COL = _c_maps()
# 16-bit C/D: value v sits in element c_vector_index(v, opsel) of a vector<16xT> spanning
# 8 VGPRs (two halves each): VGPR idx // 2, half idx % 2 ([CALC] regno = 2*floor(i/2)+opsel).
_C16_REG = {s: np.array([layouts.c_vector_index(FAMILY, 16, v, s) // 2 for v in range(8)])
            for s in (0, 1)}
_C16_HALF = {s: np.array([layouts.c_vector_index(FAMILY, 16, v, s) % 2 for v in range(8)])
             for s in (0, 1)}


# --------------------------------------------------------------------------- operand access
def _elements(regs: np.ndarray, bits: int) -> np.ndarray:
    """(W, 16, nregs) uint32 -> (W, 16, nregs*32/bits) raw elements; element i is in
    VGPR i // per at bits [bits*(i%per)+bits-1 : bits*(i%per)] ([CALC] _coord_to_input_reg).
    For 8/16-bit elements that is the little-endian order of the VGPR bytes, so a view
    of the registers is the element array (the host is little-endian, like the GPU)."""
    regs = np.asarray(regs, dtype=np.uint32)
    if bits in (8, 16):
        return np.ascontiguousarray(regs).view(np.uint16 if bits == 16 else np.uint8)
    per = 32 // bits
    shifts = (np.arange(per, dtype=np.uint32) * bits).astype(np.uint32)
    mask = np.uint32((1 << bits) - 1)
    e = (regs[..., None] >> shifts) & mask
    return e.reshape(*regs.shape[:-1], regs.shape[-1] * per)


_A_TAKE = index_plan(_A_LANE * 16 + _A_ELEM)       # (W, 16 lanes, 16 elems) -> A (W, m, k)
_B_TAKE = index_plan(_B_LANE * 16 + _B_ELEM)       # -> B (W, k, n)
_C_FLAT = _C_ROW * T + _C_COL                       # lane-value (32, 8) -> matrix position
_TO_MATRIX = index_plan(inverse(_C_FLAT).reshape(T, T))
_TO_C32 = index_plan(_C_FLAT)


def lane_elem(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lane[16, 16], value[16, 16]) from the per-lane maps row/col[lane, value]."""
    lane, val = np.empty((T, T), int), np.empty((T, T), int)
    ls, vs = np.meshgrid(np.arange(rows.shape[0]), np.arange(rows.shape[1]), indexing="ij")
    lane[rows, cols], val[rows, cols] = ls, vs
    return lane, val


# Register plans (wmma_regs.RegPlan): A/B 16-bit elements of lanes 0-15, C/D f32 of all lanes.
_PLANS = (RegPlan(_A_LANE, _A_ELEM, 2, HALF), RegPlan(_B_LANE, _B_ELEM, 2, HALF),
          RegPlan(*lane_elem(_C_ROW, _C_COL), 1, 32))
# 16-bit element bits (contiguous uint16) -> float64, exact.
AS_FLOAT = {"f16": lambda e: e.view(np.float16).astype(np.float64),
            "bf16": lambda e: (e.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)}


def planned_f32_acc(a, b, c, in_t: str, plans, ab_lanes: slice) -> np.ndarray:
    """D = A@B + C for 16-bit A/B and f32 C/D without modifiers, moved by register plans:
    the same values as the gather path (tests/emu/test_wmma*_semantics.py run both)."""
    pa, pb, pc = plans
    am = AS_FLOAT[in_t](pa.to_matrix(reg_view(a, 16, ab_lanes)))
    bm = AS_FLOAT[in_t](pb.to_matrix(reg_view(b, 16, ab_lanes)))
    cm = pc.to_matrix(reg_view(c, 32)).view(np.float32).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        d = _fused(am, bm, cm).astype(np.float32)           # one RNE rounding to f32
    out = pc.from_matrix(f32_bits(d), np.empty((pc.regs, am.shape[0], 32), np.uint32))
    return out.transpose(1, 2, 0)


def _gather_ab(regs: np.ndarray, bits: int, kind: str) -> np.ndarray:
    """Raw A (W, m, k) or B (W, k, n) element bits from lanes 0-15."""
    e = _elements(np.asarray(regs, dtype=np.uint32)[:, :HALF, :], bits)
    return (_A_TAKE if kind == "a" else _B_TAKE)(e)


def _c32_to_matrix(c: np.ndarray) -> np.ndarray:
    """(W, 32, 8) -> (W, 16, 16) in the register dtype."""
    return _TO_MATRIX(np.ascontiguousarray(c[:, :, :8]))


def _matrix_to_c32(d: np.ndarray) -> np.ndarray:
    return _TO_C32(np.ascontiguousarray(d))


def unreplicated_waves(regs: np.ndarray) -> np.ndarray:
    """bool (W,): True where lanes 16-31 of an A/B operand differ from lanes 0-15, i.e. the
    wave breaks the replication rule of [ISA] 7.9 and real hardware gives unspecified D."""
    regs = np.asarray(regs, dtype=np.uint32)
    return (regs[:, HALF:, :] != regs[:, :HALF, :]).any(axis=(1, 2))


# --------------------------------------------------------------------------- modifiers
def _check_common(name: str, op_sel, out_bits: int, clamp: bool, is_int: bool) -> None:
    if out_bits == 32 and op_sel[2]:
        raise EmulatorFault(f"{name}: op_sel[2]=1 with a 32-bit C/D is not allowed "
                            "(ISA 7.5: OPSEL must be zero for 32-bit operands)")
    if clamp and not is_int:
        raise EmulatorFault(f"{name}: clamp on a float gfx11 WMMA is not modelled "
                            "(LLVM gfx11 float WMMA has no clamp operand)")


def _neg_ab_mask(neg_lo, neg_hi, idx: int) -> np.uint32:
    """Sign-flip mask for the low/high 16-bit halves of each A (idx 0) or B (idx 1) VGPR."""
    return np.uint32((0x8000 if neg_lo[idx] else 0) | (0x80000000 if neg_hi[idx] else 0))


def _modify_c(bits: np.ndarray, neg_lo, neg_hi, width: int) -> np.ndarray:
    """{NEG_HI[2], NEG[2]} = {ABS, NEG} on C raw bits of `width` bits (abs first)."""
    sign = np.uint32(1 << (width - 1))
    if neg_hi[2]:
        bits = bits & ~sign
    if neg_lo[2]:
        bits = bits ^ sign
    return bits


# --------------------------------------------------------------------------- semantics
_DECODE16 = {"f16": numerics.f16_bits_to_f32, "bf16": numerics.bf16_bits_to_f32}
_ENCODE16 = {"f16": numerics.f64_to_f16_bits, "bf16": numerics.f64_to_bf16_bits}


# 16-bit element bits (uint16, contiguous) -> float64, exact.
DECODE64 = {"f16": lambda e: e.view(np.float16).astype(np.float64),
            "bf16": lambda e: (e.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)}


def decode_take(regs, t: str, neg, take) -> np.ndarray:
    """A or B as a contiguous float64 matrix: 16-bit elements of `regs` (sign bits flipped by
    `neg`), decoded elementwise, then laid out by the index plan `take`."""
    regs = np.asarray(regs, dtype=np.uint32)
    if neg:
        regs = regs ^ neg
    return np.ascontiguousarray(take(DECODE64[t](_elements(regs, 16))))


def _float_ab(a, b, in_t, neg_lo, neg_hi):
    return (decode_take(np.asarray(a)[:, :HALF, :], in_t, _neg_ab_mask(neg_lo, neg_hi, 0), _A_TAKE),
            decode_take(np.asarray(b)[:, :HALF, :], in_t, _neg_ab_mask(neg_lo, neg_hi, 1), _B_TAKE))


def _fused(am, bm, cm):
    """A@B + C accumulated in float64, rounded once by the caller. f16/bf16/fp8 products are
    exact in float64 (at most 2 x 11 significant bits), so only sums whose 17 terms span more
    than 2^53 depend on the summation order. Finite A and B take np.matmul; any inf/NaN takes
    einsum's per-term loop, which keeps IEEE rules (inf*0 = NaN) whatever BLAS does. (The sum of
    all elements is finite iff every element is: decoded 16-bit and fp8 values cannot overflow
    float64 when summed.)"""
    with np.errstate(invalid="ignore", over="ignore"):
        if np.isfinite(am.sum()) and np.isfinite(bm.sum()):
            return np.matmul(am, bm) + cm
        return np.einsum("wmk,wkn->wmn", am, bm) + cm


def f32_bits(d: np.ndarray) -> np.ndarray:
    """float32 results -> raw bits, NaN as the canonical quiet NaN."""
    nan = np.isnan(d)
    bits = d.view(np.uint32)
    return np.where(nan, numerics.F32_QNAN, bits).astype(np.uint32) if nan.any() else bits


def _make_f32_acc(name: str, in_t: str):
    def fn(a, b, c, *, neg_lo=(0, 0, 0), neg_hi=(0, 0, 0), op_sel=(0, 0, 0), clamp=False, out=None,
           replicated=False):
        _check_common(name, op_sel, 32, clamp, is_int=False)
        if not any(neg_lo) and not any(neg_hi) and all(p.ok for p in _PLANS):
            return fused_f32_acc(a, b, c, in_t, _PLANS, out, replicated,      # inf/NaN: reference path
                                 fallback=lambda a, b, c: planned_f32_acc(a, b, c, in_t, _PLANS, slice(0, HALF)))
        if replicated:
            require_replicated(a, b)
        am, bm = _float_ab(a, b, in_t, neg_lo, neg_hi)
        cbits = _modify_c(np.asarray(c, dtype=np.uint32), neg_lo, neg_hi, 32)
        cm = _c32_to_matrix(cbits).view(np.float32).astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            d = _fused(am, bm, cm).astype(np.float32)      # one RNE rounding to f32
        return into(out, _matrix_to_c32(f32_bits(d)))
    return fn


def _make_16_acc(name: str, t: str):
    def fn(a, b, c, *, neg_lo=(0, 0, 0), neg_hi=(0, 0, 0), op_sel=(0, 0, 0), clamp=False):
        _check_common(name, op_sel, 16, clamp, is_int=False)
        s = 1 if op_sel[2] else 0
        c = np.asarray(c, dtype=np.uint32)
        am, bm = _float_ab(a, b, t, neg_lo, neg_hi)
        shift = (_C16_HALF[s] * 16).astype(np.uint32)                       # (8,)
        halves = (c[:, :, _C16_REG[s]] >> shift) & np.uint32(0xFFFF)        # (W, 32, 8)
        halves = _modify_c(halves, neg_lo, neg_hi, 16)
        cm = _DECODE16[t](_c32_to_matrix(halves).astype(np.uint16)).astype(np.float64)
        dh = _ENCODE16[t](_fused(am, bm, cm)).astype(np.uint32)             # one RNE rounding
        dv = _matrix_to_c32(dh) << shift                                    # (W, 32, 8)
        keep = ~(np.uint32(0xFFFF) << shift)
        d = c.copy()                                 # other half: preserved (see docstring)
        d[:, :, _C16_REG[s]] = (c[:, :, _C16_REG[s]] & keep) | dv
        return d
    return fn


def _int_layouts(bits: int):
    """(lane, elem, elements per VGPR, rows of the transpose) of A, B and C/D for the kernel."""
    pc = _PLANS[2]
    return ((_A_LANE, _A_ELEM, 32 // bits, True), (_B_LANE, _B_ELEM, 32 // bits, False),
            (pc.lane_map, pc.elem_map, 1, False))


def _make_int(name: str, bits: int):
    layouts = _int_layouts(bits)

    def fn(a, b, c, *, neg_lo=(0, 0, 0), neg_hi=(0, 0, 0), op_sel=(0, 0, 0), clamp=False, out=None,
           replicated=False):
        if any(neg_hi) or neg_lo[2]:
            raise EmulatorFault(f"{name}: neg_lo[2]={neg_lo[2]} neg_hi={tuple(neg_hi)} is "
                                "undefined for integer WMMA (ISA 7.5/7.9: must be zero)")
        _check_common(name, op_sel, 32, clamp, is_int=True)
        if wmma_native.available(*layouts):        # the same exact sums, compiled (emu/native)
            return wmma_native.run(a, b, c, layouts, wmma_native.int_types(bits, neg_lo, clamp), out, replicated)
        if replicated:
            require_replicated(a, b)
        am = _gather_ab(a, bits, "a").astype(np.int64)
        bm = _gather_ab(b, bits, "b").astype(np.int64)
        if neg_lo[0]:
            am = numerics.sign_extend(am, bits)
        if neg_lo[1]:
            bm = numerics.sign_extend(bm, bits)
        cm = _c32_to_matrix(np.asarray(c, dtype=np.uint32)).view(np.int32).astype(np.int64)
        d = np.matmul(am, bm) + cm                 # exact: int64 never overflows here
        if clamp:
            d = np.clip(d, _INT32_MIN, _INT32_MAX)
        return into(out, _matrix_to_c32((d & 0xFFFFFFFF).astype(np.uint32)))
    return fn


_CITE = ("RDNA3 ISA guide sec. 7.9 (WMMA, Table 33, VGPR layout tables) and sec. 7.5 "
         "(VOP3P NEG/NEG_HI/OPSEL/CLMP); ROCm amd_matrix_instruction_calculator InstCalcGfx11")

WMMA_OPS: dict[str, WmmaOp] = {op.mnemonic: op for op in (
    WmmaOp("v_wmma_f32_16x16x16_f16", 8, 8, 8,
           _make_f32_acc("v_wmma_f32_16x16x16_f16", "f16"), _CITE + "; opcode 64", writes_out=True,
           checks_replication=True),
    WmmaOp("v_wmma_f32_16x16x16_bf16", 8, 8, 8,
           _make_f32_acc("v_wmma_f32_16x16x16_bf16", "bf16"), _CITE + "; opcode 65", writes_out=True,
           checks_replication=True),
    WmmaOp("v_wmma_f16_16x16x16_f16", 8, 8, 8,
           _make_16_acc("v_wmma_f16_16x16x16_f16", "f16"), _CITE + "; opcode 66"),
    WmmaOp("v_wmma_bf16_16x16x16_bf16", 8, 8, 8,
           _make_16_acc("v_wmma_bf16_16x16x16_bf16", "bf16"), _CITE + "; opcode 67"),
    WmmaOp("v_wmma_i32_16x16x16_iu8", 4, 4, 8,
           _make_int("v_wmma_i32_16x16x16_iu8", 8), _CITE + "; opcode 68", writes_out=True, checks_replication=True),
    WmmaOp("v_wmma_i32_16x16x16_iu4", 2, 2, 8,
           _make_int("v_wmma_i32_16x16x16_iu4", 4), _CITE + "; opcode 69", writes_out=True, checks_replication=True),
)}
