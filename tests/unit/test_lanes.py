"""kernels/lanes.py's slot permutation against the manuals' accumulator layout (layouts.c_coord:
RDNA3 ISA guide 7.9; GPUOpen "Using the Matrix Cores of AMD RDNA 4"): giving row r the slot
sigma16(r) makes accumulator value v of lane l slot 8*(l//16) + v on both families, which the
attention forward (a_row) and backward (slot) rely on."""
import pytest

from wmma_gen import layouts
from wmma_gen.kernels.lanes import sigma16_const


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_accumulator_value_v_of_lane_l_is_slot_8h_plus_v(family):
    for lane in range(32):
        for v in range(8):
            row, col = layouts.c_coord(family, lane, v)
            assert col == lane % 16
            assert sigma16_const(family, row) == 8 * (lane // 16) + v, (family, lane, v, row)


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_slot_permutes_each_block_of_16(family):
    for block in range(4):
        rows = range(16 * block, 16 * block + 16)
        assert sorted(sigma16_const(family, r) for r in rows) == list(rows)
