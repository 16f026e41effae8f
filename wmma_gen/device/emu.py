"""EmuDevice: the Device contract over the wave emulator (wmma_gen.emu).

Runs the code object's machine code (CompiledKernel.hsaco: the bytes a GPU would run,
decoded by wmma_gen.codeobj) wave by wave on host-visible emulated global memory (an APU's
view: Buffers are host allocations with guard pages, and CPU operands are mapped in place). Its Timing is host wall time of the emulation
(source="emulator"), never a GPU time.
"""
from __future__ import annotations

import ctypes
from contextlib import contextmanager
from typing import Sequence

import numpy as np

from ..errors import DeviceError
from ..targets import get_target
from .base import Arg, Buffer, Device, Timing
from .kernargs import check_launch, pack_kernargs

EMU_FAMILIES = ("gfx11", "gfx12")   # RDNA3/RDNA3.5 and RDNA4 wave32 ISA (wmma_gen.emu)
EMU_NOTE = "emulator wall time on the host (not GPU time)"


def _emu():
    try:
        from .. import emu
    except ImportError as e:  # pragma: no cover - the package ships with wmma_gen
        raise DeviceError(f"the emulator package wmma_gen.emu failed to import: {e}") from None
    return emu


def _global_memory_cls():
    """Host-visible memory (device address == host address): CPU operands (numpy arrays, torch
    CPU tensors) are mapped, not copied (emu/run/host_memory.py)."""
    _emu()
    from ..emu.run.host_memory import HostMemory
    return HostMemory


def _merge(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of byte ranges (views of one tensor, e.g. packed q/k/v, overlap or interleave)."""
    out: list[list[int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


@contextmanager
def host_mapping(mem, spans: Sequence[tuple[int, int]]):
    """Yields translate(arg) -> the address the emulator must use for a host pointer."""
    regions = _merge(spans)
    if hasattr(mem, "map"):               # host-visible memory: device address == host address
        for lo, hi in regions:
            mem.map(lo, hi - lo)
        try:
            yield lambda a: a
        finally:
            for lo, _ in regions:
                mem.unmap(lo)
        return
    shadows = []
    try:
        for lo, hi in regions:
            addr = mem.alloc(hi - lo)
            shadows.append((lo, hi, addr))
            mem.write(addr, ctypes.string_at(lo, hi - lo))

        def translate(a):
            if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
                for lo, hi, addr in shadows:
                    if lo <= a < hi:
                        return addr + (int(a) - lo)
            return a
        yield translate
        for lo, hi, addr in shadows:     # after a fault nothing is written back
            ctypes.memmove(lo, mem.read(addr, hi - lo), hi - lo)
    finally:
        for _, _, addr in shadows:
            mem.free(addr)


class EmuDevice(Device):
    name = "emu"

    def __init__(self):
        super().__init__()
        self.mem = _global_memory_cls()()
        self._programs: dict[str, object] = {}   # compiled.key -> emu Program

    # ---- memory -----------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> int:
        return self.mem.alloc(nbytes)

    def _free(self, buf: Buffer) -> None:
        self.mem.free(buf.addr)

    def _copy_in(self, buf: Buffer, raw: memoryview) -> None:
        self.mem.write(buf.addr, bytes(raw))

    def _copy_out(self, buf: Buffer, nbytes: int) -> bytes:
        return bytes(self.mem.read(buf.addr, nbytes))

    def sync(self) -> None:
        """Launches run to completion synchronously; nothing is ever pending."""

    # ---- launch -----------------------------------------------------------------------------
    def program(self, kernel):
        """The emulator Program decoded from `kernel`'s code object, cached per content key."""
        prog = self._programs.get(kernel.key)
        if prog is None:
            prog = _emu().Program.from_code_object(kernel.hsaco, kernel.name)
            self._programs[kernel.key] = prog
        return prog

    def enqueue(self, kernel, grid, block, args: Sequence[Arg], stream=None,
                host_spans: Sequence[tuple[int, int]] = ()) -> None:
        """Run now (the emulator has no queue). Pointers into `host_spans` (numpy arrays, torch
        CPU tensors) are host memory the kernel reads and writes in place: mapped into the
        emulator's memory when it can map host memory, else staged through emulator buffers
        for the launch (copied in before, back after; bytes the kernel does not write are
        written back unchanged). `stream` is accepted and ignored: work is ordered anyway."""
        if not host_spans:
            self.launch(kernel, grid, block, args)
            return
        with host_mapping(self.mem, host_spans) as translate:
            self.launch(kernel, grid, block, [translate(a) for a in args])

    def launch(self, kernel, grid, block, args: Sequence[Arg]) -> Timing:
        family = get_target(kernel.arch).family
        if family not in EMU_FAMILIES:
            raise DeviceError(f"kernel arch={kernel.arch} ({family}) is not allowed on the emulator: "
                              f"it executes {', '.join(EMU_FAMILIES)} code only")
        run_kernel = getattr(_emu(), "run_kernel", None)
        if run_kernel is None:
            raise DeviceError("the emulator's run_kernel is not available in this build of wmma_gen.emu")
        grid, block = check_launch(kernel.metadata, grid, block)
        kernarg = pack_kernargs(kernel.metadata, self._pointer_values(args), grid, block)
        stats = run_kernel(self.program(kernel), self.mem, grid=grid, block=block, kernarg=kernarg)
        return Timing(float(stats.seconds), "emulator", EMU_NOTE,
                      wave_instructions=int(getattr(stats, "wave_instructions", 0)),
                      waves=int(getattr(stats, "waves", 0)), workgroups=int(getattr(stats, "workgroups", 0)))
