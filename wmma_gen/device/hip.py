"""HipDevice: the Device contract over hip-python (optional extra: `pip install 'wmma-gen[hip]'`).
hip-python is imported lazily, so wmma_gen works without it.

Calls (HIP runtime API; hip-python returns `(hipError_t, results...)` tuples):
  hipGetDeviceCount / hipGetDeviceProperties(R0600)      visible GPUs, gcnArchName, device name
  hipSetDevice, hipStreamCreate                            one stream per HipDevice: all its work
  hipMalloc + hipMemset(0) / hipFree                        Buffers (zeroed, as on the emulator)
  hipMemcpyAsync(stream) + hipStreamSynchronize             copy_in / copy_out
  hipModuleLoadData(hsaco) / hipModuleGetFunction(name)     per compiled.key, cached
  hipModuleLaunchKernel(f, grid, block, 0, stream, None, extra)  kernargs packed from the
      metadata (kernargs.py) and passed through `extra` =
      {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}
      (markers (void*)1, 2, 3 in hip_runtime_api.h)
  hipEventCreate/Record/Synchronize/ElapsedTime/Destroy     launch() and the timer `time()`
  hipDeviceSynchronize                                      sync()
A failed call raises DeviceError naming the call, the hipError_t name and hipGetErrorString.

Where the numbers come from: `source="hip"` only when the device is a real GPU. A HIP
runtime that stands in for one (tests/hipstub: the emulator behind a libamdhip64.so) marks its
device name with EMULATED_MARK; its event times are a fake clock, reported as
source="emulator" with a note saying so (`timing_source`).

GPU timing protocol (`HipDevice.time`, result `GpuTiming` with every parameter beside the number):
  1. operand sets: the caller passes several argument lists whose distinct buffers together
     exceed the target's L2 + Infinity Cache (targets.Target.cache_bytes); launches rotate
     through them, so a timed launch never finds its operands in a cache the previous one warmed.
  2. warm-up: `warmup` launches between one event pair; their mean is the per-launch estimate.
  3. N = ceil(min_pair_ms / estimate) launches between one event pair (clamped to
     1..max_launches), so the pair spans >= ~1 ms and event resolution does not matter.
  4. `repeats` such pairs; per-launch time of each = span / N; report median and min.
"""
from __future__ import annotations

import ctypes
import itertools
import statistics
import struct
from typing import Sequence

import numpy as np

from ..errors import DeviceError
from ..targets import TARGETS
from .base import Arg, Buffer, Device, Timing
from .hip_call import hip_check, hip_text
from .hip_capture import HipCapture, HipGraph  # noqa: F401  (HipGraph: what end_capture returns)
from .hip_timing import (GpuTiming, TimingProtocol, launches_per_pair, rotation_bytes,  # noqa: F401
                         sets_needed)
from .kernargs import check_launch, pack_kernargs
from .native import launch_address, launcher_module

PARAM_BUFFER_POINTER, PARAM_BUFFER_SIZE, PARAM_END = 1, 2, 3   # hip_runtime_api.h HIP_LAUNCH_PARAM_*


def launch_extra(segment) -> tuple:
    """(extra, buf, size): hipModuleLaunchKernel's `extra` array over a copy of the kernarg
    `segment` (buf, patchable in place) and its size; the array points into the other two, so keep
    all three alive as long as launches use it."""
    buf = ctypes.create_string_buffer(bytes(segment), len(segment))
    size = ctypes.c_size_t(len(segment))
    extra = (ctypes.c_void_p * 5)(PARAM_BUFFER_POINTER, ctypes.addressof(buf), PARAM_BUFFER_SIZE,
                                  ctypes.addressof(size), PARAM_END)
    return extra, buf, size


INSTALL_HINT = "pip install 'wmma-gen[hip]'"
EMULATED_MARK = "[emulator-backed]"
EMULATED_NOTE = "fake clock of an emulator-backed HIP runtime (no GPU): not a measurement"


def import_hip():
    """The hip-python `hip` module, or DeviceError with a one-line install hint."""
    try:
        from hip import hip  # hip-python
    except ImportError as e:
        import sys
        found = sys.modules.get("hip")
        why = "not installed" if found is None or getattr(found, "__file__", None) is None else f"not importable ({e})"
        raise DeviceError(f"hip-python is {why}: {INSTALL_HINT} (a GPU needs the ROCm runtime too)") from None
    return hip


def timing_source(device_name: str) -> str:
    """"hip" for a real GPU; "emulator" for a runtime whose device name carries EMULATED_MARK."""
    return "emulator" if EMULATED_MARK in device_name else "hip"


def _device_props(hip, i: int):
    try:
        return hip_check(hip, hip.hipGetDeviceProperties(i), "hipGetDeviceProperties")
    except TypeError:     # hip-python before 6.x: hipGetDeviceProperties(prop, deviceId)
        props = hip.hipDeviceProp_t()
        hip_check(hip, hip.hipGetDeviceProperties(props, i), "hipGetDeviceProperties")
        return props


def visible_devices() -> tuple[list[tuple[str, str]], str]:
    """([(gfx arch, device name)] of the devices HIP reports, reason when there are none)."""
    try:
        hip = import_hip()
    except DeviceError as e:
        return [], str(e)
    try:
        n = hip_check(hip, hip.hipGetDeviceCount(), "hipGetDeviceCount")
        found = []
        for i in range(n):
            props = _device_props(hip, i)
            found.append((hip_text(props.gcnArchName).split(":")[0], hip_text(props.name)))
    except DeviceError as e:
        return [], f"HIP runtime reports no usable GPU: {e}"
    except Exception as e:  # the HIP runtime library may be missing although hip-python imports
        return [], f"HIP runtime unavailable: {e}"
    return found, "" if found else "hip-python imports but no GPU is visible (hipGetDeviceCount = 0)"


def visible_gpus() -> tuple[list[str], str]:
    """(gfx arch names of visible HIP devices, reason when there are none)."""
    found, reason = visible_devices()
    return [arch for arch, _ in found], reason


def real_gpu_visible() -> bool:
    """A HIP device that is a GPU (not an emulator-backed stand-in) is visible."""
    return any(timing_source(name) == "hip" for _, name in visible_devices()[0])


class HipDevice(HipCapture, Device):
    name = "hip"

    def __init__(self, device_id: int = 0):
        super().__init__()
        self.hip = hip = import_hip()
        found, reason = visible_devices()
        if not found:
            raise DeviceError(f"device=hip is not available: {reason}")
        if not 0 <= device_id < len(found):
            raise DeviceError(f"device_id={device_id} is not allowed: 0..{len(found) - 1} ({found})")
        self.device_id = device_id
        self.arch, self.device_name = found[device_id]
        self.source = timing_source(self.device_name)
        self.note = (f"GPU time between hipEvents on {self.arch}" if self.source == "hip"
                     else f"{EMULATED_NOTE} ({self.device_name})")
        hip_check(hip, hip.hipSetDevice(device_id), "hipSetDevice")
        self.stream = hip_check(hip, hip.hipStreamCreate(), "hipStreamCreate")
        self._ptrs: dict[int, object] = {}
        self._functions: dict[str, tuple[object, object]] = {}   # compiled.key -> (module, function)

    # ---- memory -----------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> int:
        size = max(nbytes, 1)
        ptr = hip_check(self.hip, self.hip.hipMalloc(size), f"hipMalloc({nbytes})")
        try:
            hip_check(self.hip, self.hip.hipMemset(ptr, 0, size), "hipMemset")
        except DeviceError:
            self.hip.hipFree(ptr)
            raise
        self._ptrs[int(ptr)] = ptr
        return int(ptr)

    def _free(self, buf: Buffer) -> None:
        hip_check(self.hip, self.hip.hipFree(self._ptrs.pop(buf.addr)), "hipFree")

    def _copy(self, dst, src, nbytes: int, kind: str) -> None:
        hip = self.hip
        hip_check(hip, hip.hipMemcpyAsync(dst, src, nbytes, getattr(hip.hipMemcpyKind, f"hipMemcpy{kind}"),
                                       self.stream), f"hipMemcpyAsync {kind}")
        hip_check(hip, hip.hipStreamSynchronize(self.stream), "hipStreamSynchronize")

    def _copy_in(self, buf: Buffer, raw: memoryview) -> None:
        host = np.frombuffer(raw, dtype=np.uint8)
        self._copy(self._ptrs[buf.addr], host, host.size, "HostToDevice")

    def _copy_out(self, buf: Buffer, nbytes: int) -> bytes:
        host = np.empty(nbytes, dtype=np.uint8)
        self._copy(host, self._ptrs[buf.addr], nbytes, "DeviceToHost")
        return host.tobytes()

    def sync(self) -> None:
        hip_check(self.hip, self.hip.hipDeviceSynchronize(), "hipDeviceSynchronize")

    # ---- code objects -----------------------------------------------------------------------
    def _check_code_object(self, kernel) -> None:
        """Refuse a code object built for another arch before HIP sees it (its ELF e_flags)."""
        from ..codeobj.codeobject import CodeObjectError, load_code_object
        want = TARGETS[self.arch].elf_mach if self.arch in TARGETS else None
        try:
            mach = load_code_object(kernel.hsaco).mach
        except CodeObjectError:   # unreadable: HIP reports the image
            return
        if want is not None and mach != want:
            has = next((t.arch for t in TARGETS.values() if t.elf_mach == mach), f"{mach:#x}")
            raise DeviceError(f"kernel {kernel.name}'s code object (EF_AMDGPU_MACH {mach:#x}, {has}) is not "
                              f"allowed on GPU {self.device_id}: it is {self.arch} ({want:#x})")

    def function(self, kernel):
        hit = self._functions.get(kernel.key)
        if hit is None:
            self._check_code_object(kernel)
            module = hip_check(self.hip, self.hip.hipModuleLoadData(kernel.hsaco), "hipModuleLoadData")
            try:
                fn = hip_check(self.hip, self.hip.hipModuleGetFunction(module, kernel.name.encode()),
                            f"hipModuleGetFunction({kernel.name})")
            except DeviceError:
                self.hip.hipModuleUnload(module)
                raise
            hit = self._functions[kernel.key] = (module, fn)
        return hit[1]

    # ---- launch -----------------------------------------------------------------------------
    def _packed(self, kernel, grid, block, args: Sequence[Arg]):
        """(grid, block, extra array): the `extra` form of one launch's kernargs."""
        if kernel.arch != self.arch:
            raise DeviceError(f"kernel arch={kernel.arch} is not allowed on GPU {self.device_id}: it is "
                              f"{self.arch}; compile for arch={self.arch}")
        grid, block = check_launch(kernel.metadata, grid, block)
        packed = pack_kernargs(kernel.metadata, self._pointer_values(args), grid, block)
        return grid, block, launch_extra(packed)    # the buffers live as long as the tuple

    def _launch(self, kernel, fn, grid, block, extra) -> None:
        hip_check(self.hip, self.hip.hipModuleLaunchKernel(fn, *grid, *block, 0, self.stream, None,
                                                        ctypes.addressof(extra[0])),
               f"hipModuleLaunchKernel({kernel.name})")

    def enqueue(self, kernel, grid, block, args: Sequence[Arg], stream=None, host_spans=()) -> None:
        """One hipModuleLaunchKernel on `stream` (the caller's handle, e.g. torch's
        current_stream().cuda_stream; None: this device's stream). No event, no sync, no copy.
        `host_spans` (CPU operands) are refused on a GPU, except on an emulator-backed runtime
        whose device can address host memory (tests/hipstub), where they pass through."""
        if host_spans and self.source == "hip":
            raise DeviceError(f"host memory operands are not allowed on GPU {self.device_id} ({self.arch}): "
                              "move the tensors to the GPU first (wmma_gen never copies them silently)")
        grid, block, extra = self._packed(kernel, grid, block, args)
        fn = self.function(kernel)
        hip_check(self.hip, self.hip.hipModuleLaunchKernel(fn, *grid, *block, 0, self.stream if stream is None else stream,
                                                        None, ctypes.addressof(extra[0])),
               f"hipModuleLaunchKernel({kernel.name})")

    def prepack(self, kernel, template, host: bool = False):
        """launch(pointers, stream): the template's segment in a kernarg buffer of its own, the
        new addresses packed in place (struct.pack_into at the code object's pointer offsets) and
        one hipModuleLaunchKernel -- in C when device/_fastlaunch is built (device/native.py:
        the same patch and call, no Python per launch), else this closure. HIP copies the kernarg buffer when the launch is enqueued (and
        a stream capture copies it into the graph node), so the next call may overwrite it.
        host: some pointers are host memory (refused on a GPU, as in enqueue)."""
        if host and self.source == "hip":
            raise DeviceError(f"host memory operands are not allowed on GPU {self.device_id} ({self.arch}): "
                              "move the tensors to the GPU first (wmma_gen never copies them silently)")
        if kernel.arch != self.arch:
            raise DeviceError(f"kernel arch={kernel.arch} is not allowed on GPU {self.device_id}: it is {self.arch}")
        fn, hip, own = self.function(kernel), self.hip, self.stream
        native, call = launcher_module(), launch_address()
        if native is not None and call is not None:      # the C launch (device/_fastlaunch.c)
            def on_error(code):
                try:
                    err = hip.hipError_t(code)
                except ValueError:       # a code hip-python's enum lacks: reported as the number
                    raise DeviceError(f"hipModuleLaunchKernel({kernel.name}) failed: hipError_t {code}") from None
                hip_check(hip, (err,), f"hipModuleLaunchKernel({kernel.name})")
            return native.Launcher(call, int(fn), template.grid, template.block, template.segment, template.offsets,
                                   int(own), on_error)
        extra, buf, size = launch_extra(template.segment)
        addr, (gx, gy, gz), (bx, by, bz) = ctypes.addressof(extra), template.grid, template.block
        pack, fmt, ok, call = struct.pack_into, template.fmt, hip.hipError_t.hipSuccess, hip.hipModuleLaunchKernel
        keep = (buf, size, extra)      # alive as long as the closure

        def launch(pointers, stream=None, keep=keep):
            pack(fmt, buf, 0, *pointers)
            err = call(fn, gx, gy, gz, bx, by, bz, 0, own if stream is None else stream, None, addr)
            if err[0] != ok:
                hip_check(hip, err, f"hipModuleLaunchKernel({kernel.name})")
        return launch

    def enqueue_template(self, kernel, template, ptrs: dict, stream=None, host: bool = False) -> None:
        """One launch with `template`'s packing and addresses by name; the launch closure is kept
        in the template (per device), so repeat calls build nothing."""
        launch = template.native.get(self)
        if launch is None:
            launch = template.native[self] = self.prepack(kernel, template, host)
        launch(tuple(ptrs[n] for n in template.pointers), stream)

    def _events(self):
        return [hip_check(self.hip, self.hip.hipEventCreate(), "hipEventCreate") for _ in range(2)]

    def _pair_ms(self, events, run) -> float:
        """Run `run()` between one event pair on the stream; the pair's span in ms."""
        hip, (start, stop) = self.hip, events
        hip_check(hip, hip.hipEventRecord(start, self.stream), "hipEventRecord")
        run()
        hip_check(hip, hip.hipEventRecord(stop, self.stream), "hipEventRecord")
        hip_check(hip, hip.hipEventSynchronize(stop), "hipEventSynchronize")
        return float(hip_check(hip, hip.hipEventElapsedTime(start, stop), "hipEventElapsedTime"))

    def launch(self, kernel, grid, block, args: Sequence[Arg]) -> Timing:
        grid, block, extra = self._packed(kernel, grid, block, args)
        fn = self.function(kernel)
        events = self._events()
        try:
            ms = self._pair_ms(events, lambda: self._launch(kernel, fn, grid, block, extra))
        finally:
            for e in events:
                self.hip.hipEventDestroy(e)
        return Timing(ms / 1e3, self.source, self.note)

    def time(self, kernel, grid, block, args_sets: Sequence[Sequence[Arg]],
             protocol: TimingProtocol = TimingProtocol(), cache_bytes: int | None = None) -> GpuTiming:
        """Per-launch time of `kernel` under `protocol`, rotating through `args_sets` (module doc).
        cache_bytes: what the sets must exceed; default the target's L2 + Infinity Cache."""
        if not args_sets:
            raise DeviceError("args_sets=[] is not allowed: one or more argument lists")
        if cache_bytes is None:
            if self.arch not in TARGETS:
                raise DeviceError(f"arch={self.arch} has no cache sizes in the target table "
                                  f"({', '.join(TARGETS)}); pass cache_bytes")
            cache_bytes = TARGETS[self.arch].cache_bytes
        footprint = rotation_bytes(args_sets)
        if footprint <= cache_bytes:
            per_set = max(footprint // len(args_sets), 1)
            raise DeviceError(f"timing operand sets of {footprint} bytes are not allowed: they must exceed "
                              f"the {cache_bytes} bytes of L2 + Infinity Cache on {self.arch} so launches read "
                              f"DRAM; pass >= {sets_needed(per_set, cache_bytes)} sets of ~{per_set} bytes")
        launches = [self._packed(kernel, grid, block, args) for args in args_sets]
        fn = self.function(kernel)
        rotation = itertools.cycle(launches)

        def run(n: int):
            def go():
                for _ in range(n):
                    g, b, extra = next(rotation)
                    self._launch(kernel, fn, g, b, extra)
            return go

        events = self._events()
        try:
            estimate = self._pair_ms(events, run(protocol.warmup)) / protocol.warmup
            n = launches_per_pair(estimate, protocol)
            samples = tuple(self._pair_ms(events, run(n)) / n / 1e3 for _ in range(protocol.repeats))
        finally:
            for e in events:
                self.hip.hipEventDestroy(e)
        return GpuTiming(statistics.median(samples), min(samples), samples, self.source, self.note, self.arch,
                         self.device_name, protocol, n, estimate, len(args_sets), footprint, cache_bytes)

    def close(self) -> None:
        super().close()
        for module, _fn in self._functions.values():
            self.hip.hipModuleUnload(module)
        self._functions.clear()
        if self.stream is not None:
            self.hip.hipStreamDestroy(self.stream)
            self.stream = None
