"""Instruction-level tests of vector ops against numpy definitions written from the
RDNA3 ISA guide (hand-written assembly, so each test runs exactly the instruction named)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from emu_helpers import as_f32, f32, run_lanes

L = np.arange(32)


def test_vopd_halves_read_sources_before_either_writes(rng):
    a, b, c = (rng.integers(0, 1 << 30, 32, dtype=np.uint32) for _ in range(3))
    out = run_lanes("""\tv_mov_b32_e32 v20, v10
\tv_dual_mov_b32 v20, v11 :: v_dual_add_nc_u32 v21, v20, v12""", [a, b, c], n_out=2)
    np.testing.assert_array_equal(out[0], b)
    np.testing.assert_array_equal(out[1], a + c)  # Y saw v20's old value


def _dpp_ref(x, old, src, valid, bound_ctrl, writable=None):
    """Lane l takes x[src[l]]; invalid -> 0 with bound_ctrl, else old (ISA §7.8)."""
    out = old.copy()
    for l in range(32):
        if writable is not None and not writable[l]:
            continue
        if valid[l]:
            out[l] = x[src[l]]
        elif bound_ctrl:
            out[l] = 0
    return out


@pytest.mark.parametrize("ctrl,src,valid", [
    ("quad_perm:[1,0,3,2]", (L & ~3) | np.array([1, 0, 3, 2])[L & 3], np.ones(32, bool)),
    ("row_shr:1", L - 1, (L % 16) >= 1),
    ("row_shl:3", L + 3, (L % 16) + 3 < 16),
    ("row_ror:5", (L & ~15) | ((L - 5) & 15), np.ones(32, bool)),
    ("row_mirror", (L & ~15) | (15 - L % 16), np.ones(32, bool)),
    ("row_half_mirror", (L & ~7) | (7 - L % 8), np.ones(32, bool)),
    ("row_share:3", (L & ~15) | 3, np.ones(32, bool)),
    ("row_xmask:5", (L & ~15) | ((L % 16) ^ 5), np.ones(32, bool)),
])
@pytest.mark.parametrize("bound_ctrl", [False, True])
def test_dpp_mov_lane_controls(rng, ctrl, src, valid, bound_ctrl):
    x, old = rng.integers(1, 1 << 31, 32, dtype=np.uint32), rng.integers(1, 1 << 31, 32, dtype=np.uint32)
    bc = " bound_ctrl:1" if bound_ctrl else ""
    out, = run_lanes(f"""\tv_mov_b32_e32 v20, v11
\tv_mov_b32_dpp v20, v10 {ctrl} row_mask:0xf bank_mask:0xf{bc}""", [x, old])
    np.testing.assert_array_equal(out, _dpp_ref(x, old, np.where(valid, src, 0), valid, bound_ctrl))


def test_dpp_row_and_bank_masks_and_arithmetic(rng):
    a, b, old = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    out, = run_lanes("""\tv_mov_b32_e32 v20, v12
\tv_add_f32_dpp v20, v10, v11 row_shr:2 row_mask:0x1 bank_mask:0x5""", [f32(a), f32(b), f32(old)])
    writable = ((L // 16) == 0) & ((((L // 4) % 4) == 0) | (((L // 4) % 4) == 2))
    perm = _dpp_ref(a, np.full(32, np.nan, np.float32), np.maximum(L - 2, 0), (L % 16) >= 2, False)
    expect = np.where(writable & ((L % 16) >= 2), perm + b, old)
    np.testing.assert_array_equal(as_f32(out), expect.astype(np.float32))


def test_dpp8(rng):
    x = rng.integers(0, 1 << 31, 32, dtype=np.uint32)
    sel = [7, 6, 5, 4, 3, 2, 1, 0]
    out, = run_lanes("\tv_mov_b32_dpp v20, v10 dpp8:[7,6,5,4,3,2,1,0]", [x])
    np.testing.assert_array_equal(out, x[(L & ~7) | np.array(sel)[L & 7]])


@pytest.mark.parametrize("op,cross", [("v_permlane16_b32", False), ("v_permlanex16_b32", True)])
def test_permlane16(rng, op, cross):
    x = rng.integers(0, 1 << 31, 32, dtype=np.uint32)
    sel = rng.integers(0, 16, 16)
    lo = sum(int(s) << (4 * i) for i, s in enumerate(sel[:8]))
    hi = sum(int(s) << (4 * i) for i, s in enumerate(sel[8:]))
    out, = run_lanes(f"""\ts_mov_b32 s8, {lo:#x}
\ts_mov_b32 s9, {hi:#x}
\t{op} v20, v10, s8, s9""", [x])
    row = L // 16
    src_row = (1 - row) if cross else row
    np.testing.assert_array_equal(out, x[src_row * 16 + sel[L % 16]])


def test_mad_u64_u32_and_i64_i32(rng):
    a, b = rng.integers(0, 1 << 32, 32, dtype=np.uint64), rng.integers(0, 1 << 32, 32, dtype=np.uint64)
    c = rng.integers(0, 1 << 63, 32, dtype=np.uint64) * 2 + 1
    parts = [a.astype(np.uint32), b.astype(np.uint32), (c & 0xFFFFFFFF).astype(np.uint32),
             (c >> 32).astype(np.uint32)]
    lo, hi, carry, slo, shi = run_lanes("""\tv_mad_u64_u32 v[20:21], s8, v10, v11, v[12:13]
\tv_cndmask_b32_e64 v22, 0, 1, s8
\tv_mad_i64_i32 v[23:24], s9, v10, v11, v[12:13]""", parts, n_out=5)
    for k in range(32):
        full = int(a[k]) * int(b[k]) + int(c[k])
        assert int(lo[k]) | (int(hi[k]) << 32) == full % (1 << 64)
        assert carry[k] == (full >> 64)
        sa, sb = int(np.int32(parts[0][k].view(np.int32))), int(parts[1][k].view(np.int32))
        sc = int(np.uint64(c[k]).view(np.int64))
        assert int(slo[k]) | (int(shi[k]) << 32) == (sa * sb + sc) % (1 << 64)


def test_true16_halves_are_independent(rng):
    a = rng.standard_normal(32).astype(np.float16)
    b = rng.standard_normal(32).astype(np.float16)
    keep = rng.integers(0, 1 << 16, 32, dtype=np.uint32)
    packed_b = b.view(np.uint16).astype(np.uint32) << 16
    out, = run_lanes("""\tv_mov_b32_e32 v20, v12
\tv_add_f16_e32 v20.h, v10.l, v11.h""", [a.view(np.uint16).astype(np.uint32), packed_b, keep])
    np.testing.assert_array_equal(out & 0xFFFF, keep)
    np.testing.assert_array_equal((out >> 16).astype(np.uint16).view(np.float16), a + b)


def test_fma_f32_is_correctly_rounded(rng):
    a = rng.standard_normal(32).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    c = (-(a.astype(np.float64) * b)).astype(np.float32)  # cancellation exposes double rounding
    out, = run_lanes("\tv_fma_f32 v20, v10, v11, v12", [f32(a), f32(b), f32(c)])
    for k in range(32):
        exact = Fraction(float(a[k])) * Fraction(float(b[k])) + Fraction(float(c[k]))
        assert as_f32(out)[k] == np.float32(float(exact)) or exact == 0


def test_integer_bit_ops(rng):
    a, b, c = (rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    sel = np.array([0x0C030201, 0x0B0A0908, 0x07060504, 0x0D0C0B0A] * 8, np.uint32)
    perm, align, bfe, bfi, lshlor = run_lanes("""\tv_perm_b32 v20, v10, v11, v13
\tv_alignbit_b32 v21, v10, v11, v12
\tv_bfe_i32 v22, v10, 5, 11
\tv_bfi_b32 v23, v10, v11, v12
\tv_lshl_or_b32 v24, v10, 7, v11""", [a, b, c, sel], n_out=5)
    for k in range(32):
        data = (int(a[k]) << 32) | int(b[k])
        want = 0
        for byte in range(4):
            s = (int(sel[k]) >> (8 * byte)) & 0xFF
            v = (data >> (8 * s)) & 0xFF if s <= 7 else (0 if s == 12 else
                                                          0xFF * ((data >> {8: 15, 9: 31, 10: 47, 11: 63}[s]) & 1)
                                                          if s <= 11 else 0xFF)
            want |= v << (8 * byte)
        assert perm[k] == want
        assert align[k] == (data >> (int(c[k]) & 31)) & 0xFFFFFFFF
        field = (int(a[k]) >> 5) & 0x7FF
        assert bfe[k] == np.uint32(np.int32(field - (1 << 11) if field >> 10 else field).view(np.uint32))
    np.testing.assert_array_equal(bfi, (a & b) | (~a & c))
    np.testing.assert_array_equal(lshlor, (a << 7) | b)


def test_compare_cndmask_and_carry(rng):
    a, b = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32), \
        rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    sel, lo, hi = run_lanes("""\tv_cmp_lt_u32_e32 vcc_lo, v10, v11
\tv_cndmask_b32_e32 v20, v10, v11, vcc_lo
\tv_add_co_u32 v21, vcc_lo, v10, v11
\tv_add_co_ci_u32_e32 v22, vcc_lo, 0, 0, vcc_lo""", [a, b], n_out=3)
    np.testing.assert_array_equal(sel, np.maximum(a, b))
    full = a.astype(np.uint64) + b
    np.testing.assert_array_equal(lo, full.astype(np.uint32))
    np.testing.assert_array_equal(hi, (full >> 32).astype(np.uint32))


def test_conversions_and_transcendentals(rng):
    x = (rng.standard_normal(32) * 4).astype(np.float32)
    pk, i, ex, h = run_lanes("""\tv_cvt_pk_rtz_f16_f32 v20, v10, v11
\tv_cvt_i32_f32_e32 v21, v10
\tv_exp_f32_e32 v22, v10
\tv_cvt_f16_f32_e32 v23.l, v10
\tv_and_b32_e32 v23, 0xffff, v23""", [f32(x), f32(-x)], n_out=4)
    lo = (pk & 0xFFFF).astype(np.uint16).view(np.float16)
    # round toward zero: |f16| <= |x| and the next f16 away from zero is > |x|
    assert (np.abs(lo.astype(np.float32)) <= np.abs(x)).all()
    np.testing.assert_array_equal(i.view(np.int32), np.trunc(x).astype(np.int32))
    np.testing.assert_array_equal(as_f32(ex), np.exp2(x.astype(np.float64)).astype(np.float32))
    np.testing.assert_array_equal(h.astype(np.uint16).view(np.float16), x.astype(np.float16))


def test_readfirstlane_writelane_under_partial_exec(rng):
    x = rng.integers(0, 1 << 31, 32, dtype=np.uint32)
    first, wl = run_lanes("""\tv_mov_b32_e32 v21, 7
\ts_mov_b32 s10, exec_lo
\ts_mov_b32 exec_lo, 0xfff0
\tv_readfirstlane_b32 s8, v10
\tv_writelane_b32 v21, s8, 30
\ts_mov_b32 exec_lo, s10
\tv_mov_b32_e32 v20, s8""", [x], n_out=2)
    assert (first == x[4]).all()
    assert wl[30] == x[4] and (np.delete(wl, 30) == 7).all()


def test_packed_f16_op_sel(rng):
    a = rng.standard_normal(64).astype(np.float16)
    b = rng.standard_normal(64).astype(np.float16)
    pa, pb = a.view(np.uint32), b.view(np.uint32)
    out, = run_lanes("\tv_pk_fma_f16 v20, v10, v11, v11 op_sel:[1,0,0] op_sel_hi:[0,1,1]", [pa, pb])
    a2, b2 = a.reshape(32, 2), b.reshape(32, 2)
    lo = (a2[:, 1].astype(np.float64) * b2[:, 0] + b2[:, 0]).astype(np.float16)
    hi = (a2[:, 0].astype(np.float64) * b2[:, 1] + b2[:, 1]).astype(np.float16)
    got = out.view(np.float16).reshape(32, 2)
    np.testing.assert_array_equal(got[:, 0], lo)
    np.testing.assert_array_equal(got[:, 1], hi)


def test_div_scale_scales_the_denominator_of_a_huge_quotient():
    """V_DIV_SCALE_F32 (RDNA3 ISA §16): exponent(S2) - exponent(S1) >= 96 sets VCC and, when
    S0 is the denominator, D = S0 * 2^64; elsewhere D = S0 and VCC = 0."""
    num = np.ones(32, np.float32)
    den = np.full(32, 3.0, np.float32)
    num[5], den[5] = 1e38, 1e-3   # quotient overflows: hardware scales by 2^64 here
    body = "\tv_div_scale_f32 v20, vcc_lo, v11, v11, v10\n\tv_cndmask_b32_e64 v21, 0, 1, vcc_lo"
    d, vcc = run_lanes(body, [f32(num), f32(den)], n_out=2)
    np.testing.assert_array_equal(np.delete(as_f32(d), 5), 3.0)
    assert as_f32(d)[5] == np.float32(np.float64(np.float32(1e-3)) * 2.0 ** 64)
    assert vcc.tolist() == [int(k == 5) for k in range(32)]


def test_vop3_neg_abs_on_untyped_bits_flip_the_sign_bit(rng):
    a, b = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    out, = run_lanes("""\tv_cmp_gt_f32_e64 s8, v10, v11
\tv_cndmask_b32_e64 v20, -v10, |v11|, s8""", [f32(a), f32(b)])
    np.testing.assert_array_equal(as_f32(out), np.where(a > b, np.abs(b), -a))
