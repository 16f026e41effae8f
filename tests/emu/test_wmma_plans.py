"""The WMMA register plans (emu/isa/wmma_regs.RegPlan: operands moved by one strided copy)
agree bit for bit with the element-gather path they replace, on bits that include NaN, inf,
subnormals and signed zeros, for every f32-accumulating 16-bit row of gfx11 and gfx12."""
import numpy as np
import pytest

from wmma_gen.emu.isa import wmma11, wmma12
from wmma_gen.emu.isa.wmma_regs import RegPlan, index_plan

SPECIAL16 = {"f16": [0x0000, 0x8000, 0x0001, 0x83FF, 0x7C00, 0xFC00, 0x7E00, 0x7BFF],
             "bf16": [0x0000, 0x8000, 0x0001, 0x807F, 0x7F80, 0xFF80, 0x7FC0, 0x7F7F]}


def _regs(rng, w, n, t, specials):
    """(W, 32, n) uint32 registers of random 16-bit values, some special; lanes 16-31 copy
    lanes 0-15 (the gfx11 replication rule; harmless on gfx12)."""
    half = rng.standard_normal((w, 16, 2 * n)).astype(np.float32)
    bits = (half.view(np.uint32) >> 16).astype(np.uint16) if t == "bf16" else \
        half.astype(np.float16).view(np.uint16)
    if specials:
        pick = rng.random(bits.shape) < 0.05
        bits = np.where(pick, rng.choice(SPECIAL16[t], bits.shape), bits).astype(np.uint16)
    words = bits.view(np.uint32)
    return np.concatenate([words, words], axis=1)


def _gather_path_11(a, b, c, t):
    am, bm = wmma11._float_ab(a, b, t, (0, 0, 0), (0, 0, 0))
    cm = wmma11._c32_to_matrix(np.asarray(c, np.uint32)).view(np.float32).astype(np.float64)
    return wmma11._matrix_to_c32(wmma11.f32_bits(wmma11._fused(am, bm, cm).astype(np.float32)))


def _gather_path_12(a, b, c, t):
    am = wmma12._decode_ab(a, t, "a", (0, 0, 0), (0, 0, 0), "x")
    bm = wmma12._decode_ab(b, t, "b", (0, 0, 0), (0, 0, 0), "x")
    cm = wmma12.c_to_matrix(np.asarray(c, np.uint32), 32).view(np.float32).astype(np.float64)
    return wmma12.matrix_to_c(wmma12.f32_bits(wmma12._fused(am, bm, cm).astype(np.float32)), 32)


@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_planned_wmma_equals_gather_path(family, t, specials):
    rng = np.random.default_rng(7)
    mod, n_ab, gather = (wmma11, 8, _gather_path_11) if family == "gfx11" else (wmma12, 4, _gather_path_12)
    assert all(p.ok for p in mod._PLANS)
    table = wmma11.WMMA_OPS if family == "gfx11" else wmma12.WMMA12_OPS
    fn = table[f"v_wmma_f32_16x16x16_{t}"].fn
    a, b = _regs(rng, 5, n_ab, t, specials), _regs(rng, 5, n_ab, t, specials)
    c = rng.standard_normal((5, 32, 8)).astype(np.float32).view(np.uint32)
    if specials:
        c[0, 3, 2], c[1, 0, 0] = 0x7F800000, 0xFFC00000
    got = np.asarray(fn(a, b, c))
    want = gather(a, b, c, t)
    assert got.dtype == np.uint32 and got.shape == (5, 32, 8)
    assert np.array_equal(got, want)
    # the binder passes strided (W, 32, n) views of the register file: same result
    v = np.ascontiguousarray(np.concatenate([a, b, c], axis=2).transpose(2, 0, 1))
    views = (v[:n_ab].transpose(1, 2, 0), v[n_ab:2 * n_ab].transpose(1, 2, 0), v[2 * n_ab:].transpose(1, 2, 0))
    assert np.array_equal(np.asarray(fn(*views)), want)


def test_regplan_round_trip_and_refusal():
    rng = np.random.default_rng(3)
    lane, elem = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    p = RegPlan(lane, elem, 2, 16)            # A[m, k] = element k of lane m
    x = rng.integers(0, 1 << 16, (8, 3, 32), dtype=np.uint16)
    m = p.to_matrix(x)
    assert np.array_equal(m, x.reshape(8, 3, 16, 2).transpose(1, 2, 0, 3).reshape(3, 16, 16))
    assert np.array_equal(p.from_matrix(m, np.zeros_like(x)), x)
    swapped = elem.copy()
    swapped[0, 0], swapped[0, 1] = 1, 0       # still a bijection, but not a bit permutation
    swapped[1, 0], swapped[1, 1] = 0, 1
    assert not RegPlan(lane, swapped, 2, 16).ok


def test_index_plan_matches_fancy_indexing():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 99, (4, 16, 16))
    for flat in (np.arange(256).reshape(16, 16), np.arange(256).reshape(16, 16).T,
                 np.arange(256).reshape(2, 16, 8).transpose(2, 0, 1).reshape(16, 16), rng.permutation(256).reshape(16, 16)):
        assert np.array_equal(index_plan(flat)(x), x.reshape(4, 256)[:, flat])
