"""Every gfx12 (RDNA4) WMMA row of wmma_gen.emu.isa.wmma12 against numpy matmul.

Operands are packed by the routines below, written from AMD's matrix instruction calculator
(ROCm/amd_matrix_instruction_calculator 1.3.2, InstCalcGfx12, wave32) in slot form, not from
ops_wmma12 or wmma_gen.layouts. Lane l = 16*h + r (r = row of A / column of B), slot e =
element e of the lane's VGPRs taken as one little-endian bit string (e * bits):
  16-bit A/B (4 VGPRs): slot e holds k = 8*(e//4) + 4*h + e%4   (lanes 0-15: k 0-3, 8-11)
  8-bit A/B (2 VGPRs), 4-bit K=16 (1 VGPR): slot e holds k = 8*h + e
  4-bit K=32 (2 VGPRs): slot e holds k = 16*h + e
  C/D 32-bit: VGPR v of lane 16*h + j holds C[8*h + v][j]; 16-bit: the same value v sits in
  half v%2 of VGPR v//2 (4 VGPRs, packed).
The calculator's own point records are checked too (test_calculator_point_records).
Tolerances: as tests/emu/test_wmma_semantics.py (gamma_17 of the accumulation type over
sum|a*b| + |c|, one output rounding); exact inputs/outputs must match bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

from wmma_gen import numerics
from wmma_gen.emu.isa.wmma12 import WMMA12_OPS
from wmma_gen.errors import EmulatorFault

RNG = 20260412
F32 = ["v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16"]
F8 = {"v_wmma_f32_16x16x16_fp8_fp8": ("fp8", "fp8"), "v_wmma_f32_16x16x16_fp8_bf8": ("fp8", "bf8"),
      "v_wmma_f32_16x16x16_bf8_fp8": ("bf8", "fp8"), "v_wmma_f32_16x16x16_bf8_bf8": ("bf8", "bf8")}
ACC16 = {"v_wmma_f16_16x16x16_f16": "f16", "v_wmma_bf16_16x16x16_bf16": "bf16"}
INTS = {"v_wmma_i32_16x16x16_iu8": (8, 16), "v_wmma_i32_16x16x16_iu4": (4, 16),
        "v_wmma_i32_16x16x32_iu4": (4, 32)}
REGS = {**{n: (4, 8) for n in F32}, **{n: (2, 8) for n in F8}, **{n: (4, 4) for n in ACC16},
        "v_wmma_i32_16x16x16_iu8": (2, 8), "v_wmma_i32_16x16x16_iu4": (1, 8), "v_wmma_i32_16x16x32_iu4": (2, 8)}


# ----------------------------------------------------------------- packing from the calculator
def slot_k(bits: int, k_dim: int, h: int, e: int) -> int:
    if bits == 16:
        return 8 * (e // 4) + 4 * h + e % 4
    return (16 if k_dim == 32 else 8) * h + e


def pack_ab(mat: np.ndarray, bits: int, is_a: bool, k_dim: int = 16) -> np.ndarray:
    """mat: raw bits, A (W, 16, K) or B (W, K, 16) -> (W, 32, nregs)."""
    w, slots = mat.shape[0], k_dim // 2
    regs = np.zeros((w, 32, slots * bits // 32), np.uint32)
    for lane in range(32):
        h, r = divmod(lane, 16)
        for e in range(slots):
            k = slot_k(bits, k_dim, h, e)
            x = (mat[:, r, k] if is_a else mat[:, k, r]).astype(np.uint32) & np.uint32((1 << bits) - 1)
            regs[:, lane, e * bits // 32] |= x << np.uint32(e * bits % 32)
    return regs


def pack_c32(mat: np.ndarray) -> np.ndarray:
    regs = np.zeros((mat.shape[0], 32, 8), np.uint32)
    for lane in range(32):
        h, j = divmod(lane, 16)
        for v in range(8):
            regs[:, lane, v] = mat[:, 8 * h + v, j]
    return regs


def unpack_c32(regs: np.ndarray) -> np.ndarray:
    mat = np.zeros((regs.shape[0], 16, 16), np.uint32)
    for lane in range(32):
        h, j = divmod(lane, 16)
        for v in range(8):
            mat[:, 8 * h + v, j] = regs[:, lane, v]
    return mat


def pack_c16(mat16: np.ndarray) -> np.ndarray:
    c = pack_c32(mat16.astype(np.uint32))
    return c[..., 0::2] | (c[..., 1::2] << np.uint32(16))


def unpack_c16(regs: np.ndarray) -> np.ndarray:
    wide = np.zeros((regs.shape[0], 32, 8), np.uint32)
    wide[..., 0::2], wide[..., 1::2] = regs & np.uint32(0xFFFF), regs >> np.uint32(16)
    return unpack_c32(wide).astype(np.uint16)


# ----------------------------------------------------------------- dtype helpers
def bits16(x, t):
    return numerics.f32_to_f16_bits(x) if t == "f16" else numerics.f32_to_bf16_bits(x)


def val16(b, t):
    return (numerics.f16_bits_to_f32(b) if t == "f16" else numerics.bf16_bits_to_f32(b)).astype(np.float64)


def exact16(rng, shape, t):
    return val16(bits16(rng.integers(-16, 17, shape) / 8.0, t), t)


def bits8(x, t):
    return numerics.f32_to_fp8_e4m3(x) if t == "fp8" else numerics.f32_to_bf8_e5m2(x)


def val8(b, t):
    return (numerics.fp8_e4m3_to_f32(b) if t == "fp8" else numerics.bf8_e5m2_to_f32(b)).astype(np.float64)


def in16(name):
    return "bf16" if "bf16" in name else "f16"


def gamma(n, u):
    return n * u / (1 - n * u)


def run(name, a, b, c, **mods):
    op = WMMA12_OPS[name]
    assert (a.shape[-1], b.shape[-1], c.shape[-1]) == (op.a_regs, op.b_regs, op.c_regs)
    return np.asarray(op.fn(a, b, c, **mods), np.uint32)


def f32_case(name, w, rng, a_t, b_t):
    """Random A, B, C for a float->f32 row: (regs..., float64 A, B, C)."""
    if a_t in ("f16", "bf16"):
        a, b = exact16(rng, (w, 16, 16), a_t), exact16(rng, (w, 16, 16), b_t)
        ar, br = pack_ab(bits16(a, a_t), 16, True), pack_ab(bits16(b, b_t), 16, False)
    else:
        a = val8(bits8(rng.uniform(-6, 6, (w, 16, 16)), a_t), a_t)
        b = val8(bits8(rng.uniform(-6, 6, (w, 16, 16)), b_t), b_t)
        ar, br = pack_ab(bits8(a, a_t), 8, True), pack_ab(bits8(b, b_t), 8, False)
    c = rng.uniform(-4, 4, (w, 16, 16)).astype(np.float32)
    return ar, br, pack_c32(c.view(np.uint32)), a, b, c.astype(np.float64)


# ----------------------------------------------------------------- tests
def test_table_lists_every_gfx12_wmma_with_register_counts():
    assert {n: (o.a_regs, o.c_regs) for n, o in WMMA12_OPS.items()} == REGS
    assert all(o.a_regs == o.b_regs and "calculator" in o.cite for o in WMMA12_OPS.values())


def test_calculator_point_records():
    """Points the calculator prints for v_wmma_f32_16x16x16_f16 on gfx1201 (A[3][13] = v2{19}[31:16]
    from its equations): A[0][1] = v0{0}
    [31:16], A[0][4] = v0{16}[15:0], A[0][8] = v2{0}[15:0], D[8][0] = v0{16}, D[15][15] = v7{31}."""
    for (i, k), (reg, lane, shift) in {(0, 1): (0, 0, 16), (0, 4): (0, 16, 0), (0, 8): (2, 0, 0),
                                      (3, 13): (2, 19, 16)}.items():
        a = np.zeros((1, 16, 16), np.float32)
        a[0, i, k] = 1.0
        regs = pack_ab(bits16(a, "f16"), 16, True)
        assert regs[0, lane, reg] == np.uint32(0x3C00) << np.uint32(shift) and np.count_nonzero(regs) == 1
        b = np.zeros((1, 16, 16), np.float32)
        b[0, k, :] = 1.0                                   # D[i][:] = 1 picks out the A element
        d = unpack_c32(run(F32[0], regs, pack_ab(bits16(b, "f16"), 16, False), np.zeros((1, 32, 8), np.uint32)))
        assert (d[0].view(np.float32)[i] == 1.0).all() and d[0].view(np.float32).sum() == 16.0
    dm = np.zeros((1, 16, 16), np.uint32)
    dm[0, 8, 0], dm[0, 15, 15] = 1, 2
    regs = pack_c32(dm)
    assert regs[0, 16, 0] == 1 and regs[0, 31, 7] == 2


@pytest.mark.parametrize("name", F32 + list(F8))
@pytest.mark.parametrize("w", (1, 5))
def test_f32_accumulate_matches_matmul(name, w):
    a_t, b_t = F8.get(name, (in16(name),) * 2)
    ar, br, cr, a, b, c = f32_case(name, w, np.random.default_rng(RNG + w), a_t, b_t)
    d = unpack_c32(run(name, ar, br, cr)).view(np.float32).astype(np.float64)
    ref = a @ b + c
    bound = gamma(17, 2.0 ** -24) * (np.abs(a) @ np.abs(b) + np.abs(c)) + 2.0 ** -24 * np.abs(ref)
    assert (np.abs(d - ref) <= bound).all()


@pytest.mark.parametrize("name", F32 + list(F8) + list(ACC16))
def test_exact_results_are_bit_exact(name):
    rng = np.random.default_rng(RNG)
    a_t, b_t = F8.get(name, (in16(name),) * 2)
    if name in F8:
        a = val8(bits8(rng.integers(-4, 5, (2, 16, 16)) / 2.0, a_t), a_t)
        b = val8(bits8(rng.integers(-4, 5, (2, 16, 16)) / 2.0, b_t), b_t)
        ar, br = pack_ab(bits8(a, a_t), 8, True), pack_ab(bits8(b, b_t), 8, False)
    elif name in ACC16:                  # small integers: every sum is exact in bf16 too
        a, b = rng.integers(-1, 2, (2, 16, 16)).astype(float), rng.integers(-2, 3, (2, 16, 16)).astype(float)
        ar, br = pack_ab(bits16(a, a_t), 16, True), pack_ab(bits16(b, b_t), 16, False)
    else:
        a, b = exact16(rng, (2, 16, 16), a_t), exact16(rng, (2, 16, 16), b_t)
        ar, br = pack_ab(bits16(a, a_t), 16, True), pack_ab(bits16(b, b_t), 16, False)
    c = rng.integers(-8, 9, (2, 16, 16)) / (1.0 if name in ACC16 else 4.0)
    if name in ACC16:
        d = val16(unpack_c16(run(name, ar, br, pack_c16(bits16(c, a_t)))), a_t)
    else:
        d = unpack_c32(run(name, ar, br, pack_c32(c.astype(np.float32).view(np.uint32)))).view(np.float32)
    assert np.array_equal(d, a @ b + c)


@pytest.mark.parametrize("name", list(ACC16))
def test_16bit_accumulate_is_packed_and_rounds_once(name):
    t = ACC16[name]
    rng = np.random.default_rng(RNG + 3)
    a, b = exact16(rng, (3, 16, 16), t), exact16(rng, (3, 16, 16), t)
    c = val16(bits16(rng.uniform(-2, 2, (3, 16, 16)), t), t)
    d = val16(unpack_c16(run(name, pack_ab(bits16(a, t), 16, True), pack_ab(bits16(b, t), 16, False),
                             pack_c16(bits16(c, t)))), t)
    assert np.array_equal(d, val16(bits16(a @ b + c, t), t))   # exact sum, one RNE rounding


def test_k_order_inside_16bit_fragment_follows_the_calculator():
    """Lane 0 slot 4 is k=8 (not k=4): a fragment packed in plain k order would give the
    wrong product when only A or only B is permuted."""
    a = np.zeros((1, 16, 16), np.float32)
    a[0, 0, 8] = 1.0
    b = np.zeros((1, 16, 16), np.float32)
    b[0, 8, 0] = 1.0
    ar = np.zeros((1, 32, 4), np.uint32)
    ar[0, 0, 2] = 0x3C00                                     # v2 lane 0 [15:0] = A[0][8]
    d = unpack_c32(run(F32[0], ar, pack_ab(bits16(b, "f16"), 16, False), np.zeros((1, 32, 8), np.uint32)))
    assert d[0].view(np.float32)[0, 0] == 1.0 and np.count_nonzero(d) == 1
    assert np.array_equal(ar, pack_ab(bits16(a, "f16"), 16, True))


@pytest.mark.parametrize("name", list(F8))
def test_fp8_bf8_specials_and_no_saturation(name):
    a_t, b_t = F8[name]
    a = np.zeros((1, 16, 16), np.uint8)
    b = np.zeros((1, 16, 16), np.uint8)
    a[0, 0, :] = bits8(np.full(16, 448.0 if a_t == "fp8" else 57344.0), a_t)   # max finite
    b[0, :, 0] = bits8(np.full(16, 448.0 if b_t == "fp8" else 57344.0), b_t)
    a[0, 1, 3] = 0x7F if a_t == "fp8" else 0x7E            # NaN (E4M3 S.1111.111, E5M2 exp 31)
    b[0, 3, 1] = 0x01                                      # min subnormal: 2^-9 / 2^-16
    d = unpack_c32(run(name, pack_ab(a, 8, True), pack_ab(b, 8, False), np.zeros((1, 32, 8), np.uint32)))
    f = d[0].view(np.float32)
    big = (448.0 if a_t == "fp8" else 57344.0) * (448.0 if b_t == "fp8" else 57344.0)
    assert f[0, 0] == np.float32(16 * big)                 # f32 range, exact products
    assert d[0, 1, 1] == numerics.F32_QNAN and np.isnan(f[1]).sum() == 16
    small = a.copy()
    small[0, 1, 3] = bits8(np.array([2.0]), a_t)[0]
    f2 = unpack_c32(run(name, pack_ab(small, 8, True), pack_ab(b, 8, False),
                        np.zeros((1, 32, 8), np.uint32)))[0].view(np.float32)
    assert f2[1, 1] == np.float32(2.0 * (2.0 ** -9 if b_t == "fp8" else 2.0 ** -16))   # subnormal kept
    if "bf8" in (a_t, b_t):                                # E5M2 has inf; fp8 E4M3FN has none
        inf = a.copy() if a_t == "bf8" else b.copy()
        inf[0, 0, 0] = 0x7C
        args = (pack_ab(inf, 8, True), pack_ab(b, 8, False)) if a_t == "bf8" else \
               (pack_ab(a, 8, True), pack_ab(inf, 8, False))
        f3 = unpack_c32(run(name, *args, np.zeros((1, 32, 8), np.uint32)))[0].view(np.float32)
        assert np.isposinf(f3[0, 0])


@pytest.mark.parametrize("name", list(INTS))
@pytest.mark.parametrize("sa,sb", [(0, 0), (1, 1), (1, 0), (0, 1)])
def test_integer_signedness_and_wraparound(name, sa, sb):
    bits, kd = INTS[name]
    rng = np.random.default_rng(RNG + bits + kd)
    lo = lambda s: -(1 << (bits - 1)) if s else 0
    hi = lambda s: (1 << (bits - 1)) if s else (1 << bits)
    a = rng.integers(lo(sa), hi(sa), (3, 16, kd))
    b = rng.integers(lo(sb), hi(sb), (3, kd, 16))
    c = rng.integers(-2 ** 31, 2 ** 31, (3, 16, 16))
    d = run(name, pack_ab(a, bits, True, kd), pack_ab(b, bits, False, kd),
            pack_c32(c.astype(np.int64).astype(np.uint32)), neg_lo=(sa, sb, 0))
    assert np.array_equal(unpack_c32(d).view(np.int32), ((a @ b + c) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))


@pytest.mark.parametrize("name", list(INTS))
def test_integer_clamp_saturates(name):
    bits, kd = INTS[name]
    a = np.full((1, 16, kd), (1 << bits) - 1)
    b = np.full((1, kd, 16), (1 << bits) - 1)
    c = np.full((1, 16, 16), 2 ** 31 - 1)
    d = run(name, pack_ab(a, bits, True, kd), pack_ab(b, bits, False, kd),
            pack_c32(c.astype(np.uint32)), clamp=True)
    assert (unpack_c32(d).view(np.int32) == 2 ** 31 - 1).all()


@pytest.mark.parametrize("name", F32)
def test_float_neg_and_c_abs_modifiers(name):
    t = in16(name)
    rng = np.random.default_rng(RNG + 9)
    a, b = exact16(rng, (1, 16, 16), t), exact16(rng, (1, 16, 16), t)
    c = rng.integers(-8, 9, (1, 16, 16)) / 4.0
    ar, br = pack_ab(bits16(a, t), 16, True), pack_ab(bits16(b, t), 16, False)
    cr = pack_c32(c.astype(np.float32).view(np.uint32))
    d = unpack_c32(run(name, ar, br, cr, neg_lo=(1, 0, 1), neg_hi=(1, 0, 1))).view(np.float32)
    assert np.array_equal(d, -(a @ b) - np.abs(c))


@pytest.mark.parametrize("name,mods", [
    (F32[0], dict(op_sel=(0, 0, 1))), (F32[0], dict(clamp=True)),
    ("v_wmma_f32_16x16x16_fp8_fp8", dict(neg_lo=(1, 0, 0))),
    ("v_wmma_i32_16x16x16_iu8", dict(neg_hi=(1, 0, 0))), ("v_wmma_i32_16x16x16_iu4", dict(neg_lo=(0, 0, 1)))])
def test_unmodelled_or_undefined_modifiers_fault(name, mods):
    op = WMMA12_OPS[name]
    z = lambda n: np.zeros((1, 32, n), np.uint32)
    with pytest.raises(EmulatorFault):
        op.fn(z(op.a_regs), z(op.b_regs), z(op.c_regs), **mods)
