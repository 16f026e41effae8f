"""wmma_gen.layouts against (lane, element) -> (row, col) tables written from the manuals.

gfx11 reference: RDNA3 ISA guide sec. 7.9, "A Matrix: VGPR View for Wave32 - Column Major",
"B Matrix: VGPR View for Wave32 - Row Major", "C & D Matrix: VGPR View for Wave32 - Row
Major". Rows of those tables are VGPR halves, columns are lanes:
    A:  V{r}[15:0] lane j = A{j}_{2r},   V{r}[31:16] lane j = A{j}_{2r+1}, lanes 16-31 repeat
    B:  V{r}[15:0] lane j = B{2r}_{j},   V{r}[31:16] lane j = B{2r+1}_{j}, lanes 16-31 repeat
    C:  V{r} lane j = C{2r}_{j},  V{r} lane 16+j = C{2r+1}_{j}
A second gfx11 definition is the AMD matrix instruction calculator's formulas (InstCalcGfx11):
    C/D entry (i, j) -> VGPR floor(16*i/32), lane (16*i) % 32 + j;
    16-bit C/D -> register slot 2*floor(i/2) + (OPSEL>>2) (two 16-bit slots per VGPR).
gfx12 reference: GPUOpen "Using the Matrix Cores of AMD RDNA 4 architecture GPUs" VGPR
figures and the AMD matrix instruction calculator (InstCalcGfx12) for the K order:
    16-bit A lane l element i = A[l%16][4*(l//16) + 8*(i//4) + i%4] (lanes 0-15 hold k 0-3
    and 8-11, lanes 16-31 k 4-7 and 12-15); 8-bit A lane l element i = A[l%16][8*(l//16)+i];
    B likewise with rows and columns swapped; C/D lane l value v = C[8*(l//16) + v][l%16].
"""
from __future__ import annotations

import numpy as np
import pytest

from wmma_gen import layouts


def _manual_gfx11():
    a = np.zeros((32, 16, 2), dtype=int)   # [lane, element] -> (row m, k)
    b = np.zeros((32, 16, 2), dtype=int)   # [lane, element] -> (k, col n)
    c = np.zeros((32, 8, 2), dtype=int)    # [lane, vgpr] -> (row, col)
    for r in range(8):                     # VGPR V{r}
        for half in range(2):              # [15:0], [31:16]
            for j in range(16):
                for lane in (j, j + 16):   # "Lanes 16-31 replicate lanes 0-15"
                    a[lane, 2 * r + half] = (j, 2 * r + half)
                    b[lane, 2 * r + half] = (2 * r + half, j)
        for j in range(16):
            c[j, r] = (2 * r, j)
            c[16 + j, r] = (2 * r + 1, j)
    return a, b, c


def _manual_gfx12(bits=16):
    a = np.zeros((32, 8, 2), dtype=int)
    b = np.zeros((32, 8, 2), dtype=int)
    c = np.zeros((32, 8, 2), dtype=int)
    for lane in range(32):
        half_wave, j = divmod(lane, 16)
        for i in range(8):
            # 16-bit: VGPR i//2 of the lower half-wave holds k 0..3 then 8..11 (calculator)
            k = (4 * half_wave + (i % 4) + 8 * (i // 4)) if bits == 16 else 8 * half_wave + i
            a[lane, i] = (j, k)
            b[lane, i] = (k, j)
            c[lane, i] = (8 * half_wave + i, j)
    return a, b, c


def test_gfx12_8bit_k_order():
    a, b, _ = _manual_gfx12(bits=8)
    assert all(layouts.a_coord("gfx12", l, i, bits=8) == tuple(a[l, i]) for l in range(32) for i in range(8))
    assert all(layouts.b_coord("gfx12", l, i, bits=8) == tuple(b[l, i]) for l in range(32) for i in range(8))


MANUAL = {"gfx11": _manual_gfx11(), "gfx12": _manual_gfx12()}


def _from_layouts(family):
    n = layouts.ab_elements(family)
    a = np.array([[layouts.a_coord(family, l, i) for i in range(n)] for l in range(32)])
    b = np.array([[layouts.b_coord(family, l, i) for i in range(n)] for l in range(32)])
    c = np.array([[layouts.c_coord(family, l, v) for v in range(8)] for l in range(32)])
    return a, b, c


@pytest.mark.parametrize("family", layouts.FAMILIES)
def test_layouts_match_manual_tables(family):
    got_a, got_b, got_c = _from_layouts(family)
    ref_a, ref_b, ref_c = MANUAL[family]
    np.testing.assert_array_equal(got_a, ref_a, err_msg=f"{family} A layout")
    np.testing.assert_array_equal(got_b, ref_b, err_msg=f"{family} B layout")
    np.testing.assert_array_equal(got_c, ref_c, err_msg=f"{family} C/D layout")


def test_gfx11_c_layout_matches_calculator_formula():
    for i in range(16):
        for j in range(16):
            vgpr, lane = (16 * i) // 32, (16 * i) % 32 + j
            assert layouts.c_coord("gfx11", lane, vgpr) == (i, j)


def test_ab_elements():
    assert layouts.ab_elements("gfx11") == 16
    assert layouts.ab_elements("gfx12") == 8


def _count(coords, shape=(16, 16)):
    seen = np.zeros(shape, dtype=int)
    np.add.at(seen, (coords[..., 0].ravel(), coords[..., 1].ravel()), 1)
    return seen


def test_gfx11_each_half_wave_covers_a_and_b_exactly_once():
    a, b, _ = _from_layouts("gfx11")
    for half in (slice(0, 16), slice(16, 32)):
        assert (_count(a[half]) == 1).all()
        assert (_count(b[half]) == 1).all()
    np.testing.assert_array_equal(a[:16], a[16:])   # replication


def test_gfx12_wave_covers_a_and_b_exactly_once_without_duplication():
    a, b, _ = _from_layouts("gfx12")
    assert (_count(a) == 1).all()
    assert (_count(b) == 1).all()
    # 16-bit: the lower half-wave holds k 0-3 and 8-11, the upper k 4-7 and 12-15
    assert set(a[:16, :, 1].ravel()) == {0, 1, 2, 3, 8, 9, 10, 11}
    assert set(a[16:, :, 1].ravel()) == {4, 5, 6, 7, 12, 13, 14, 15}


@pytest.mark.parametrize("family", layouts.FAMILIES)
def test_c_covers_tile_exactly_once(family):
    _, _, c = _from_layouts(family)
    assert (_count(c) == 1).all()


@pytest.mark.parametrize("bits", [16, 8])
def test_gfx12_builder_k_order_is_a_permutation_of_the_hardware_slots(bits):
    # kernels/fragments.lane_run loads k = 8*(lane//16) + i for A and B alike; for every row
    # (lane % 16) the hardware's slots (half-wave, element) map onto k 0..15 exactly once,
    # and so do the builder's: one shared permutation, so sum_k A*B is unchanged.
    a, _, _ = _from_layouts_bits("gfx12", bits)
    for j in range(16):
        hw = sorted(int(a[half * 16 + j, i, 1]) for half in (0, 1) for i in range(8))
        builder = sorted(8 * half + i for half in (0, 1) for i in range(8))
        assert hw == builder == list(range(16))


def _from_layouts_bits(family, bits):
    n = layouts.ab_elements(family)
    a = np.array([[layouts.a_coord(family, l, i, bits) for i in range(n)] for l in range(32)])
    return a, None, None


def test_gfx11_16bit_accumulator_vector_index_matches_calculator():
    # calculator: 16-bit C/D entry of row i lives in 16-bit slot 2*floor(i/2) + (OPSEL>>2)
    # (slot s = VGPR s//2, half s%2); slot index == element of the vector<16xT>.
    for opsel in (0, 1):
        for lane in range(32):
            for v in range(8):
                i, _ = layouts.c_coord("gfx11", lane, v)
                assert layouts.c_vector_index("gfx11", 16, v, opsel) == 2 * (i // 2) + opsel
    assert layouts.c_vector_len("gfx11", 16) == 16
    assert layouts.c_vector_len("gfx11", 32) == 8


@pytest.mark.parametrize("family,bits", [("gfx11", 32), ("gfx12", 32), ("gfx12", 16)])
def test_dense_accumulators_are_identity(family, bits):
    assert [layouts.c_vector_index(family, bits, v) for v in range(8)] == list(range(8))
    assert layouts.c_vector_len(family, bits) == 8
