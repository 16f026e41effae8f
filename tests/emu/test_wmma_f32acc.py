"""The fast f32-accumulate WMMA path (emu/isa/wmma_f32acc.py) against the reference path it
skips (wmma11.planned_f32_acc), bit for bit: every f16/bf16 bit pattern through the decoder,
then whole WMMAs on gfx11 and gfx12 with subnormals, signed zeros, wide exponent ranges
(sums whose float64 value depends on the summation order), rounding ties, f32 overflow and
inf/NaN (which must leave the fast path)."""
import numpy as np
import pytest

from wmma_gen.emu.isa import wmma11, wmma12, wmma_f32acc

FAMILIES = {"gfx11": (wmma11, wmma11.WMMA_OPS, 8, slice(0, 16)),
            "gfx12": (wmma12, wmma12.WMMA12_OPS, 4, slice(None))}


def _decode_all(t):
    """All 65536 bit patterns, two per word, through decode16_to_f32."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    words = bits.view(np.int32).reshape(-1, 1)                      # (32768, 1): lo, hi
    out = np.empty((words.shape[0], 2, 1), np.int32)
    f = wmma_f32acc.decode16_to_f32((out[:, 0], out[:, 1]), words, t, out)
    return bits, f.reshape(-1)


def test_f16_decode_is_exact_for_every_finite_pattern():
    bits, f = _decode_all("f16")
    finite = (bits & 0x7C00) != 0x7C00
    want = bits.view(np.float16).astype(np.float32)
    assert np.array_equal(f.view(np.uint32)[finite], want.view(np.uint32)[finite])   # incl. -0, subnormals
    assert (np.abs(f[~finite]) >= 2.0 ** 16).all()          # inf/NaN: detected by the range check


def test_bf16_decode_is_the_top_half_of_an_f32():
    bits, f = _decode_all("bf16")
    assert np.array_equal(f.view(np.uint32), bits.astype(np.uint32) << 16)


def _bits16(rng, shape, t, kind):
    """Random 16-bit element bits: 'normal' data, or 'wide' (any finite exponent, 20% +-0)."""
    if kind == "normal":
        x = rng.standard_normal(shape).astype(np.float32)
        return (x.view(np.uint32) >> 16).astype(np.uint16) if t == "bf16" else x.astype(np.float16).view(np.uint16)
    top = 0x7C00 if t == "f16" else 0x7F80
    b = rng.integers(0, top, shape).astype(np.uint16) | (rng.integers(0, 2, shape).astype(np.uint16) << 15)
    return np.where(rng.random(shape) < 0.2, b & 0x8000, b).astype(np.uint16)


def _operands(family, t, kind, w=64, seed=0):
    mod, _, n, _ = FAMILIES[family]
    rng = np.random.default_rng(seed)
    ab = []
    for _ in range(2):
        words = _bits16(rng, (w, 32, 2 * n), t, kind).view(np.uint32)
        if family == "gfx11":
            words[:, 16:] = words[:, :16]                       # [ISA] 7.9 replication
        ab.append(words)
    c = (rng.standard_normal((w, 32, 8)) * (1e-3 if kind == "normal" else 1.0)).astype(np.float32)
    if kind == "wide":
        c = np.where(rng.random(c.shape) < 0.2, np.float32(-0.0), c)
    # register-file views as the binder passes them: (W, 32, n) slices of one (regs, W, 32) array
    v = np.ascontiguousarray(np.concatenate([ab[0], ab[1], c.view(np.uint32)], axis=2).transpose(2, 0, 1))
    return v[:n].transpose(1, 2, 0), v[n:2 * n].transpose(1, 2, 0), v[2 * n:].transpose(1, 2, 0)


def _reference(family, a, b, c, t):
    mod, _, _, lanes = FAMILIES[family]
    return wmma11.planned_f32_acc(a, b, c, t, mod._PLANS, lanes)


@pytest.mark.parametrize("kind", ["normal", "wide"])
@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_fast_path_equals_reference(family, t, kind):
    mod, table, _, _ = FAMILIES[family]
    a, b, c = _operands(family, t, kind)
    fast = wmma_f32acc.fused_f32_acc(a, b, c, t, mod._PLANS)
    assert fast is not None                                  # finite inputs stay on the fast path
    want = _reference(family, a, b, c, t)
    assert fast.dtype == np.uint32 and np.array_equal(fast, want)
    assert np.array_equal(table[f"v_wmma_f32_16x16x16_{t}"].fn(a, b, c), want)


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_ties_and_signed_zero(family):
    """A, B with one nonzero k so that D = 2^-24 + C: RNE ties at the f32 half-ulp (to even),
    no overflow at the f32 maximum, and signed zeros as the reference gives them. (f32 overflow to inf: the bf16 'wide'
    data of test_fast_path_equals_reference, whose products reach 2^254.)"""
    mod, _, n, _ = FAMILIES[family]
    pa, pb, pc = mod._PLANS
    am = np.zeros((4, 16, 16), np.float16)
    bm = np.zeros((4, 16, 16), np.float16)
    am[:, :, 0], bm[:, 0, :] = 2.0 ** -12, 2.0 ** -12       # each D[i, j] = 2^-24 + C[i, j]
    am[3], bm[3] = np.float16(-0.0), np.float16(0.0)          # wave 3: all products -0
    cm = np.ones((4, 16, 16), np.float32)                     # 1 + 2^-24: a tie -> 1.0
    cm[1] += np.float32(2.0 ** -23)                           # (1 + 2^-23) + 2^-24: tie -> 1 + 2^-22
    cm[2] = np.float32(3.4028235e38)                          # max + 2^-24 -> max (not a tie)
    cm[2, 0, 0] = np.float32(-3.4028235e38)
    cm[3] = np.float32(-0.0)
    if family == "gfx12":
        a = pa.from_matrix(am.view(np.uint16), np.zeros((n, 4, 64), np.uint16)).view(np.uint32).transpose(1, 2, 0)
        b = pb.from_matrix(bm.view(np.uint16), np.zeros((n, 4, 64), np.uint16)).view(np.uint32).transpose(1, 2, 0)
    else:
        a = np.concatenate([pa.from_matrix(am.view(np.uint16), np.zeros((n, 4, 32), np.uint16))
                            .view(np.uint32).transpose(1, 2, 0)] * 2, axis=1)
        b = np.concatenate([pb.from_matrix(bm.view(np.uint16), np.zeros((n, 4, 32), np.uint16))
                            .view(np.uint32).transpose(1, 2, 0)] * 2, axis=1)
    c = pc.from_matrix(cm.view(np.uint32), np.zeros((8, 4, 32), np.uint32)).transpose(1, 2, 0)
    fast = wmma_f32acc.fused_f32_acc(a, b, c, "f16", mod._PLANS)
    want = _reference(family, a, b, c, "f16")
    assert np.array_equal(fast, want)
    d = pc.to_matrix(np.ascontiguousarray(fast.transpose(2, 0, 1))).view(np.float32)
    assert (d[0] == 1.0).all() and (d[1] == np.float32(1 + 2.0 ** -22)).all()
    assert (d[2] == np.float32(3.4028235e38)).sum() == 255
    # all products -0 and C = -0: BLAS starts its sum at +0, so the reference (and this path)
    # give +0, not IEEE's -0 -- recorded here so that a change of either shows up
    assert (d[3].view(np.uint32) == 0).all()


@pytest.mark.parametrize("where", ["a", "b", "c"])
@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_inf_nan_leave_the_fast_path(family, t, where):
    mod, table, _, _ = FAMILIES[family]
    a, b, c = (np.array(x) for x in _operands(family, t, "normal", w=8, seed=3))
    inf16, nan16 = (0x7C00, 0x7E00) if t == "f16" else (0x7F80, 0x7FC0)
    if where == "c":
        c[1, 5, 2], c[4, 0, 7] = 0x7F800000, 0xFFC00001
    else:
        x = a if where == "a" else b
        x[2, 3, 1] = (x[2, 3, 1] & 0xFFFF0000) | inf16
        x[5, 0, 0] = (x[5, 0, 0] & 0x0000FFFF) | (nan16 << 16)
        if family == "gfx11":
            x[:, 16:] = x[:, :16]
    assert wmma_f32acc.fused_f32_acc(a, b, c, t, mod._PLANS) is None
    assert np.array_equal(table[f"v_wmma_f32_16x16x16_{t}"].fn(a, b, c), _reference(family, a, b, c, t))


def test_blas_transposed_operand_sums_in_the_same_order():
    """The fast path calls matmul(A^T.T, B) ("TN") where the reference calls matmul(A, B)
    ("NN"). On sums whose float64 value depends on the order (wide exponents, signed zeros),
    the two agree bit for bit: BLAS accumulates k in order either way."""
    rng = np.random.default_rng(11)
    a = _bits16(rng, (512, 16, 16), "f16", "wide").view(np.float16).astype(np.float64)
    b = _bits16(rng, (512, 16, 16), "f16", "wide").view(np.float16).astype(np.float64)
    nn = np.matmul(a, b)
    tn = np.matmul(np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1), b)
    reordered = np.einsum("wmk,wkn->wmn", a[:, :, ::-1], b[:, ::-1, :])
    assert (nn != reordered).any()                           # the data does exercise the order
    assert np.array_equal(nn.view(np.uint64), tn.view(np.uint64))


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_out_block_written_in_place(family):
    """WmmaOp.writes_out: D lands in the given (8, W, 32) block, also when that block is C's
    own registers (D = C, the usual accumulate) or a non-contiguous view."""
    mod, table, n, _ = FAMILIES[family]
    a, b, c = _operands(family, "f16", "normal", w=16, seed=5)
    want = _reference(family, a, b, c, "f16")
    fn = table["v_wmma_f32_16x16x16_f16"].fn
    assert table["v_wmma_f32_16x16x16_f16"].writes_out
    v = np.ascontiguousarray(np.concatenate([a, b, c], axis=2).transpose(2, 0, 1))
    cv = v[2 * n:].transpose(1, 2, 0)
    fn(v[:n].transpose(1, 2, 0), v[n:2 * n].transpose(1, 2, 0), cv, out=v[2 * n:])
    assert np.array_equal(v[2 * n:].transpose(1, 2, 0), want)
    big = np.zeros((8, 32, 32), np.uint32)
    fn(a, b, c, out=big[:, ::2])                               # strided waves
    assert np.array_equal(big[:, ::2].transpose(1, 2, 0), want) and not big[:, 1::2].any()
