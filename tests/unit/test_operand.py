"""Operands from numpy, DLPack and torch: address, shape, element strides, dtype, device --
no copy, and clear refusals (device/operand.py, device/dlpack.py)."""
import numpy as np
import pytest

from wmma_gen.device.operand import Operand, as_operand
from wmma_gen.errors import DeviceError


def test_numpy_view_is_address_shape_element_strides():
    a = np.zeros((4, 6, 8), np.float16)
    v = a[1:, ::2, :].transpose(1, 0, 2)
    op = as_operand(v, "q")
    assert op.ptr == a.__array_interface__["data"][0] + 1 * 6 * 8 * 2
    assert op.shape == (3, 3, 8) and op.strides == (16, 48, 1) and op.dtype == "f16" and op.device == "cpu"
    lo, hi = op.span()
    assert (lo, hi) == (op.ptr, op.ptr + ((3 - 1) * 16 + (3 - 1) * 48 + 7 + 1) * 2)


def test_numpy_negative_stride_span_starts_below_ptr():
    a = np.arange(10, dtype=np.float32)
    op = as_operand(a[::-1], "x")
    assert op.strides == (-1,)
    assert op.span() == (a.__array_interface__["data"][0], a.__array_interface__["data"][0] + 40)


def test_numpy_odd_byte_stride_refused():
    raw = np.zeros(64, np.uint8)
    odd = np.lib.stride_tricks.as_strided(raw.view(np.float16)[:1], (4,), (3,))
    with pytest.raises(DeviceError, match="multiples of the item size 2"):
        as_operand(odd, "x")


def test_dlpack_from_numpy_same_memory_and_owner_keeps_it_alive():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:]

    class Producer:           # only __dlpack__: forces the DLPack reader, not the numpy one
        def __dlpack__(self, **kw):
            return a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return a.__dlpack_device__()
    op = as_operand(Producer(), "x")
    assert op.ptr == a.__array_interface__["data"][0] and op.shape == (3, 3) and op.strides == (4, 1)
    assert op.dtype == "i32" and op.device == "cpu"
    del a
    import ctypes
    assert ctypes.c_int32.from_address(op.ptr).value == 1     # still alive through op.owner


def test_dlpack_cuda_device_refused():
    class Nvidia:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kw):
            raise AssertionError("must not be consumed")
    with pytest.raises(DeviceError, match="kDLCUDA is an NVIDIA GPU"):
        as_operand(Nvidia(), "k")


def test_unknown_object_refused_naming_argument():
    with pytest.raises(DeviceError, match="v=list is not allowed"):
        as_operand([1, 2], "v")


def test_torch_cpu_tensor_bf16_and_strides():
    torch = pytest.importorskip("torch")
    t = torch.zeros(4, 6, dtype=torch.bfloat16)[:, 1::2]
    op = as_operand(t, "w")
    assert op.dtype == "bf16" and op.shape == (4, 3) and op.strides == (6, 2)
    assert op.ptr == t.data_ptr() and op.device == "cpu" and op.owner is t


def test_torch_unsupported_dtype_lists_allowed():
    torch = pytest.importorskip("torch")
    with pytest.raises(DeviceError, match="torch.complex64 is not allowed: one of torch.float16"):
        as_operand(torch.zeros(2, dtype=torch.complex64), "x")


def test_with_dtype_needs_equal_item_size():
    op = Operand(0x1000, (4,), (1,), "u8")
    assert op.with_dtype("fp8").dtype == "fp8"
    with pytest.raises(DeviceError, match="item sizes differ"):
        op.with_dtype("f16")
