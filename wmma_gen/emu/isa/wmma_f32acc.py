"""Fast path of the f32-accumulating 16-bit WMMA rows (v_wmma_f32_16x16x16_{f16,bf16}, gfx11
and gfx12): D = A @ B + C with the same float64 operations as the reference path
(wmma11.planned_f32_acc), with fewer and cheaper numpy passes and reused buffers.

    A, B:  VGPR words --(one strided copy per half: A^T and B, k-major)--> int32
           --(shift, mask, x 2^112: exact f32 bits)--> f32 --> f64
    C:     f32 VGPRs --(one strided copy with cast)--> f64 (W, 16, 16)
    D = np.matmul(A^T.T, B) + C          (float64; BLAS "TN", see _k_major16)
    D finite? (one sum) --> one strided cast (RNE) into the D VGPRs (the binder's block)

Why it is bit for bit the reference path:
  * Decode is exact. An f16 (IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits) whose
    magnitude bits sit at f32 bits 27..13 is the f32 pattern of its value times 2^-112,
    subnormals included (an f16 subnormal lands on an f32 subnormal; the host does not flush
    them), and multiplying by 2^112 is exact. A bf16 is the top half of an f32.
  * The float64 operands, the matmul, the + C and the one float64 -> float32 cast are the
    reference's; np.matmul reads A through a transposed view, and BLAS sums k in the same
    order for that ("TN") as for "NN" (tests/emu/test_wmma_f32acc.py checks it on sums whose
    value depends on the order).
  * Specials leave the fast path: an f16 inf/NaN decodes to a finite value >= 2^16 and a
    bf16 one to inf/NaN, both caught by a min/max of the decoded operand; inf/NaN in C make D
    non-finite, and a D from finite operands cannot overflow float64 (|D| <= 16 * 2^256 +
    2^128), so "D.sum() is finite" holds exactly when C is finite. Then `fused_f32_acc`
    returns None and the caller runs the reference path (IEEE inf*0 via einsum, the
    canonical quiet NaN). Results beyond the f32 range round to +-inf, as in the reference.

Scratch buffers are reused per (thread, wave count): an allocation of 256 KiB or more comes
from fresh pages and costs more than the arithmetic on it. Rows with neg/abs modifiers,
f16/bf16 outputs, fp8/bf8 and integer WMMA keep their reference paths.

When the compiled kernel is available (emu/native: built on first use with the system C
compiler), `fused_f32_acc` runs it (through wmma_native.py) instead of the numpy passes below: the same operations per
wave in one pass (sum over k in order from +0, + C, one rounding), the same bits, 2-3x faster per call
(bench/emu_speed.py prints both).
It also checks gfx11 A/B replication on the way (`replicated=True`), which in numpy costs two
more passes over the operands.
"""
from __future__ import annotations

import threading

import numpy as np

from . import wmma_native
from .wmma_regs import RegPlan, into, require_replicated

_F16_MASK = np.int32(-0x70002000)           # 0x8FFFE000: bit 31 and bits 27..13
_HIGH_HALF = np.int32(-0x10000)              # 0xFFFF0000
_F16_TO_F32_SCALE = np.float32(2.0 ** 112)   # 2^(127 - 15): f32 bias minus f16 bias
_F16_DECODED_LIMIT = np.float32(2.0 ** 16)   # f16 exponent 31 (inf/NaN) decodes to >= 2^16
_local = threading.local()


def decode16_to_f32(halves, words: np.ndarray, t: str, out: np.ndarray) -> np.ndarray:
    """Exact float32 values of the 16-bit elements held two per 32-bit word in `words` (int32,
    any strides): the low halves go to view halves[0], the high halves to halves[1], both
    views of the contiguous int32 buffer `out` (together covering it), which is returned
    viewed as float32."""
    lo, hi = halves
    if t == "f16":
        np.left_shift(words, 16, out=lo)                     # low half's sign -> bit 31
        np.copyto(hi, words)                                 # high half's sign is bit 31
        np.right_shift(out, 3, out=out)                      # arithmetic: exponent at 27..23,
        np.bitwise_and(out, _F16_MASK, out=out)              # mantissa 22..13; keep sign, clear 30..28, 12..0
        f = out.view(np.float32)
        return np.multiply(f, _F16_TO_F32_SCALE, out=f)       # exact: a power-of-two scale
    if t == "bf16":
        np.left_shift(words, 16, out=lo)                     # a bf16 is the top half of an f32
        np.bitwise_and(words, _HIGH_HALF, out=hi)
        return out.view(np.float32)
    raise ValueError(f"decode16_to_f32: type {t!r}, expected 'f16' or 'bf16'")


def _scratch(w: int) -> dict:
    """Reused buffers for `w` waves, per thread; the 4 wave counts used last are kept."""
    cache = getattr(_local, "buffers", None)
    if cache is None:
        cache = _local.buffers = {}
    if w not in cache:
        if len(cache) >= 4:
            del cache[next(iter(cache))]
        f64 = lambda: np.empty((w, 16, 16))
        cache[w] = {"bits": np.empty((w, 16, 16), np.int32), "a": f64(), "b": f64(), "d": f64()}
    return cache[w]


_K_MAJOR = (0, 5, 6, 7, 8, 1, 2, 3, 4)     # (W, row bits, k bits) -> (W, k bits, row bits)


def _k_major16(regs, plan: RegPlan, k_last: bool, t: str, bits: np.ndarray, out: np.ndarray):
    """Exact float64 (W, 16 k, 16) of a 16-bit operand `regs` (W, 32, R) whose matrix `plan`
    lays out: A^T for A (plan's matrix is [m, k], k_last) or B (plan's matrix is [k, n]).
    K-major on both sides makes np.matmul(A^T.T, B) a BLAS "TN" call -- the same sums as the
    reference's "NN" (tests/emu/test_wmma_f32acc.py), at NN speed, where "NT" runs 2-3x
    slower. Elements k = 2q and 2q + 1 are the two halves of one VGPR in both layouts
    ([ISA] 7.9 tables, [CALC]), so whole words are moved and split by shifts.
    None if an element is inf or NaN (an f16 one decodes to a finite value >= 2^16)."""
    block = np.asarray(regs, np.uint32).transpose(2, 0, 1)[:, :, :plan.lanes]   # (R, W, lanes)
    if block.strides[-1] != 4:
        block = np.ascontiguousarray(block)
    half = plan.element_view(block.view(np.uint16))          # (W, 2 x 8) u16, matrix bit order
    if k_last:
        half = half.transpose(_K_MAJOR)
    low = half[:, :, :, :, 0]                               # k = 2q: the low halves, at word addresses
    if half.strides[4] != 2:
        raise ValueError("k bit 0 of the 16-bit operand is not the half of a VGPR")
    words = np.lib.stride_tricks.as_strided(block.view(np.int32), low.shape, low.strides)
    dst = bits.reshape(half.shape)
    f = decode16_to_f32((dst[:, :, :, :, 0], dst[:, :, :, :, 1]), words, t, bits)
    lim = _F16_DECODED_LIMIT if t == "f16" else np.inf     # NaN fails both comparisons
    if not (-lim < f.min() and f.max() < lim):
        return None
    np.copyto(out, f)
    return out


def _layouts(plans):
    """The kernel's view of the plans: (lane, elem, elements per VGPR, rows of the transpose)."""
    pa, pb, pc = plans
    return ((pa.lane_map, pa.elem_map, 2, True), (pb.lane_map, pb.elem_map, 2, False),
            (pc.lane_map, pc.elem_map, 1, False))


def fused_f32_acc(a, b, c, t: str, plans, out: np.ndarray | None = None, replicated: bool = False,
                  fallback=None):
    """D (W, 32, 8) uint32 for 16-bit A/B and f32 C without modifiers. plans = the reference
    path's (A plan, B plan, C/D plan). `out`: the (8, W, 32) uint32 D registers to write (the
    binder's block of the register file; each wave's A, B, C are read before its D is written).
    Waves whose A, B or C hold inf/NaN go to `fallback(a, b, c)` (the reference path, on the
    waves it is given); without one the result is None and nothing is written.
    `replicated` (gfx11): raise NotReplicated, writing no D of the waves from the one it names
    on, unless A and B hold lanes 0-15 again in lanes 16-31."""
    layouts = _layouts(plans)
    if wmma_native.available(*layouts):
        return wmma_native.run(a, b, c, layouts, (wmma_native.TYPES[t],) * 2 + (wmma_native.OUT_F32,),
                               out, replicated, fallback)
    if replicated:
        require_replicated(a, b)
    d = _numpy_f32_acc(a, b, c, t, plans, out)
    return d if d is not None or fallback is None else into(out, fallback(a, b, c))


def _numpy_f32_acc(a, b, c, t: str, plans, out: np.ndarray | None = None):
    pa, pb, pc = plans
    w = np.asarray(c).shape[0]
    s = _scratch(w)
    at = _k_major16(a, pa, True, t, s["bits"], s["a"])
    bm = None if at is None else _k_major16(b, pb, False, t, s["bits"], s["b"])
    if bm is None:
        return None
    d = np.matmul(at.transpose(0, 2, 1), bm, out=s["d"])
    cm = at                                        # A^T is dead: C goes there (a smaller working set)
    np.copyto(cm.reshape((w,) + (2,) * 8), pc.element_view(np.asarray(c, np.uint32).transpose(2, 0, 1).view(np.float32)))
    np.add(d, cm, out=d)
    if not np.isfinite(d.sum()):
        return None
    regs = out if out is not None and out.flags.c_contiguous else np.empty((pc.regs, w, 32), np.uint32)
    with np.errstate(over="ignore"):          # |D| > f32 max rounds to +-inf (RNE), as in the reference
        np.copyto(pc.element_view(regs.view(np.float32)), d.reshape((w,) + (2,) * 8), casting="same_kind")
    if out is not None and regs is not out:
        np.copyto(out, regs)
    return regs.transpose(1, 2, 0)
