"""kernels/global_tensor.GlobalTensor refuses what its 32-bit VGPR offsets cannot address, naming
the argument, its value and what is allowed (no MLIR context needed: checks run before any IR)."""
import pytest

from wmma_gen.kernels.global_tensor import MAX_OPERAND_BITS, GlobalTensor


def test_guarded_wide_elements_need_an_offset_bound():
    with pytest.raises(ValueError, match=r"GlobalTensor\.dtype='f32'.*offsets_checked.*16 bits"):
        GlobalTensor(None, "f32", (1, 1), (8, 8))
    t = GlobalTensor(None, "f32", (1, 1), (8, 8), offsets_checked=True)
    assert t.elem_bits == 32 > MAX_OPERAND_BITS


def test_unguarded_wide_row_vector_needs_an_offset_bound():
    # the attention backward's f32 row vectors (LSE, Di): no extents, but the base (batch, head,
    # first row) and the lane's row are 32-bit byte offsets too, which 2**31 f32 elements overflow
    with pytest.raises(ValueError, match=r"GlobalTensor\.dtype='f32'.*below 2\*\*32 \(offsets_checked\).*16 bits"):
        GlobalTensor(None, "f32", (1, 1, 1))
    assert GlobalTensor(None, "f32", (1, 1, 1), offsets_checked=True).elem_bytes == 4


@pytest.mark.parametrize("dtype,bits", [("i4", 8), ("fp8", 8), ("bf16", 16)])
def test_storage_element_width(dtype, bits):
    assert GlobalTensor(None, dtype, (1, 1), (4, 4)).elem_bits == bits


def test_extents_are_rows_and_cols():
    with pytest.raises(ValueError, match=r"GlobalTensor\.extents has 3 axes; allowed: None or \(rows, cols\)"):
        GlobalTensor(None, "f16", (1, 1), (2, 2, 2))


def test_row_base_takes_one_index_per_stride():
    with pytest.raises(ValueError, match=r"row_base: 2 indices for 3 strides"):
        GlobalTensor(None, "f16", (1, 1, 1)).row_base(0, 0)
