"""The Device contract (STYLE rule 12): alloc, copy_in, copy_out, launch -> Timing, sync;
enqueue (no timing, no wait, the caller's stream) and prepack (a Template -> a launch closure:
the repeat-call path, device/template.py).

A device moves bytes and runs a compiled kernel; it never knows which op it runs. Kernel
arguments are packed from the kernel's own metadata (kernargs.py), never from assumptions.
Implementations: EmuDevice (emu.py, the wave emulator, anywhere) and HipDevice (hip.py,
hip-python on a real GPU). One test suite (tests/emu/test_device_contract.py) runs on both.
"""
from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np

from ..errors import DeviceError

SOURCES = ("emulator", "hip")
_owner_ids = itertools.count(1)


@dataclass(frozen=True)
class Timing:
    """How long one launch took, and what that number is.

    `source` is "hip" (GPU time between two hipEvents around the launch) or "emulator"
    (host wall time of the emulator running the machine code: says nothing about GPU speed).
    """
    seconds: float
    source: str
    note: str = ""
    wave_instructions: int = 0   # emulator only: wave-level instructions executed
    waves: int = 0
    workgroups: int = 0

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"Timing.source={self.source!r} is not allowed: one of {', '.join(SOURCES)}")
        if not self.seconds >= 0:
            raise ValueError(f"Timing.seconds={self.seconds!r} is not allowed: a number >= 0")

    @property
    def is_gpu_time(self) -> bool:
        return self.source == "hip"


@dataclass(frozen=True)
class Buffer:
    """A device allocation: its device address (what a kernel pointer holds) and size."""
    addr: int
    nbytes: int
    device: str    # device name, for messages
    owner: int     # identity of the allocating Device instance

    def __repr__(self) -> str:
        return f"Buffer({self.device}, addr={self.addr:#x}, nbytes={self.nbytes})"


Arg = Union[Buffer, int, float, np.generic]
HostData = Union[bytes, bytearray, memoryview, np.ndarray]


def host_bytes(data: HostData) -> memoryview:
    """A flat byte view of host data (numpy arrays are made C-contiguous first)."""
    if isinstance(data, np.ndarray):
        return memoryview(np.ascontiguousarray(data).reshape(-1).view(np.uint8))
    if isinstance(data, (bytes, bytearray, memoryview)):
        return memoryview(data).cast("B")
    raise DeviceError(f"host data of type {type(data).__name__} is not allowed: bytes, bytearray, "
                      "memoryview or numpy.ndarray")


class Device(ABC):
    """Base class: bookkeeping and argument checks shared by every device."""
    name: str = "device"

    def __init__(self):
        self._owner = next(_owner_ids)
        self._live: dict[int, Buffer] = {}

    # ---- the contract ------------------------------------------------------------------
    def alloc(self, nbytes: int) -> Buffer:
        if not isinstance(nbytes, (int, np.integer)) or isinstance(nbytes, bool) or nbytes < 0:
            raise DeviceError(f"alloc nbytes={nbytes!r} is not allowed: an integer >= 0")
        buf = Buffer(self._alloc(int(nbytes)), int(nbytes), self.name, self._owner)
        self._live[buf.addr] = buf
        return buf

    def free(self, buf: Buffer) -> None:
        self._check_buffer(buf, "free")
        del self._live[buf.addr]
        self._free(buf)

    def copy_in(self, buf: Buffer, data: HostData) -> None:
        """Copy host bytes to the start of `buf` (at most buf.nbytes)."""
        self._check_buffer(buf, "copy_in")
        raw = host_bytes(data)
        if raw.nbytes > buf.nbytes:
            raise DeviceError(f"copy_in of {raw.nbytes} bytes is not allowed: {buf!r} holds {buf.nbytes}")
        if raw.nbytes:
            self._copy_in(buf, raw)

    def copy_out(self, buf: Buffer, nbytes: int | None = None) -> bytes:
        """The first `nbytes` (default: all) bytes of `buf`, after the work queued so far."""
        self._check_buffer(buf, "copy_out")
        n = buf.nbytes if nbytes is None else nbytes
        if not 0 <= n <= buf.nbytes:
            raise DeviceError(f"copy_out nbytes={n} is not allowed: 0..{buf.nbytes} for {buf!r}")
        return self._copy_out(buf, n) if n else b""

    @abstractmethod
    def launch(self, kernel, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: Sequence[Arg]) -> Timing:
        """Run `kernel` (a compiler.CompiledKernel) on `grid` workgroups of `block` threads.
        `args` are the explicit kernel arguments in order: Buffers (or raw addresses) for
        global_buffer args, numbers for by_value args."""

    def enqueue(self, kernel, grid: tuple[int, int, int], block: tuple[int, int, int], args: Sequence[Arg],
                stream=None, host_spans: Sequence[tuple[int, int]] = ()) -> None:
        """Launch without timing it and without waiting (the device-resident path,
        launcher.launch_into). `stream`: the caller's stream handle (None: the device's own).
        `host_spans`: byte ranges of host memory the arguments point into, for devices that
        can map host memory (the emulator); others refuse them."""
        if host_spans:
            raise DeviceError(f"host memory operands are not allowed on device {self.name}: its kernels "
                              "cannot address host pointers")
        self.launch(kernel, grid, block, args)

    def prepack(self, kernel, template, host: bool = False):
        """A launch of `kernel` with `template`'s packing: `launch(pointers, stream)` where
        pointers are addresses in `template.pointers` order. The default re-enters `enqueue` with
        the template's values (the emulator: speed is not its point); HipDevice patches a kernarg
        buffer in place and calls hipModuleLaunchKernel. host: some pointers are host memory."""
        def launch(pointers, stream=None):
            self.enqueue(kernel, template.grid, template.block, template.values_at(pointers), stream=stream,
                         host_spans=template.spans_at(pointers) if host else ())
        return launch

    def enqueue_template(self, kernel, template, ptrs: dict, stream=None, host: bool = False) -> None:
        """One prepacked launch with addresses by argument name (prepack, used once)."""
        self.prepack(kernel, template, host)(tuple(ptrs[n] for n in template.pointers), stream)

    @abstractmethod
    def sync(self) -> None:
        """Wait until every launch and copy issued so far has finished."""

    def close(self) -> None:
        for buf in list(self._live.values()):
            self.free(buf)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- implementation hooks -----------------------------------------------------------
    @abstractmethod
    def _alloc(self, nbytes: int) -> int: ...

    @abstractmethod
    def _free(self, buf: Buffer) -> None: ...

    @abstractmethod
    def _copy_in(self, buf: Buffer, raw: memoryview) -> None: ...

    @abstractmethod
    def _copy_out(self, buf: Buffer, nbytes: int) -> bytes: ...

    # ---- shared checks ------------------------------------------------------------------
    def _check_buffer(self, buf, what: str) -> None:
        if not isinstance(buf, Buffer):
            raise DeviceError(f"{what} buffer={buf!r} is not allowed: a Buffer from {self.name}.alloc()")
        if buf.owner != self._owner or self._live.get(buf.addr) != buf:
            raise DeviceError(f"{what} buffer={buf!r} is not allowed: not a live allocation of this "
                              f"{self.name} device (freed, or allocated by another device)")

    def _pointer_values(self, args: Sequence[Arg]) -> list:
        """Buffers -> their device addresses (checked to be live here); numbers unchanged."""
        out = []
        for i, a in enumerate(args):
            if isinstance(a, Buffer):
                self._check_buffer(a, f"launch arg {i}")
                out.append(a.addr)
            else:
                out.append(a)
        return out
