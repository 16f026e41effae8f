"""The HIP runtime behind tests/hipstub/hipstub.c, implemented over wmma_gen's emulator.

Each method named after a HIP entry point receives the raw C arguments (pointers as ints)
and returns None on success or raises HipStubError(code). `bind.py` wraps them as ctypes
callbacks and installs them in the C library's table.

What stands for what:
  device memory       the emulator's HostMemory (emu/run/host_memory.py), as on an APU whose
                      GPU dereferences host pointers (XNACK): hipMalloc returns real host memory
                      between guard pages (capacity `memory_bytes`: more is hipErrorOutOfMemory,
                      like a full GPU), and a kernel pointer argument (global_buffer in the code
                      object's metadata) outside every allocation is host memory: the process's
                      readable+writable mapping holding it (/proc/self/maps, host_maps.py) is
                      mapped for that launch, so numpy arrays and torch CPU tensors' data_ptr()s
                      serve as device pointers with no hipMalloc/hipMemcpy. A pointer in no such
                      mapping is refused (hipErrorInvalidValue). Bounds are exact for hipMalloc
                      memory and as coarse as the host mapping for host pointers.
  hipModuleLoadData   the image is read as an AMDGPU ELF (size from its header) by wmma_gen's
                      one ELF reader (codeobj/codeobject.py), checked (EM_AMDGPU,
                      EF_AMDGPU_MACH of the device's arch), its kernels' metadata read from its
                      own NT_AMDGPU_METADATA note and its machine code decoded: the emulator runs
                      the very bytes handed to HIP, whoever compiled them.
  hipModuleLaunchKernel  runs the kernel to completion on the emulator at once. Explicit
                      arguments come from `kernelParams` (one pointer per argument) or from the
                      `extra` kernarg buffer, placed by the code object's `.args` offsets; hidden
                      arguments are filled by the runtime, as ROCclr does. A fault inside the
                      kernel is reported like a GPU fault: the launch returns hipSuccess and the
                      next synchronizing call returns hipErrorLaunchFailure (the fault text is
                      kept in `faults`).
  streams, events     ordering is trivial (work runs at once); an event records the FAKE clock,
                      which advances only by `clock.ms(launch_index)` per launch. Elapsed times
                      are therefore deterministic and never a measurement.
  fault injection     `fail("hipMalloc", "hipErrorOutOfMemory")` makes the next call(s) of that
                      entry point return the error before doing anything.
  stream capture      hipStreamBeginCapture(stream, mode) starts recording: a kernel launch on that
                      stream becomes a graph node (its kernarg segment copied at the call, as HIP
                      does) and runs only when the instantiated graph is launched (hipGraphLaunch);
                      hipMemcpyAsync on it becomes a copy node (`graph_nodes` tells the kinds). In
                      global and thread-local mode the calls HIP refuses while a capture is active
                      -- hipMalloc, hipFree, hipMemcpy, hipMemset, hipModuleLoadData and every
                      synchronize -- return hipErrorStreamCaptureUnsupported and invalidate the
                      capture (hipStreamEndCapture then answers hipErrorStreamCaptureInvalidated),
                      as in CUDA's and HIP's "potentially unsafe API" rule; `capture_errors` keeps
                      what was refused. Relaxed mode refuses nothing.
  execute = False     launches are checked and recorded but not run (host pointers are not
                      resolved either): a benchmark then times the host side of a launch alone.
"""
from __future__ import annotations

import ctypes
import itertools
import struct
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from wmma_gen.compiler.metadata import metadata_from_doc
from wmma_gen.codeobj.codeobject import CodeObjectError, load_code_object
from wmma_gen.device.kernargs import hidden_values
from wmma_gen.emu import Program, run_kernel
from wmma_gen.emu.run.host_memory import HostMemory
from wmma_gen.errors import CompileError, EmulatorFault
from wmma_gen.targets import get_target

from .capture import Capture, CaptureCalls
from .host_maps import HostMappings

DEVICE_NAME = "wmma_gen HIP stub [emulator-backed]"   # HipDevice reads the mark, see hip.py
# hipError_t values (hip_runtime_api.h; the same numbers as hip-python's hipError_t enum)
CODES = {"hipSuccess": 0, "hipErrorInvalidValue": 1, "hipErrorOutOfMemory": 2,
         "hipErrorNotInitialized": 3, "hipErrorNoDevice": 100, "hipErrorInvalidDevice": 101,
         "hipErrorInvalidImage": 200, "hipErrorNoBinaryForGpu": 209, "hipErrorInvalidHandle": 400,
         "hipErrorNotFound": 500, "hipErrorNotReady": 600, "hipErrorLaunchFailure": 719,
         "hipErrorNotSupported": 801, "hipErrorStreamCaptureUnsupported": 900,
         "hipErrorStreamCaptureInvalidated": 901, "hipErrorStreamCaptureImplicit": 906,
         "hipErrorIllegalState": 401, "hipErrorUnknown": 999}
NAMES = {v: k for k, v in CODES.items()}
TEXT = {0: "no error", 1: "invalid argument", 2: "out of memory", 3: "initialization error",
        100: "no ROCm-capable device is detected", 101: "invalid device ordinal",
        200: "device kernel image is invalid", 209: "no kernel image is available for execution on the device",
        400: "invalid resource handle", 500: "named symbol not found", 600: "device not ready",
        719: "unspecified launch failure", 801: "operation not supported",
        900: "operation not permitted when stream is capturing", 901: "operation failed due to a previous error "
        "during capture", 906: "operation would make the legacy stream depend on a capturing blocking stream",
        401: "the operation cannot be performed in the present state", 999: "unknown error"}
_KIND = {0: "H2H", 1: "H2D", 2: "D2H", 3: "D2D", 4: "default"}
_PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END = 1, 2, 3
MAX_IMAGE_BYTES = 256 << 20


class HipStubError(Exception):
    def __init__(self, name: str, reason: str = ""):
        self.code, self.name = CODES[name], name
        super().__init__(f"{name}: {reason}" if reason else name)


@dataclass
class FakeClock:
    """Deterministic device time: each launch takes `ms(launch_index)` milliseconds."""
    ms: Callable[[int], float] = lambda i: 0.25
    now_ms: float = 0.0


@dataclass(frozen=True)
class LaunchRecord:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    stream: int
    form: str              # "kernelParams" | "extra"
    kernarg: bytes         # the segment the emulator received
    explicit: tuple        # explicit argument values as little-endian ints, metadata order
    fake_ms: float
    host: tuple = ()       # (lo, hi) host mappings made visible to the kernel for this launch
    executed: bool = True  # False: recorded with runtime.execute = False, not run
    captured: bool = False  # recorded into a stream capture (runs at hipGraphLaunch)


def _read(addr: int, n: int) -> bytes:
    return ctypes.string_at(addr, n)


def _put(addr: int, ctype, value) -> None:
    if not addr:
        raise HipStubError("hipErrorInvalidValue", "NULL output pointer")
    ctype.from_address(addr).value = value


def image_size(addr: int) -> int:
    """Bytes of the ELF file at `addr`, from its header and section table (a code object
    passed to hipModuleLoadData carries no length)."""
    head = _read(addr, 64)
    if head[:4] != b"\x7fELF" or head[4] != 2:
        raise HipStubError("hipErrorInvalidImage", "not an ELF64 code object")
    phoff, shoff = struct.unpack_from("<QQ", head, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 54)
    end = max(64, phoff + phentsize * phnum, shoff + shentsize * shnum)
    if end > MAX_IMAGE_BYTES:
        raise HipStubError("hipErrorInvalidImage", f"ELF header claims {end} bytes")
    table = _read(addr + shoff, shentsize * shnum)
    for i in range(shnum):
        typ, = struct.unpack_from("<I", table, i * shentsize + 4)
        off, size = struct.unpack_from("<QQ", table, i * shentsize + 24)
        if typ != 8:   # SHT_NOBITS occupies no file bytes
            end = max(end, off + size)
    if end > MAX_IMAGE_BYTES:
        raise HipStubError("hipErrorInvalidImage", f"ELF sections claim {end} bytes")
    return end


# product facts hipDeviceProp_t carries (props.fill_properties); targets.py has None where no
# public figure exists (gfx1153, gfx117x: every one; gfx1103/gfx1152: the L2 size)
PROPERTY_FACTS = ("cus", "boost_ghz", "l2_bytes")


class EmuHipRuntime(CaptureCalls):
    def __init__(self, arch: str = "gfx1100", memory_bytes: int = 64 << 20, clock: FakeClock | None = None):
        self.arch, self.target = arch, get_target(arch)
        for fact in PROPERTY_FACTS:     # hipGetDeviceProperties reports them: never an invented value
            self.target.require(fact)
        self.memory_bytes, self.clock = memory_bytes, clock or FakeClock()
        self.mem = HostMemory()
        self.execute = True                 # False: record launches without running them
        self.load_seconds = 0.0             # host time in hipModuleLoadData (the emulator's decoder)
        self.host_maps = HostMappings()
        self.allocs: dict[int, int] = {}
        self.modules: dict[int, dict[str, tuple[Program, object]]] = {}
        self.functions: dict[int, tuple[Program, object]] = {}
        self.streams: set[int] = {0}
        self.events: dict[int, float | None] = {}
        self.calls: Counter = Counter()
        self.launches: list[LaunchRecord] = []
        self.faults: list[str] = []
        self.crashes: list[str] = []        # Python exceptions inside callbacks (stub bugs)
        self.injected: dict[str, list[str]] = {}
        self.pending: str | None = None
        self.captures: dict[int, Capture] = {}       # capturing stream -> its capture
        self.graphs: dict[int, tuple] = {}          # hipGraph_t -> nodes
        self.execs: dict[int, tuple] = {}           # hipGraphExec_t -> nodes
        self.capture_errors: list[str] = []         # calls refused while capturing
        self.last_reason = ""
        self._handles = itertools.count(0x5710_0000, 0x40)

    # ---- test controls ------------------------------------------------------------------
    def fail(self, call: str, error: str, times: int = 1) -> None:
        CODES[error]  # unknown name -> KeyError now, not at the call
        self.injected.setdefault(call, []).extend([error] * times)

    def take_injected(self, call: str) -> str | None:
        queue = self.injected.get(call)
        return queue.pop(0) if queue else None

    def _forbidden_in_capture(self, call: str) -> None:
        """A call HIP refuses while a global / thread-local capture is active: refuse it and
        invalidate every such capture."""
        strict = [c for c in self.captures.values() if c.mode != "relaxed"]
        if not strict:
            return
        why = f"{call} while a stream capture is active"
        for c in strict:
            c.invalid = c.invalid or why
        self.capture_errors.append(why)
        raise HipStubError("hipErrorStreamCaptureUnsupported", why)

    def _sync_point(self, call: str = "synchronize") -> None:
        self._forbidden_in_capture(call)
        if self.pending:
            err, self.pending = self.pending, None
            raise HipStubError(err, "reported by a synchronizing call after the launch")

    # ---- device ---------------------------------------------------------------------------
    def hipInit(self, flags):
        if flags:
            raise HipStubError("hipErrorInvalidValue", "flags must be 0")

    def hipGetDeviceCount(self, count_ptr):
        _put(count_ptr, ctypes.c_int, 1)

    def hipSetDevice(self, device):
        if device != 0:
            raise HipStubError("hipErrorInvalidDevice")

    def hipDeviceSynchronize(self):
        self._sync_point("hipDeviceSynchronize")

    def hipGetDeviceProperties(self, prop_ptr, device):
        from .props import fill_properties
        if device != 0:
            raise HipStubError("hipErrorInvalidDevice")
        fill_properties(prop_ptr, DEVICE_NAME, self.arch, self.target, self.memory_bytes)

    def hipGetErrorText(self, kind, code, buf, size):
        text = (NAMES if kind else TEXT).get(code, "hipErrorUnknown" if kind else "unknown error")
        ctypes.memmove(buf, text.encode()[: size - 1] + b"\0", min(len(text) + 1, size))

    # ---- memory ---------------------------------------------------------------------------
    def hipMalloc(self, out_ptr, size):
        self._forbidden_in_capture("hipMalloc")
        if sum(self.allocs.values()) + size > self.memory_bytes:
            raise HipStubError("hipErrorOutOfMemory", f"{size} bytes requested, {self.memory_bytes} total")
        addr = self.mem.alloc(size)
        self.mem.write(addr, b"\xa5" * size)      # hipMalloc memory is not zeroed: poison it
        self.allocs[addr] = size
        _put(out_ptr, ctypes.c_void_p, addr)

    def hipFree(self, ptr):
        self._forbidden_in_capture("hipFree")
        if ptr:
            if ptr not in self.allocs:
                raise HipStubError("hipErrorInvalidValue", f"{ptr:#x} is not a live allocation")
            self.mem.free(ptr)
            del self.allocs[ptr]

    def _on_device(self, addr: int, n: int) -> bool:
        return any(a <= addr and addr + n <= a + s for a, s in self.allocs.items())

    def hipMemcpy(self, dst, src, n, kind):
        self._sync_point("hipMemcpy")
        self._copy(dst, src, n, kind)

    def _copy(self, dst, src, n, kind):
        if n == 0:
            return
        kind = _KIND.get(kind)
        if kind == "default":
            kind = ("D" if self._on_device(src, n) else "H") + "2" + ("D" if self._on_device(dst, n) else "H")
        if kind is None or not dst or not src:
            raise HipStubError("hipErrorInvalidValue", "bad copy kind or NULL pointer")
        try:
            data = self.mem.read(src, n) if kind[0] == "D" else _read(src, n)
            if kind[-1] == "D":
                self.mem.write(dst, data)
            else:
                ctypes.memmove(dst, data, n)
        except ValueError as e:       # outside every device allocation
            raise HipStubError("hipErrorInvalidValue", str(e)) from None

    def hipMemcpyAsync(self, dst, src, n, kind, stream):
        self._stream(stream)
        cap = self.captures.get(stream or 0)
        if cap is not None:                      # a copy node: runs at hipGraphLaunch
            cap.nodes.append(("copy", (dst, src, n, kind)))
            return
        if self.pending:                         # an earlier fault surfaces here, as from hipMemcpy
            err, self.pending = self.pending, None
            raise HipStubError(err, "reported by a synchronizing call after the launch")
        self._copy(dst, src, n, kind)

    def hipMemset(self, dst, value, n):
        self._forbidden_in_capture("hipMemset")
        try:
            self.mem.write(dst, bytes([value & 0xFF]) * n)
        except ValueError as e:
            raise HipStubError("hipErrorInvalidValue", str(e)) from None

    # ---- code objects ---------------------------------------------------------------------
    def hipModuleLoadData(self, out_module, image):
        self._forbidden_in_capture("hipModuleLoadData")
        if not image:
            raise HipStubError("hipErrorInvalidValue", "image is NULL")
        t0 = time.perf_counter()
        data = _read(image, image_size(image))
        try:
            info = load_code_object(data)     # rejects a non-AMDGPU, truncated or kernel-less ELF
            meta = metadata_from_doc(info.metadata)
        except (CodeObjectError, CompileError) as e:
            raise HipStubError("hipErrorInvalidImage", f"unreadable code object: {e}") from None
        if info.mach != self.target.elf_mach:
            raise HipStubError("hipErrorNoBinaryForGpu", f"code object EF_AMDGPU_MACH={info.mach:#x}, "
                               f"device {self.arch} is {self.target.elf_mach:#x}")
        try:
            prog = Program.from_code_object(data, meta.name)
        except EmulatorFault as e:            # machine code the emulator cannot decode
            self.last_reason = str(e)
            raise HipStubError("hipErrorNotSupported", self.last_reason) from None
        finally:
            self.load_seconds += time.perf_counter() - t0
        handle = next(self._handles)
        self.modules[handle] = {meta.name: (prog, meta)}
        _put(out_module, ctypes.c_void_p, handle)

    def hipModuleGetFunction(self, out_function, module, name):
        kernels = self.modules.get(module)
        if kernels is None:
            raise HipStubError("hipErrorInvalidHandle", "unknown module")
        hit = kernels.get((name or b"").decode())
        if hit is None:
            raise HipStubError("hipErrorNotFound", f"{name!r} not in module ({', '.join(kernels)})")
        handle = next(self._handles)
        self.functions[handle] = hit
        _put(out_function, ctypes.c_void_p, handle)

    def hipModuleUnload(self, module):
        if self.modules.pop(module, None) is None:
            raise HipStubError("hipErrorInvalidHandle", "unknown module")

    def hipModuleLaunchKernel(self, function, grid_ptr, block_ptr, shared_bytes, stream, params, extra):
        if function not in self.functions:
            raise HipStubError("hipErrorInvalidHandle", "unknown function")
        self._stream(stream)
        prog, meta = self.functions[function]
        grid = tuple((ctypes.c_uint * 3).from_address(grid_ptr))
        block = tuple((ctypes.c_uint * 3).from_address(block_ptr))
        explicit = [a for a in meta.args if not a.kind.startswith("hidden_")]
        if bool(params) == bool(extra) and explicit:
            raise HipStubError("hipErrorInvalidValue", "pass exactly one of kernelParams and extra")
        form = "kernelParams" if params else "extra"
        values = [] if not explicit else self._from_params(params, explicit) if params else \
            self._from_extra(extra, explicit)
        seg = bytearray(meta.kernarg_size)
        hidden = hidden_values(grid, block)
        for a in meta.args:
            raw = values.pop(0) if not a.kind.startswith("hidden_") else \
                (hidden.get(a.kind, 0) & ((1 << 8 * a.size) - 1)).to_bytes(a.size, "little")
            seg[a.offset:a.offset + a.size] = raw
        cap = self.captures.get(stream or 0)
        if cap is not None:               # recorded, runs at hipGraphLaunch
            cap.nodes.append(("kernel", (function, grid, block, shared_bytes, bytes(seg), form)))
            self.launches.append(LaunchRecord(meta.name, grid, block, stream or 0, form, bytes(seg),
                                              self._explicit(meta, seg), 0.0, (), False, True))
            return
        self._execute(function, grid, block, shared_bytes, stream, bytes(seg), form)

    @staticmethod
    def _explicit(meta, seg) -> tuple:
        return tuple(int.from_bytes(seg[a.offset:a.offset + a.size], "little") for a in meta.args
                     if not a.kind.startswith("hidden_"))

    def _execute(self, function, grid, block, shared_bytes, stream, seg: bytes, form: str) -> None:
        """Run one launch now (or record it only, execute=False) on the fake clock."""
        prog, meta = self.functions[function]
        explicit = [a for a in meta.args if not a.kind.startswith("hidden_")]
        args = self._explicit(meta, seg)
        host = ()
        if self.execute:
            try:   # pointers outside this device's memory are host memory (NULL: an unused argument)
                host = self.host_maps.holding(meta.name, [(i, a.name or a.kind, p) for i, (a, p) in enumerate(
                    zip(explicit, args)) if a.kind == "global_buffer" and p and self.mem.owner(p) is None])
            except ValueError as e:
                raise HipStubError("hipErrorInvalidValue", str(e)) from None
            try:
                with self.mem.mapped(*((lo, hi - lo) for lo, hi in host)):
                    run_kernel(prog, self.mem, grid=grid, block=block, kernarg=seg, dynamic_lds=shared_bytes)
            except EmulatorFault as e:
                self.faults.append(str(e))
                self.pending = "hipErrorLaunchFailure"
        ms = float(self.clock.ms(len(self.launches)))
        self.clock.now_ms += ms
        self.launches.append(LaunchRecord(meta.name, grid, block, stream or 0, form, seg, args, ms,
                                          host, self.execute))

    @staticmethod
    def _from_params(params: int, explicit) -> list[bytes]:
        slots = (ctypes.c_void_p * len(explicit)).from_address(params)
        if not all(slots):
            raise HipStubError("hipErrorInvalidValue", "a kernelParams entry is NULL")
        return [_read(p, a.size) for p, a in zip(slots, explicit, strict=True)]

    @staticmethod
    def _from_extra(extra: int, explicit) -> list[bytes]:
        words, buf, size = (ctypes.c_void_p * 16).from_address(extra), None, None
        for i in range(0, 16, 2):
            key = words[i] or 0
            if key == _PARAM_END:
                break
            if key == _PARAM_BUFFER_POINTER:
                buf = words[i + 1]
            elif key == _PARAM_BUFFER_SIZE:
                size = ctypes.c_size_t.from_address(words[i + 1]).value
            else:
                raise HipStubError("hipErrorInvalidValue", f"unknown extra key {key}")
        need = max((a.offset + a.size for a in explicit), default=0)
        if buf is None or size is None or size < need:
            raise HipStubError("hipErrorInvalidValue", f"extra buffer of {size} bytes, the explicit "
                               f"arguments need {need}")
        raw = _read(buf, need) if need else b""
        return [raw[a.offset:a.offset + a.size] for a in explicit]

    # ---- streams and events -----------------------------------------------------------------
    def _stream(self, stream) -> None:
        if (stream or 0) not in self.streams:
            raise HipStubError("hipErrorInvalidHandle", "unknown stream")

    def hipStreamCreate(self, out_stream):
        handle = next(self._handles)
        self.streams.add(handle)
        _put(out_stream, ctypes.c_void_p, handle)

    def hipStreamSynchronize(self, stream):
        self._stream(stream)
        self._sync_point("hipStreamSynchronize")

    def hipStreamDestroy(self, stream):
        self._stream(stream)
        self.streams.discard(stream)

    def hipEventCreate(self, out_event):
        handle = next(self._handles)
        self.events[handle] = None
        _put(out_event, ctypes.c_void_p, handle)

    def _event(self, event) -> int:
        if event not in self.events:
            raise HipStubError("hipErrorInvalidHandle", "unknown event")
        return event

    def hipEventRecord(self, event, stream):
        self._stream(stream)
        self.events[self._event(event)] = self.clock.now_ms

    def hipEventSynchronize(self, event):
        self._event(event)
        self._sync_point("hipEventSynchronize")

    def hipEventElapsedTime(self, out_ms, start, stop):
        t0, t1 = self.events[self._event(start)], self.events[self._event(stop)]
        if t0 is None or t1 is None:
            raise HipStubError("hipErrorInvalidHandle", "event not recorded")
        _put(out_ms, ctypes.c_float, t1 - t0)

    def hipEventDestroy(self, event):
        del self.events[self._event(event)]
