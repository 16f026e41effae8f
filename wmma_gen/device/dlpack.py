"""Reading a DLPack capsule (`x.__dlpack__()`) into plain fields, with ctypes, without copying;
device/operand.py makes the Operand from them (so this reader imports nothing from operand.py).

Struct layouts and codes from dmlc/dlpack include/dlpack/dlpack.h (the legacy, unversioned
DLManagedTensor that every producer supports; capsule name "dltensor", renamed
"used_dltensor" by the consumer, who then owns it and calls its deleter once):

    DLDevice   {int32 device_type; int32 device_id}         kDLCPU 1, kDLROCM 10, kDLROCMHost 11
    DLDataType {uint8 code; uint8 bits; uint16 lanes}       kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4
    DLTensor   {void* data; DLDevice device; int32 ndim; DLDataType dtype;
                int64* shape; int64* strides (NULL = compact row-major); uint64 byte_offset}
    DLManagedTensor {DLTensor dl_tensor; void* manager_ctx; void (*deleter)(DLManagedTensor*)}
"""
from __future__ import annotations

import ctypes
from typing import NamedTuple

from ..errors import DeviceError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_ROCM, KDL_ROCM_HOST = 1, 2, 3, 10, 11
_DEVICE = {KDL_CPU: "cpu", KDL_ROCM_HOST: "cpu", KDL_ROCM: "rocm"}
_DTYPE = {(2, 16): "f16", (4, 16): "bf16", (2, 32): "f32", (0, 32): "i32", (0, 8): "i8", (1, 8): "u8",
          (1, 32): "i32", (2, 64): "f64"}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                     ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed)))]

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype, _api.PyCapsule_IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype, _api.PyCapsule_SetName.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_USED = ctypes.c_char_p(b"used_dltensor")   # must outlive the capsule: the name is not copied


class _Owner:
    """Keeps the producer alive and calls the DLManagedTensor's deleter exactly once."""
    def __init__(self, producer, managed):
        self.producer, self.managed = producer, managed

    def __del__(self):
        m, self.managed = self.managed, None
        if m is not None and m.contents.deleter:
            m.contents.deleter(m)


class DLPackFields(NamedTuple):
    """Operand's fields in its order (ptr, shape, strides, dtype, device, device_id, owner)."""
    ptr: int
    shape: tuple
    strides: tuple
    dtype: str
    device: str
    device_id: int
    owner: object


def read_dlpack(x, name: str) -> DLPackFields:
    try:
        dev_type, dev_id = x.__dlpack_device__()
    except (AttributeError, TypeError):
        dev_type, dev_id = None, 0
    if dev_type is not None and int(dev_type) not in _DEVICE:
        raise DeviceError(f"{name} lives on DLPack device type {int(dev_type)}, not allowed: kDLCPU (1), "
                          f"kDLROCM (10) or kDLROCMHost (11)" + (" -- kDLCUDA is an NVIDIA GPU"
                                                                  if int(dev_type) == KDL_CUDA else ""))
    capsule = x.__dlpack__()
    if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise DeviceError(f"{name}.__dlpack__() did not return an unused 'dltensor' capsule")
    managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule, b"dltensor"), ctypes.POINTER(_Managed))
    _api.PyCapsule_SetName(capsule, _USED)     # ours now: the capsule's destructor leaves it alone
    owner = _Owner(x, managed)
    t = managed.contents.dl_tensor
    device = _DEVICE.get(t.device.device_type)
    if device is None:
        raise DeviceError(f"{name} lives on DLPack device type {t.device.device_type}, not allowed: "
                          "kDLCPU (1), kDLROCM (10) or kDLROCMHost (11)")
    dt = _DTYPE.get((t.dtype.code, t.dtype.bits))
    if dt is None or t.dtype.lanes != 1:
        raise DeviceError(f"{name} has DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}, lanes "
                          f"{t.dtype.lanes}), not allowed: float16/bfloat16/float32/int32/int8/uint8, 1 lane")
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    if t.strides:
        strides = tuple(int(t.strides[i]) if shape[i] > 1 else 0 for i in range(t.ndim))
    else:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.insert(0, acc if n > 1 else 0)
            acc *= n
        strides = tuple(strides)
    ptr = (t.data or 0) + int(t.byte_offset)
    return DLPackFields(ptr, shape, strides, dt, device, int(t.device.device_id) if device == "rocm" else 0, owner)
