"""Semantics of the gfx12 (RDNA4, wave32) WMMA instructions: one table row each, with the
same `WmmaOp` interface as wmma11.py (gfx11). run/bind.py picks this table when the
Program's `.amdgcn_target` is gfx1200/gfx1201.

    D = A (16xK) * B (Kx16) + C (16x16),  K = 16 (K = 32 for v_wmma_i32_16x16x32_iu4)

`fn(a, b, c, *, neg_lo, neg_hi, op_sel, clamp)` takes raw VGPR bits, uint32 (W, 32, regs),
and returns D as uint32 (W, 32, c_regs). As on gfx11 the instruction runs with EXEC forced to
all ones and the binder requires EXEC = all ones.

Sources:
  [CALC] ROCm/amd_matrix_instruction_calculator, matrix_calculator.py VERSION 1.3.2 (commit
         2ef91896bcdc4d26624f952e5c905c787cd9bc9e), class InstCalcGfx12, wave32, dense:
         __get_input_reg / __get_input_lane / __get_output_reg_lanes and dict_insts['rdna4']
         (register counts, in_type / in_type_src1 / out_type). For A[i][k] (B[k][j]: i -> j):
           16-bit: VGPR 2*floor(k/8) + floor(k/2)%2, bits [16*(k%2)+15 : 16*(k%2)],
                   lane 16*(floor(k/4)%2) + i   (lanes 0-15 hold k 0-3, 8-11; 16-31: 4-7, 12-15)
           8-bit:  VGPR floor(k/4)%2, bits [8*(k%4)+7 : 8*(k%4)], lane 16*floor(k/8) + i
           4-bit, K=16: VGPR 0, bits [4*(k%8)+3 : 4*(k%8)], lane 16*floor(k/8) + i
           4-bit, K=32: VGPR floor(k/8)%2, bits [4*(k%8)+3 : 4*(k%8)], lane 16*floor(k/16) + i
           C/D 32-bit: VGPR i%8, lane 16*floor(i/8) + j  (value v of lane l: row 8*(l//16)+v)
           C/D 16-bit: VGPR floor(i/2)%4, bits [16*(i%2)+15 : 16*(i%2)], same lane (packed, no
                   OPSEL half selection; 4 VGPRs)
         No lane duplication: all 32 lanes carry distinct A/B data.
  [GPUOpen] "Using the Matrix Cores of AMD RDNA 4 architecture GPUs" (2025): 8 A/B elements
         per lane, lanes 16-31 hold the other K half, C/D row 8*(l//16)+v. The K order inside a
         16-bit fragment is taken from [CALC]; a GEMM is unaffected by it as long as A and B
         use the same order (the sum over k is order-free), which the generator's shared
         layouts.a_coord / b_coord guarantee.
  [LLVM] llvm AMDGPUAsmGFX12.rst VOP3P: v_wmma_f32_16x16x16_{f16,bf16,fp8_fp8,fp8_bf8,
         bf8_fp8,bf8_bf8}, v_wmma_{f16,bf16}_16x16x16_*, v_wmma_i32_16x16x16_{iu8,iu4},
         v_wmma_i32_16x16x32_iu4 with neg_lo/neg_hi/clamp modifiers.
  fp8 = OCP E4M3 "FN" and bf8 = OCP E5M2 ([CALC] dict_math_types 'fp8'/'bf8'), decoded by
         wmma_gen.numerics.

Modelled semantics (choices where the sources are silent are the gfx11 ones, see wmma11.py):
  * Float: products exact, the K products and C summed in float64, rounded ONCE (RNE) to the
    output type; denormals kept; NaN results written as the default quiet NaN; overflow to
    +-inf. fp8/bf8 products are exact in float64 (<= 4+4 significant bits).
  * neg_lo/neg_hi on f16/bf16: as gfx11 (NEG on the low / NEG_HI on the high 16-bit half of
    each A (index 0) / B (index 1) VGPR; {NEG_HI[2], NEG[2]} = {ABS, NEG} of C). On
    fp8/bf8 A/B negation is not modelled (faults); C abs/neg as for f16.
  * iu8/iu4: neg_lo[0] / neg_lo[1] = 1 make A / B signed; other neg bits must be zero; clamp
    saturates to int32, otherwise the 32-bit sum wraps.
  * op_sel must be zero (gfx12 16-bit C/D are packed, there is no half to select); clamp on a
    float WMMA is not modelled. Both fault.
"""
from __future__ import annotations

import numpy as np

from wmma_gen import numerics
from wmma_gen.errors import EmulatorFault

from .wmma11 import _DECODE16, _ENCODE16, _INT32_MAX, _INT32_MIN, WmmaOp, _elements, _fused, _modify_c, \
    _neg_ab_mask, decode_take, f32_bits, into, lane_elem, planned_f32_acc
from . import wmma_native
from .wmma_f32acc import fused_f32_acc
from .wmma_regs import RegPlan, index_plan, inverse

FAMILY = "gfx12"
T = 16


# --------------------------------------------------------------------------- index maps [CALC]
def calc_input_location(bits: int, k_dim: int, i: int, k: int) -> tuple[int, int, int]:
    """(vgpr, bit offset, lane) of A[i][k] (or B[k][i]) per [CALC] InstCalcGfx12, wave32."""
    if bits == 16:
        return 2 * (k // 8) + (k // 2) % 2, 16 * (k % 2), 16 * ((k // 4) % 2) + i
    if bits == 8:
        return (k // 4) % 2, 8 * (k % 4), 16 * (k // 8) + i
    if k_dim == 16:
        return 0, 4 * (k % 8), 16 * (k // 8) + i
    return (k // 8) % 2, 4 * (k % 8), 16 * (k // 16) + i


def calc_output_location(bits: int, i: int, j: int) -> tuple[int, int, int]:
    """(vgpr, bit offset, lane) of C/D[i][j] per [CALC] InstCalcGfx12, wave32."""
    if bits == 32:
        return i % 8, 0, 16 * (i // 8) + j
    return (i // 2) % 4, 16 * (i % 2), 16 * (i // 8) + j


def _ab_maps(bits: int, k_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(lane[16, K], elem[16, K]): A[i, k] / B[k, i] is element `elem` (bits*elem = bit
    position in the concatenated VGPRs) of lane `lane`. Checked to cover every slot once."""
    per = 32 // bits
    lane = np.zeros((T, k_dim), int)
    elem = np.zeros((T, k_dim), int)
    for i in range(T):
        for k in range(k_dim):
            r, off, ln = calc_input_location(bits, k_dim, i, k)
            lane[i, k], elem[i, k] = ln, r * per + off // bits
    used = np.zeros((32, k_dim * T // 32), int)
    np.add.at(used, (lane, elem), 1)
    if not (used == 1).all():
        raise AssertionError(f"gfx12 {bits}-bit K={k_dim} A/B map does not cover every slot once")
    return lane, elem


def _c_maps(bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(row[32, 8], col[32, 8]): value v of lane l (v = VGPR for 32-bit, 2*VGPR + half for
    16-bit) is C[row, col]."""
    row = np.full((32, 8), -1)
    col = np.full((32, 8), -1)
    for i in range(T):
        for j in range(T):
            r, off, ln = calc_output_location(bits, i, j)
            v = r if bits == 32 else 2 * r + off // 16
            row[ln, v], col[ln, v] = i, j
    if (row < 0).any():
        raise AssertionError(f"gfx12 {bits}-bit C/D map leaves a slot unused")
    return row, col


_AB = {(b, k): _ab_maps(b, k) for b, k in ((16, 16), (8, 16), (4, 16), (4, 32))}
_C = {b: _c_maps(b) for b in (32, 16)}


def _ab_plan(bits: int, k_dim: int):
    lane, elem = _AB[(bits, k_dim)]
    return index_plan(lane * (k_dim * T // 32) + elem)   # k_dim*16/32 elements per lane


_A_TAKE = {key: _ab_plan(*key) for key in _AB}
_C_FLAT = {b: row * T + col for b, (row, col) in _C.items()}      # lane-value -> matrix position
_C_TAKE = {b: (index_plan(inverse(f).reshape(T, T)), index_plan(f)) for b, f in _C_FLAT.items()}


# Register plans for 16-bit A/B (B[k, n] is the A layout transposed) and f32 C/D.
_PLANS = (RegPlan(*_AB[(16, 16)], 2, 32), RegPlan(_AB[(16, 16)][0].T, _AB[(16, 16)][1].T, 2, 32),
          RegPlan(*lane_elem(*_C[32]), 1, 32))


def gather_a(regs, bits: int, k_dim: int = 16) -> np.ndarray:
    """Raw A bits (W, 16, K) from the (W, 32, nregs) registers (elements as in wmma11._elements)."""
    return _A_TAKE[(bits, k_dim)](_elements(regs, bits))


def gather_b(regs, bits: int, k_dim: int = 16) -> np.ndarray:
    """Raw B bits (W, K, 16)."""
    return gather_a(regs, bits, k_dim).transpose(0, 2, 1)


def c_to_matrix(vals: np.ndarray, bits: int) -> np.ndarray:
    """(W, 32, 8) per-lane values (already unpacked) -> (W, 16, 16)."""
    return _C_TAKE[bits][0](np.ascontiguousarray(vals))


def matrix_to_c(m: np.ndarray, bits: int) -> np.ndarray:
    return _C_TAKE[bits][1](np.ascontiguousarray(m))


# --------------------------------------------------------------------------- semantics
_DECODE8 = {"fp8": numerics.fp8_e4m3_to_f32, "bf8": numerics.bf8_e5m2_to_f32}


def _check(name, op_sel, clamp, is_int):
    if any(op_sel):
        raise EmulatorFault(f"{name}: op_sel={tuple(op_sel)} is not modelled on gfx12 WMMA "
                            "(16-bit C/D are packed; no half to select)")
    if clamp and not is_int:
        raise EmulatorFault(f"{name}: clamp on a float gfx12 WMMA is not modelled")


def _decode_ab(regs, t, kind, neg_lo, neg_hi, name):
    idx = 0 if kind == "a" else 1
    gather = gather_a if kind == "a" else gather_b
    if t in _DECODE16:
        take = _A_TAKE[(16, 16)] if kind == "a" else (lambda e: _A_TAKE[(16, 16)](e).swapaxes(1, 2))
        return decode_take(regs, t, _neg_ab_mask(neg_lo, neg_hi, idx), take)
    if neg_lo[idx] or neg_hi[idx]:
        raise EmulatorFault(f"{name}: neg_lo/neg_hi on an fp8/bf8 {kind.upper()} operand is not modelled")
    return _DECODE8[t](gather(regs, 8).astype(np.uint8)).astype(np.float64)


def _make_f32_acc(name: str, a_t: str, b_t: str):
    def fn(a, b, c, *, neg_lo=(0, 0, 0), neg_hi=(0, 0, 0), op_sel=(0, 0, 0), clamp=False, out=None):
        _check(name, op_sel, clamp, False)
        if a_t == b_t and a_t in _DECODE16 and not any(neg_lo) and not any(neg_hi) and all(p.ok for p in _PLANS):
            return fused_f32_acc(a, b, c, a_t, _PLANS, out,                    # inf/NaN: reference path
                                 fallback=lambda a, b, c: planned_f32_acc(a, b, c, a_t, _PLANS, slice(None)))
        am = _decode_ab(a, a_t, "a", neg_lo, neg_hi, name)
        bm = _decode_ab(b, b_t, "b", neg_lo, neg_hi, name)
        cbits = _modify_c(np.asarray(c, np.uint32), neg_lo, neg_hi, 32)
        cm = c_to_matrix(cbits, 32).view(np.float32).astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            d = _fused(am, bm, cm).astype(np.float32)            # one RNE rounding
        return into(out, matrix_to_c(f32_bits(d), 32))
    return fn


def _make_16_acc(name: str, t: str):
    def fn(a, b, c, *, neg_lo=(0, 0, 0), neg_hi=(0, 0, 0), op_sel=(0, 0, 0), clamp=False):
        _check(name, op_sel, clamp, False)
        am = _decode_ab(a, t, "a", neg_lo, neg_hi, name)
        bm = _decode_ab(b, t, "b", neg_lo, neg_hi, name)
        halves = _elements(np.asarray(c, np.uint32), 16)                    # (W, 32, 8)
        halves = _modify_c(halves, neg_lo, neg_hi, 16)
        cm = _DECODE16[t](c_to_matrix(halves, 16).astype(np.uint16)).astype(np.float64)
        dh = matrix_to_c(_ENCODE16[t](_fused(am, bm, cm)).astype(np.uint32), 16)
        return dh[..., 0::2] | (dh[..., 1::2] << np.uint32(16))            # pack 2 per VGPR
    return fn


def _int_layouts(bits: int, k_dim: int):
    """(lane, elem, elements per VGPR, rows of the transpose) of A, B and C/D for the kernel
    (B[k, n] is the A layout transposed); None for K = 32, which the kernel does not do."""
    if k_dim != 16:
        return None
    lane, elem = _AB[(bits, 16)]
    pc = _PLANS[2]
    return ((lane, elem, 32 // bits, True), (lane.T, elem.T, 32 // bits, False), (pc.lane_map, pc.elem_map, 1, False))


def _make_int(name: str, bits: int, k_dim: int):
    layouts = _int_layouts(bits, k_dim)

    def fn(a, b, c, *, neg_lo=(0, 0, 0), neg_hi=(0, 0, 0), op_sel=(0, 0, 0), clamp=False, out=None):
        if any(neg_hi) or neg_lo[2]:
            raise EmulatorFault(f"{name}: neg_lo[2]={neg_lo[2]} neg_hi={tuple(neg_hi)} is undefined "
                                "for integer WMMA (must be zero)")
        _check(name, op_sel, clamp, True)
        if layouts is not None and wmma_native.available(*layouts):   # the same exact sums, compiled
            return wmma_native.run(a, b, c, layouts, wmma_native.int_types(bits, neg_lo, clamp), out)
        am = gather_a(a, bits, k_dim).astype(np.int64)
        bm = gather_b(b, bits, k_dim).astype(np.int64)
        if neg_lo[0]:
            am = numerics.sign_extend(am, bits)
        if neg_lo[1]:
            bm = numerics.sign_extend(bm, bits)
        cm = c_to_matrix(np.asarray(c, np.uint32), 32).view(np.int32).astype(np.int64)
        d = np.matmul(am, bm) + cm                 # exact: int64 never overflows here
        if clamp:
            d = np.clip(d, _INT32_MIN, _INT32_MAX)
        return into(out, matrix_to_c((d & 0xFFFFFFFF).astype(np.uint32), 32))
    return fn


_CITE = ("ROCm amd_matrix_instruction_calculator 1.3.2 InstCalcGfx12 (wave32 layouts, register "
         "counts); GPUOpen 'Using the Matrix Cores of AMD RDNA 4'; llvm AMDGPUAsmGFX12.rst VOP3P")


def _f32(name, a_t, b_t, regs, op):
    return WmmaOp(name, regs, regs, 8, _make_f32_acc(name, a_t, b_t), f"{_CITE}; opcode {op}", writes_out=True)


WMMA12_OPS: dict[str, WmmaOp] = {op.mnemonic: op for op in (
    _f32("v_wmma_f32_16x16x16_f16", "f16", "f16", 4, 64),
    _f32("v_wmma_f32_16x16x16_bf16", "bf16", "bf16", 4, 65),
    WmmaOp("v_wmma_f16_16x16x16_f16", 4, 4, 4, _make_16_acc("v_wmma_f16_16x16x16_f16", "f16"),
           f"{_CITE}; opcode 66"),
    WmmaOp("v_wmma_bf16_16x16x16_bf16", 4, 4, 4, _make_16_acc("v_wmma_bf16_16x16x16_bf16", "bf16"),
           f"{_CITE}; opcode 67"),
    WmmaOp("v_wmma_i32_16x16x16_iu8", 2, 2, 8, _make_int("v_wmma_i32_16x16x16_iu8", 8, 16),
           f"{_CITE}; opcode 68", writes_out=True),
    WmmaOp("v_wmma_i32_16x16x16_iu4", 1, 1, 8, _make_int("v_wmma_i32_16x16x16_iu4", 4, 16),
           f"{_CITE}; opcode 69", writes_out=True),
    _f32("v_wmma_f32_16x16x16_fp8_fp8", "fp8", "fp8", 2, 70),
    _f32("v_wmma_f32_16x16x16_fp8_bf8", "fp8", "bf8", 2, 71),
    _f32("v_wmma_f32_16x16x16_bf8_fp8", "bf8", "fp8", 2, 72),
    _f32("v_wmma_f32_16x16x16_bf8_bf8", "bf8", "bf8", 2, 73),
    WmmaOp("v_wmma_i32_16x16x32_iu4", 2, 2, 8, _make_int("v_wmma_i32_16x16x32_iu4", 4, 32),
           f"{_CITE}; opcode 74", writes_out=True),
)}
