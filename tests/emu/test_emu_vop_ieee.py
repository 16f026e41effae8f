"""v_min/v_max (and their 3-input and packed forms) follow IEEE mode (RDNA3 ISA §16
V_MIN_F32 / V_MAX_F32 with MODE.IEEE=1): -0 < +0, a quiet NaN loses, a signalling NaN is
returned quieted. Reference written from those rules, independent of wmma_gen/emu/ieee.py."""
import numpy as np

from emu_helpers import run_lanes

QNAN, SNAN, NEG_SNAN = 0x7FC00000, 0x7FA00000, 0xFFA00001
A = [0x80000000, 0x00000000, QNAN, 0x3F800000, SNAN, 0x40000000, QNAN, NEG_SNAN]
B = [0x00000000, 0x80000000, 0x3F800000, QNAN, 0x3F800000, SNAN, QNAN, 0x3F800000]


def _ref(a, b, want_min):
    fa, fb = np.uint32(a).view(np.float32), np.uint32(b).view(np.float32)
    snan = lambda u, f: np.isnan(f) and not (u >> 22) & 1  # noqa: E731
    if snan(a, fa):
        return a | 0x00400000
    if snan(b, fb):
        return b | 0x00400000
    if np.isnan(fa):
        return b
    if np.isnan(fb):
        return a
    if fa == 0 and fb == 0:  # signed zeros: -0 is the smaller
        neg_a, neg_b = a >> 31, b >> 31
        return a if (neg_a >= neg_b) == want_min else b
    return a if (fa <= fb) == want_min else b


def _run(op):
    a = np.array((A * 4)[:32], np.uint32)
    b = np.array((B * 4)[:32], np.uint32)
    out, = run_lanes(f"\t{op} v20, v10, v11", [a, b])
    return a, b, out


def test_v_min_f32_ieee():
    a, b, out = _run("v_min_f32_e32")
    assert [int(x) for x in out] == [_ref(int(x), int(y), True) for x, y in zip(a, b)]


def test_v_max_f32_ieee():
    a, b, out = _run("v_max_f32_e32")
    assert [int(x) for x in out] == [_ref(int(x), int(y), False) for x, y in zip(a, b)]


def test_relu_style_max_of_negative_zero_is_positive_zero():
    out, = run_lanes("\tv_max_f32_e32 v20, 0, v10", [np.full(32, 0x80000000, np.uint32)])
    assert (out == 0).all()
