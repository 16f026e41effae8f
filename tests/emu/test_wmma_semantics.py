"""Every gfx11 WMMA row of wmma_gen.emu.isa.wmma11 against numpy matmul.

Operands are packed into VGPRs by the routines below, written from the RDNA3 ISA guide
sec. 7.9 VGPR tables (not from wmma_gen.layouts):
  A: VGPR r of lane j (and j+16) holds A[j][k] for k = E*r .. E*r+E-1, element k at bits
     [b*(k%E)+b-1 : b*(k%E)] (E = 32/b elements of b bits per VGPR; 16-bit: A{j}_{2r} in
     [15:0], A{j}_{2r+1} in [31:16]).
  B: same with B[k][j].
  C/D 32-bit: VGPR r of lane j holds C[2r][j], of lane 16+j holds C[2r+1][j].
  C/D 16-bit: as 32-bit but in bits [15:0] (OPSEL[2]=0) or [31:16] (OPSEL[2]=1).

Tolerances (floats): the manual fixes RNE and "fused multiply add" but not the order or the
precision of the internal partial sums. With inputs exact in f32 and u the unit roundoff of
the accumulation type, any summation order of the 17 terms has error <= gamma_17 * S with
S = sum_k |A[m,k] B[k,n]| + |C[m,n]| and gamma_n = n u / (1 - n u) (Higham, Accuracy and
Stability, eq. 3.5). We take u = 2^-24 (f32) for f32 outputs and, for f16/bf16 outputs, the
output type's u (the manual does not promise an f32 internal accumulator for those), plus
one rounding of the result (u |ref|). Exactly representable results must match bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

from wmma_gen.emu.isa.wmma11 import WMMA_OPS, unreplicated_waves
from wmma_gen.errors import EmulatorFault

RNG_SEED = 20261202
WAVES = (1, 3, 7)

F32 = "v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16"
ACC16 = "v_wmma_f16_16x16x16_f16", "v_wmma_bf16_16x16x16_bf16"
INTS = "v_wmma_i32_16x16x16_iu8", "v_wmma_i32_16x16x16_iu4"
IN_TYPE = {F32[0]: "f16", F32[1]: "bf16", ACC16[0]: "f16", ACC16[1]: "bf16"}
BITS = {INTS[0]: 8, INTS[1]: 4}


# ----------------------------------------------------------------- packing from the manual
def pack_ab(mat_bits: np.ndarray, bits: int, is_a: bool) -> np.ndarray:
    """mat_bits: (W, 16, 16) raw element bits of A[m, k] or B[k, n] -> (W, 32, nregs)."""
    w = mat_bits.shape[0]
    per = 32 // bits
    regs = np.zeros((w, 32, 16 // per), dtype=np.uint32)
    for lane in range(32):
        j = lane % 16
        for k in range(16):
            e = mat_bits[:, j, k] if is_a else mat_bits[:, k, j]
            regs[:, lane, k // per] |= (e.astype(np.uint32) & ((1 << bits) - 1)) << (bits * (k % per))
    return regs


def pack_c32(mat: np.ndarray) -> np.ndarray:
    """(W, 16, 16) uint32 -> (W, 32, 8)."""
    regs = np.zeros((mat.shape[0], 32, 8), dtype=np.uint32)
    for r in range(8):
        regs[:, 0:16, r] = mat[:, 2 * r, :]
        regs[:, 16:32, r] = mat[:, 2 * r + 1, :]
    return regs


def unpack_c32(regs: np.ndarray) -> np.ndarray:
    mat = np.zeros((regs.shape[0], 16, 16), dtype=np.uint32)
    for r in range(8):
        mat[:, 2 * r, :] = regs[:, 0:16, r]
        mat[:, 2 * r + 1, :] = regs[:, 16:32, r]
    return mat


def pack_c16(mat16: np.ndarray, opsel: int, other: np.ndarray) -> np.ndarray:
    """Place 16-bit C in half `opsel` of each VGPR; the other half comes from `other`."""
    shift = 16 * opsel
    keep = np.uint32(0xFFFF0000 if opsel == 0 else 0x0000FFFF)
    return (other & keep) | (pack_c32(mat16.astype(np.uint32)) << np.uint32(shift))


def unpack_c16(regs: np.ndarray, opsel: int) -> np.ndarray:
    return ((unpack_c32(regs) >> np.uint32(16 * opsel)) & np.uint32(0xFFFF)).astype(np.uint16)


# ----------------------------------------------------------------- dtype helpers (tests only)
def to_bits16(x: np.ndarray, t: str) -> np.ndarray:
    """Exactly representable float64 values -> 16-bit encodings."""
    if t == "f16":
        return x.astype(np.float16).view(np.uint16)
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)   # exact inputs only


def from_bits16(b: np.ndarray, t: str) -> np.ndarray:
    if t == "f16":
        return b.view(np.float16).astype(np.float64)
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def random_exact16(rng, shape, t: str) -> np.ndarray:
    """Random values exactly representable in t: 8 significant bits, exponents -6..3."""
    mant = rng.integers(-255, 256, size=shape)
    return np.ldexp(mant.astype(np.float64), rng.integers(-13, -4, size=shape))


def u_of(t: str) -> float:
    return {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}[t]


def gamma(n: int, u: float) -> float:
    return n * u / (1 - n * u)


def run(name, a_mat, b_mat, c_regs, **mods):
    op = WMMA_OPS[name]
    bits = BITS.get(name, 16)
    if name in IN_TYPE:
        a_bits, b_bits = to_bits16(a_mat, IN_TYPE[name]), to_bits16(b_mat, IN_TYPE[name])
    else:
        a_bits, b_bits = a_mat, b_mat
    a = pack_ab(a_bits, bits, True)
    b = pack_ab(b_bits, bits, False)
    assert a.shape[2] == op.a_regs and b.shape[2] == op.b_regs and c_regs.shape[2] == op.c_regs
    d = op.fn(a, b, c_regs, **mods)
    assert d.dtype == np.uint32 and d.shape == c_regs.shape
    return d


# ----------------------------------------------------------------- table shape
def test_table_lists_every_gfx11_wmma_with_register_counts():
    want = {F32[0]: (8, 8, 8), F32[1]: (8, 8, 8), ACC16[0]: (8, 8, 8), ACC16[1]: (8, 8, 8),
            INTS[0]: (4, 4, 8), INTS[1]: (2, 2, 8)}
    assert {k: (v.a_regs, v.b_regs, v.c_regs) for k, v in WMMA_OPS.items()} == want
    assert all(v.cite and v.mnemonic == k for k, v in WMMA_OPS.items())


# ----------------------------------------------------------------- f32 accumulate
@pytest.mark.parametrize("name", F32)
@pytest.mark.parametrize("w", WAVES)
def test_f32_accumulate_matches_matmul(name, w):
    rng = np.random.default_rng([RNG_SEED, w, F32.index(name)])
    t = IN_TYPE[name]
    a = random_exact16(rng, (w, 16, 16), t)
    b = random_exact16(rng, (w, 16, 16), t)
    c = rng.standard_normal((w, 16, 16)).astype(np.float32)
    d = run(name, a, b, pack_c32(c.view(np.uint32)))
    got = unpack_c32(d).view(np.float32).astype(np.float64)
    ref = a @ b + c
    bound = gamma(17, u_of("f32")) * (np.abs(a) @ np.abs(b) + np.abs(c))
    assert (np.abs(got - ref) <= bound).all()


@pytest.mark.parametrize("name", F32 + ACC16)
def test_exact_results_are_bit_exact(name):
    """Small integers: every partial sum is exact, so only the layout decides D."""
    rng = np.random.default_rng(RNG_SEED)
    t = IN_TYPE[name]
    a = rng.integers(-3, 4, size=(5, 16, 16)).astype(np.float64)
    b = rng.integers(-3, 4, size=(5, 16, 16)).astype(np.float64)
    c = rng.integers(-50, 50, size=(5, 16, 16)).astype(np.float64)
    ref = a @ b + c
    if name in F32:
        got = unpack_c32(run(name, a, b, pack_c32(c.astype(np.float32).view(np.uint32))))
        np.testing.assert_array_equal(got.view(np.float32), ref.astype(np.float32))
    else:
        for opsel in (0, 1):
            cr = pack_c16(to_bits16(c, t), opsel, np.zeros((5, 32, 8), np.uint32))
            got = unpack_c16(run(name, a, b, cr, op_sel=(0, 0, opsel)), opsel)
            np.testing.assert_array_equal(got, to_bits16(ref, t))


# ----------------------------------------------------------------- 16-bit accumulate
@pytest.mark.parametrize("name", ACC16)
@pytest.mark.parametrize("w", WAVES)
@pytest.mark.parametrize("opsel", (0, 1))
def test_16bit_accumulate_matches_matmul_and_keeps_other_half(name, w, opsel):
    rng = np.random.default_rng([RNG_SEED, w, opsel, ACC16.index(name)])
    t = IN_TYPE[name]
    a = random_exact16(rng, (w, 16, 16), t)
    b = random_exact16(rng, (w, 16, 16), t)
    c = random_exact16(rng, (w, 16, 16), t)
    other = rng.integers(0, 2 ** 32, size=(w, 32, 8), dtype=np.uint64).astype(np.uint32)
    c_regs = pack_c16(to_bits16(c, t), opsel, other)
    d = run(name, a, b, c_regs, op_sel=(0, 0, opsel))
    got = from_bits16(unpack_c16(d, opsel), t)
    ref = a @ b + c
    u = u_of(t)
    bound = gamma(17, u) * (np.abs(a) @ np.abs(b) + np.abs(c)) + u * np.abs(ref)
    assert (np.abs(got - ref) <= bound).all()
    # the unselected half of every D VGPR is C's (== old D's when D and C coincide)
    np.testing.assert_array_equal(unpack_c16(d, 1 - opsel), unpack_c16(c_regs, 1 - opsel))


@pytest.mark.parametrize("name", ACC16)
def test_two_16bit_wmmas_share_registers_like_llvm_d158059(name):
    """v_wmma ... v[0:7], A1, B1, v[0:7]; v_wmma ... v[0:7], A2, B2, v[0:7] op_sel:[0,0,1]."""
    rng = np.random.default_rng(RNG_SEED)
    t = IN_TYPE[name]
    a1, b1, a2, b2 = (rng.integers(-3, 4, size=(2, 16, 16)).astype(np.float64) for _ in range(4))
    c_lo = rng.integers(-9, 9, size=(2, 16, 16)).astype(np.float64)
    c_hi = rng.integers(-9, 9, size=(2, 16, 16)).astype(np.float64)
    v = pack_c16(to_bits16(c_hi, t), 1, pack_c16(to_bits16(c_lo, t), 0, np.zeros((2, 32, 8), np.uint32)))
    v = run(name, a1, b1, v, op_sel=(0, 0, 0))
    v = run(name, a2, b2, v, op_sel=(0, 0, 1))
    np.testing.assert_array_equal(from_bits16(unpack_c16(v, 0), t), a1 @ b1 + c_lo)
    np.testing.assert_array_equal(from_bits16(unpack_c16(v, 1), t), a2 @ b2 + c_hi)


@pytest.mark.parametrize("name,t,step", [(ACC16[1], "bf16", 2.0 ** -8), (ACC16[0], "f16", 2.0 ** -11)])
def test_16bit_output_rounds_ties_to_even(name, t, step):
    # row 0: 1 + step (tie between 1 and 1+2step -> 1.0, even);
    # row 1: 1 + 3 step (tie between 1+2step (odd) and 1+4step -> 1+4step, even)
    a = np.zeros((1, 16, 16))
    b = np.zeros((1, 16, 16))
    a[0, 0, :2] = [1.0, step]
    a[0, 1, :2] = [1.0, 3 * step]
    b[0, :2, :] = 1.0
    d = run(name, a, b, np.zeros((1, 32, 8), np.uint32))
    got = from_bits16(unpack_c16(d, 0), t)
    assert (got[0, 0] == 1.0).all()
    assert (got[0, 1] == 1.0 + 4 * step).all()


# ----------------------------------------------------------------- specials
@pytest.mark.parametrize("name", F32 + ACC16)
def test_nan_and_inf_propagation(name):
    t = IN_TYPE[name]
    a = np.ones((1, 16, 16))
    b = np.ones((1, 16, 16))
    c = np.zeros((1, 16, 16))
    a[0, 3, 5] = np.nan                           # NaN in A: row 3 of D is NaN
    b[0, 2, 7] = np.inf                           # inf in B column 7 ...
    a[0, 9, 2] = 0.0                              # ... 0 * inf -> D[9, 7] NaN
    a[0, 11, 2] = -1.0                            # ... -1 * inf -> D[11, 7] -inf
    b[0, 4, 9], b[0, 6, 9] = np.inf, -np.inf      # inf + -inf: column 9 NaN
    c[0, 12, 1], c[0, 13, 1] = np.inf, -np.inf    # inf in C passes through
    if name in F32:
        d = run(name, a, b, pack_c32(c.astype(np.float32).view(np.uint32)))
        got = unpack_c32(d).view(np.float32).astype(np.float64)[0]
    else:
        d = run(name, a, b, pack_c16(to_bits16(c, t), 0, np.zeros((1, 32, 8), np.uint32)))
        got = from_bits16(unpack_c16(d, 0), t)[0]
    want = np.full((16, 16), 16.0)
    want[9, :], want[11, :] = 15.0, 14.0
    want[:, 7] = np.inf
    want[9, 7], want[11, 7] = np.nan, -np.inf
    want[:, 9] = np.nan
    want[12, 1], want[13, 1] = np.inf, -np.inf
    want[3, :] = np.nan
    np.testing.assert_array_equal(got, want)      # NaN positions must match too


def test_f16_denormals_are_kept_and_f16_overflow_gives_inf():
    a = np.zeros((1, 16, 16))
    b = np.zeros((1, 16, 16))
    a[0, 0, 0], b[0, 0, 0] = 2.0 ** -24, 1.0        # f16 min subnormal input
    a[0, 1, 0], b[0, 0, 1] = 65504.0, 2.0            # f16 overflow
    c = np.zeros((1, 16, 16), np.float32)
    c[0, 2, 2] = np.float32(2.0 ** -149)            # f32 min subnormal in C
    d32 = unpack_c32(run(F32[0], a, b, pack_c32(c.view(np.uint32)))).view(np.float32)
    assert d32[0, 0, 0] == np.float32(2.0 ** -24)
    assert d32[0, 2, 2].view(np.uint32) == 1
    d16 = from_bits16(unpack_c16(run(ACC16[0], a, b, np.zeros((1, 32, 8), np.uint32)), 0), "f16")
    assert d16[0, 0, 0] == 2.0 ** -24
    assert d16[0, 1, 1] == np.inf


# ----------------------------------------------------------------- neg modifiers (float)
@pytest.mark.parametrize("name", F32)
def test_float_neg_modifiers(name):
    rng = np.random.default_rng(RNG_SEED)
    a = rng.integers(-3, 4, size=(2, 16, 16)).astype(np.float64)
    b = rng.integers(-3, 4, size=(2, 16, 16)).astype(np.float64)
    c = rng.integers(-9, 9, size=(2, 16, 16)).astype(np.float64)
    cr = pack_c32(c.astype(np.float32).view(np.uint32))
    even = np.where(np.arange(16) % 2 == 0, -1.0, 1.0)      # k in the low halves

    def d(**m):
        return unpack_c32(run(name, a, b, cr, **m)).view(np.float32).astype(np.float64)

    np.testing.assert_array_equal(d(neg_lo=(1, 1, 0), neg_hi=(1, 1, 0)), a @ b + c)
    np.testing.assert_array_equal(d(neg_lo=(1, 0, 0), neg_hi=(1, 0, 0)), -(a @ b) + c)
    np.testing.assert_array_equal(d(neg_lo=(0, 1, 0), neg_hi=(0, 1, 0)), -(a @ b) + c)
    np.testing.assert_array_equal(d(neg_lo=(1, 0, 0)), (a * even) @ b + c)
    np.testing.assert_array_equal(d(neg_hi=(0, 1, 0)), a @ (b * -even[:, None]) + c)
    np.testing.assert_array_equal(d(neg_lo=(0, 0, 1)), a @ b - c)
    np.testing.assert_array_equal(d(neg_hi=(0, 0, 1)), a @ b + np.abs(c))
    np.testing.assert_array_equal(d(neg_lo=(0, 0, 1), neg_hi=(0, 0, 1)), a @ b - np.abs(c))


@pytest.mark.parametrize("name", ACC16)
def test_16bit_c_neg_abs_apply_to_selected_half(name):
    t = IN_TYPE[name]
    c = -np.arange(256, dtype=np.float64).reshape(1, 16, 16) / 8
    zero = np.zeros((1, 16, 16))
    for opsel in (0, 1):
        cr = pack_c16(to_bits16(c, t), opsel, np.zeros((1, 32, 8), np.uint32))
        got = from_bits16(unpack_c16(run(name, zero, zero, cr, op_sel=(0, 0, opsel),
                                         neg_hi=(0, 0, 1)), opsel), t)
        np.testing.assert_array_equal(got, np.abs(c))


# ----------------------------------------------------------------- integers
def random_int(rng, shape, bits, signed):
    lo, hi = (-(1 << (bits - 1)), 1 << (bits - 1)) if signed else (0, 1 << bits)
    return rng.integers(lo, hi, size=shape)


def wrap32(x):
    return ((x + 2 ** 31) % 2 ** 32) - 2 ** 31


@pytest.mark.parametrize("name", INTS)
@pytest.mark.parametrize("w", WAVES)
@pytest.mark.parametrize("sa,sb", [(0, 0), (1, 1), (1, 0), (0, 1)])
def test_integer_signedness_and_wraparound(name, w, sa, sb):
    bits = BITS[name]
    rng = np.random.default_rng([RNG_SEED, w, sa, sb, bits])
    a = random_int(rng, (w, 16, 16), bits, sa)
    b = random_int(rng, (w, 16, 16), bits, sb)
    c = rng.integers(-2 ** 31, 2 ** 31, size=(w, 16, 16))
    c[:, 0, :] = 2 ** 31 - 1          # row 0 overflows upward when the dot product is > 0
    d = run(name, a, b, pack_c32(c.astype(np.int32).view(np.uint32)), neg_lo=(sa, sb, 0))
    got = unpack_c32(d).view(np.int32).astype(np.int64)
    np.testing.assert_array_equal(got, wrap32(a @ b + c))


@pytest.mark.parametrize("name", INTS)
def test_integer_clamp_saturates(name):
    bits = BITS[name]
    top = (1 << bits) - 1
    a = np.full((1, 16, 16), top)
    b = np.full((1, 16, 16), top)
    c = np.zeros((1, 16, 16), dtype=np.int64)
    c[0, :8] = 2 ** 31 - 1000                      # unsigned: + 16*top^2 > 1000 -> saturates
    c[0, 8:] = 5
    cr = pack_c32(c.astype(np.int32).view(np.uint32))
    got = unpack_c32(run(name, a, b, cr, clamp=True)).view(np.int32)
    assert (got[0, :8] == 2 ** 31 - 1).all()
    assert (got[0, 8:] == 5 + 16 * top * top).all()
    wrapped = unpack_c32(run(name, a, b, cr, clamp=False)).view(np.int32)
    assert (wrapped[0, :8] == wrap32(2 ** 31 - 1000 + 16 * top * top)).all()
    # negative saturation: signed A = -1 (all ones bits), unsigned B = top
    cneg = np.full((1, 16, 16), -(2 ** 31) + 10, dtype=np.int64)
    got = unpack_c32(run(name, a, b, pack_c32(cneg.astype(np.int32).view(np.uint32)),
                         neg_lo=(1, 0, 0), clamp=True)).view(np.int32)
    assert (got == -(2 ** 31)).all()


@pytest.mark.parametrize("name", INTS)
def test_integer_k_order_within_a_register(name):
    """A one-hot in k picks out row k of B: pins the nibble/byte order inside a VGPR."""
    bits = BITS[name]
    b = np.tile(np.arange(16)[:, None] % (1 << bits), (1, 1, 16))
    for k in range(16):
        a = np.zeros((1, 16, 16), dtype=np.int64)
        a[0, :, k] = 1
        got = unpack_c32(run(name, a, b, np.zeros((1, 32, 8), np.uint32))).view(np.int32)
        assert (got == k % (1 << bits)).all(), k


# ----------------------------------------------------------------- lanes 16-31, bad modifiers
@pytest.mark.parametrize("name", list(WMMA_OPS))
def test_lanes_16_31_of_a_b_are_not_read_and_mismatch_is_reported(name):
    op = WMMA_OPS[name]
    rng = np.random.default_rng(RNG_SEED)
    a = rng.integers(0, 2 ** 32, size=(2, 32, op.a_regs), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2 ** 32, size=(2, 32, op.b_regs), dtype=np.uint64).astype(np.uint32)
    a &= np.uint32(0x3BFF3BFF)          # keep f16/bf16 values finite and small
    b &= np.uint32(0x3BFF3BFF)
    a[:, 16:] = a[:, :16]
    b[:, 16:] = b[:, :16]
    c = np.zeros((2, 32, op.c_regs), np.uint32)
    ref = op.fn(a, b, c)
    assert not unreplicated_waves(a).any()
    a2, b2 = a.copy(), b.copy()
    a2[1, 16:] ^= np.uint32(0x00010001)
    b2[1, 20] ^= np.uint32(0x00020002)
    np.testing.assert_array_equal(op.fn(a2, b2, c), ref)
    np.testing.assert_array_equal(unreplicated_waves(a2), [False, True])
    np.testing.assert_array_equal(unreplicated_waves(b2), [False, True])


@pytest.mark.parametrize("name,mods", [
    (INTS[0], dict(neg_hi=(1, 0, 0))), (INTS[1], dict(neg_lo=(0, 0, 1))),
    (F32[0], dict(op_sel=(0, 0, 1))), (INTS[0], dict(op_sel=(0, 0, 1))),
    (F32[1], dict(clamp=True)), (ACC16[0], dict(clamp=True)),
])
def test_undefined_modifiers_fault(name, mods):
    op = WMMA_OPS[name]
    a = np.zeros((1, 32, op.a_regs), np.uint32)
    b = np.zeros((1, 32, op.b_regs), np.uint32)
    with pytest.raises(EmulatorFault, match=name):
        op.fn(a, b, np.zeros((1, 32, op.c_regs), np.uint32), **mods)
