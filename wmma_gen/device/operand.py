"""Operands a kernel reads and writes where they already live: (address, shape, strides, dtype,
device). Nothing here copies, allocates or synchronises.

    as_operand(x, name)      torch.Tensor (CPU or ROCm), any DLPack producer (kDLCPU, kDLROCM),
                             numpy.ndarray  ->  Operand

Strides are in elements, as torch and DLPack give them (numpy's byte strides are divided by
the item size; a byte stride that is not a multiple of it is refused: no kernel can use it).
`owner` keeps the memory alive for as long as the Operand is referenced.

While this thread captures a HIP graph (HipDevice.begin_capture .. end_capture) every owner an
Operand is made over is also appended to the capture's keep-alive list (`capture_keep`), which
end_capture hands to the graph (HipGraph.keep_alive): a replay writes every buffer its kernels
name, including ones an op allocated and dropped (an lse nobody asked for, the forward's lse
freed after backward), so they must live as long as the graph.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..errors import DeviceError
from .dlpack import read_dlpack

DEVICES = ("cpu", "rocm")

# storage dtype names (kernels/signature.STORAGE) of the element types users pass
_NUMPY = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.int32): "i32",
          np.dtype(np.uint32): "i32", np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
          np.dtype(np.uint16): "bf16", np.dtype(np.int16): "bf16", np.dtype(np.float64): "f64"}
_TORCH = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "i32", "int8": "i8",
          "uint8": "u8", "float64": "f64", "float8_e4m3fn": "fp8", "float8_e5m2": "bf8"}
ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i8": 1, "u8": 1, "f64": 8, "fp8": 1, "bf8": 1}


@dataclass(frozen=True, eq=False)
class Operand:
    """One array as a kernel sees it. ptr is the address of element (0, ..., 0)."""
    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str
    device: str = "cpu"
    device_id: int = 0
    owner: object = None
    name: str = ""

    def __post_init__(self):
        if self.device not in DEVICES:
            raise DeviceError(f"{self.name or 'operand'}.device={self.device!r} is not allowed: one of {DEVICES}")
        if len(self.shape) != len(self.strides):
            raise DeviceError(f"{self.name or 'operand'}: shape {self.shape} and strides {self.strides} differ in rank")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return ITEMSIZE[self.dtype]

    def span(self) -> tuple[int, int]:
        """(lowest, one past the highest) byte address any element occupies; (ptr, ptr) if empty."""
        if not self.size:
            return self.ptr, self.ptr
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        return self.ptr + lo * self.itemsize, self.ptr + (hi + 1) * self.itemsize

    def view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> "Operand":
        """Another view of the same memory (offset in elements)."""
        return Operand(self.ptr + offset * self.itemsize, tuple(shape), tuple(strides), self.dtype,
                       self.device, self.device_id, self.owner, self.name)

    def with_dtype(self, dtype: str) -> "Operand":
        """The same bytes read as another storage dtype of equal size (e.g. u8 as fp8)."""
        if ITEMSIZE[dtype] != self.itemsize:
            raise DeviceError(f"{self.name}: dtype {self.dtype} cannot be read as {dtype} (item sizes differ)")
        return Operand(self.ptr, self.shape, self.strides, dtype, self.device, self.device_id, self.owner, self.name)

    def where(self) -> str:
        return "cpu" if self.device == "cpu" else f"rocm:{self.device_id}"


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "stride")


_TORCH_BY_DTYPE: dict = {}     # torch.dtype -> storage name, filled on first use (no torch import here)


def _from_torch(t, name: str) -> Operand:
    dt = _TORCH_BY_DTYPE.get(t.dtype)
    if dt is None:
        dt = _TORCH.get(str(t.dtype).removeprefix("torch."))
        if dt is not None:
            _TORCH_BY_DTYPE[t.dtype] = dt
    if dt is None:
        raise DeviceError(f"{name}.dtype={t.dtype} is not allowed: one of "
                          + ", ".join(f"torch.{k}" for k in _TORCH))
    kind = t.device.type
    if kind == "cpu":
        dev, idx = "cpu", 0
    elif kind == "cuda":
        import torch
        if getattr(torch.version, "hip", None) is None:
            raise DeviceError(f"{name} is on {t.device}, an NVIDIA CUDA device: wmma_gen runs on AMD GPUs "
                              "(a ROCm build of torch, where device 'cuda' is HIP) or on CPU tensors (emulator)")
        dev, idx = "rocm", t.device.index or 0
    else:
        raise DeviceError(f"{name}.device={t.device} is not allowed: cpu or a ROCm GPU ('cuda' in ROCm torch)")
    return Operand(t.data_ptr(), tuple(t.shape), t.stride(), dt, dev, idx, t, name)


def _from_numpy(a: np.ndarray, name: str, dtype: str | None) -> Operand:
    dt = dtype or _NUMPY.get(a.dtype)
    if dt is None or ITEMSIZE.get(dt) != a.itemsize:
        raise DeviceError(f"{name}.dtype={a.dtype} is not allowed: one of "
                          + ", ".join(sorted({str(d) for d in _NUMPY})))
    item = a.itemsize
    strides = []
    for n, st in zip(a.shape, a.strides):
        if n > 1 and st % item:
            raise DeviceError(f"{name}.strides={a.strides} is not allowed: byte strides must be multiples of "
                              f"the item size {item} (no kernel can address this view; pass a copy)")
        strides.append(st // item if n > 1 else 0)
    return Operand(int(a.__array_interface__["data"][0]), tuple(int(n) for n in a.shape), tuple(strides),
                   dt, "cpu", 0, a, name)


class _Capture(threading.local):
    keep = None             # a class default: reading it raises nothing (the hot path asks often)


_capture = _Capture()
CAPTURES = [0]              # captures under way in any thread: 0 lets a call skip capture_keep()


def capture_keep() -> list | None:
    """This thread's graph keep-alive list while it captures (HipDevice.begin_capture), else None."""
    return _capture.keep


def start_keep() -> list:
    if _capture.keep is None:
        CAPTURES[0] += 1
    _capture.keep = []
    return _capture.keep


def stop_keep() -> list:
    keep, _capture.keep = _capture.keep, None
    if keep is not None:
        CAPTURES[0] -= 1
    return keep or []


def hold(keep: list, *xs) -> None:
    """Append what keeps each x's memory alive: a torch tensor's storage, not the tensor (an
    extra reference to a gradient tensor would make autograd copy it instead of taking it, and
    a copy made during a capture runs at capture time), else x itself."""
    for x in xs:
        if x is not None:
            keep.append(x.untyped_storage() if _is_torch(x) and hasattr(x, "untyped_storage") else x)


def as_operand(x, name: str = "x", dtype: str | None = None) -> Operand:
    """An Operand over x's memory (no copy). dtype overrides the inferred storage name where
    the element type does not say it (uint16 bits -> "bf16", uint8 -> "fp8")."""
    if isinstance(x, Operand):    # already one: kept as it is (its own name), the repeat-call path
        return x if dtype is None or dtype == x.dtype else x.with_dtype(dtype)
    if isinstance(x, np.ndarray):
        op = _from_numpy(x, name, dtype)
    elif _is_torch(x):
        op = _from_torch(x, name)
    elif hasattr(x, "__dlpack__"):
        op = Operand(*read_dlpack(x, name), name=name)
    else:
        raise DeviceError(f"{name}={type(x).__name__} is not allowed: a torch.Tensor, a numpy array or an "
                          "object with __dlpack__ (kDLCPU or kDLROCM memory)")
    keep = getattr(_capture, "keep", None)
    if keep is not None:
        hold(keep, x if op.owner is None else op.owner)
    return op if dtype is None or dtype == op.dtype else op.with_dtype(dtype)
