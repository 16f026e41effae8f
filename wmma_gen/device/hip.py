"""HipDevice: the Device contract over hip-python on a real AMD GPU (optional extra:
`pip install 'wmma-gen[hip]'`). hip-python is imported lazily, so wmma_gen works without it.

Calls (HIP runtime API, hip-python returns `(hipError_t, results...)` tuples):
  hipModuleLoadData(hsaco) / hipModuleGetFunction(module, name)   per compiled.key, cached
  hipMalloc / hipFree / hipMemcpy                                 Buffers
  hipModuleLaunchKernel(f, grid, block, 0, stream, None, extra)   kernargs packed from the
      metadata (kernargs.py) and passed through `extra` =
      {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}
  hipEventRecord before/after the launch + hipEventElapsedTime      Timing(source="hip")
Launch-parameter markers are ((void*)1, (void*)2, (void*)3) in hip_runtime_api.h.
"""
from __future__ import annotations

import ctypes
from typing import Sequence

import numpy as np

from ..errors import DeviceError
from .base import Arg, Buffer, Device, Timing
from .kernargs import check_launch, pack_kernargs

_PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END = 1, 2, 3   # hip_runtime_api.h


def import_hip():
    """The hip-python `hip` module, or DeviceError saying how to get it."""
    try:
        from hip import hip  # hip-python
    except ImportError as e:
        import sys
        found = sys.modules.get("hip")
        why = "not installed" if found is None or getattr(found, "__file__", None) is None else f"not importable ({e})"
        raise DeviceError(f"hip-python is {why}; install it with pip install 'wmma-gen[hip]' "
                          "on a machine with ROCm") from None
    return hip


def _check(hip, result, call: str):
    """Unpack a hip-python `(err, *values)` result, raising DeviceError on failure."""
    if isinstance(result, tuple):
        err, values = result[0], result[1:]
    else:
        err, values = result, ()
    if err != hip.hipError_t.hipSuccess:
        try:
            text = hip.hipGetErrorString(err)
            text = text.decode() if isinstance(text, bytes) else str(text)
        except Exception:  # error text is best effort; the code itself is reported
            text = ""
        raise DeviceError(f"{call} failed: {err} {text}".rstrip())
    return values[0] if len(values) == 1 else values


def visible_gpus() -> tuple[list[str], str]:
    """(gfx arch names of visible GPUs, reason when there are none)."""
    try:
        hip = import_hip()
    except DeviceError as e:
        return [], str(e)
    try:
        n = _check(hip, hip.hipGetDeviceCount(), "hipGetDeviceCount")
        archs = []
        for i in range(n):
            props = hip.hipDeviceProp_t()
            _check(hip, hip.hipGetDeviceProperties(props, i), "hipGetDeviceProperties")
            name = props.gcnArchName
            archs.append((name.decode() if isinstance(name, bytes) else str(name)).split(":")[0])
    except DeviceError as e:
        return [], f"HIP runtime reports no usable GPU: {e}"
    except Exception as e:  # the HIP runtime library may be missing although hip-python imports
        return [], f"HIP runtime unavailable: {e}"
    return archs, "" if archs else "hip-python imports but no GPU is visible (hipGetDeviceCount = 0)"


class HipDevice(Device):
    name = "hip"

    def __init__(self, device_id: int = 0):
        super().__init__()
        self.hip = hip = import_hip()
        archs, reason = visible_gpus()
        if not archs:
            raise DeviceError(f"device=hip is not available: {reason}")
        if not 0 <= device_id < len(archs):
            raise DeviceError(f"device_id={device_id} is not allowed: 0..{len(archs) - 1} ({archs})")
        self.device_id, self.arch = device_id, archs[device_id]
        _check(hip, hip.hipSetDevice(device_id), "hipSetDevice")
        self._ptrs: dict[int, object] = {}
        self._functions: dict[str, tuple[object, object]] = {}   # compiled.key -> (module, function)

    # ---- memory -----------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> int:
        ptr = _check(self.hip, self.hip.hipMalloc(max(nbytes, 1)), f"hipMalloc({nbytes})")
        addr = int(ptr)
        self._ptrs[addr] = ptr
        return addr

    def _free(self, buf: Buffer) -> None:
        _check(self.hip, self.hip.hipFree(self._ptrs.pop(buf.addr)), "hipFree")

    def _copy_in(self, buf: Buffer, raw: memoryview) -> None:
        host = np.frombuffer(raw, dtype=np.uint8)
        _check(self.hip, self.hip.hipMemcpy(self._ptrs[buf.addr], host, host.size,
                                            self.hip.hipMemcpyKind.hipMemcpyHostToDevice), "hipMemcpy H2D")

    def _copy_out(self, buf: Buffer, nbytes: int) -> bytes:
        host = np.empty(nbytes, dtype=np.uint8)
        _check(self.hip, self.hip.hipMemcpy(host, self._ptrs[buf.addr], nbytes,
                                            self.hip.hipMemcpyKind.hipMemcpyDeviceToHost), "hipMemcpy D2H")
        return host.tobytes()

    def sync(self) -> None:
        _check(self.hip, self.hip.hipDeviceSynchronize(), "hipDeviceSynchronize")

    # ---- launch -----------------------------------------------------------------------------
    def function(self, kernel):
        hit = self._functions.get(kernel.key)
        if hit is None:
            module = _check(self.hip, self.hip.hipModuleLoadData(kernel.hsaco), "hipModuleLoadData")
            fn = _check(self.hip, self.hip.hipModuleGetFunction(module, kernel.name.encode()),
                        f"hipModuleGetFunction({kernel.name})")
            hit = self._functions[kernel.key] = (module, fn)
        return hit[1]

    def launch(self, kernel, grid, block, args: Sequence[Arg]) -> Timing:
        if kernel.arch != self.arch:
            raise DeviceError(f"kernel arch={kernel.arch} is not allowed on GPU {self.device_id}: it is {self.arch}")
        grid, block = check_launch(kernel.metadata, grid, block)
        packed = pack_kernargs(kernel.metadata, self._pointer_values(args), grid, block)
        hip, fn = self.hip, self.function(kernel)
        arg_buf = ctypes.create_string_buffer(packed, len(packed))
        size = ctypes.c_size_t(len(packed))
        extra = (ctypes.c_void_p * 5)(_PARAM_BUFFER_POINTER, ctypes.addressof(arg_buf),
                                      _PARAM_BUFFER_SIZE, ctypes.addressof(size), _PARAM_END)
        start = _check(hip, hip.hipEventCreate(), "hipEventCreate")
        stop = _check(hip, hip.hipEventCreate(), "hipEventCreate")
        try:
            _check(hip, hip.hipEventRecord(start, None), "hipEventRecord")
            _check(hip, hip.hipModuleLaunchKernel(fn, *grid, *block, 0, None, None, ctypes.addressof(extra)),
                   f"hipModuleLaunchKernel({kernel.name})")
            _check(hip, hip.hipEventRecord(stop, None), "hipEventRecord")
            _check(hip, hip.hipEventSynchronize(stop), "hipEventSynchronize")
            ms = _check(hip, hip.hipEventElapsedTime(start, stop), "hipEventElapsedTime")
        finally:
            hip.hipEventDestroy(start)
            hip.hipEventDestroy(stop)
        return Timing(float(ms) / 1e3, "hip", f"GPU time between hipEvents on {self.arch}")

    def close(self) -> None:
        super().close()
        for module, _fn in self._functions.values():
            self.hip.hipModuleUnload(module)
        self._functions.clear()
