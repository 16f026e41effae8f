"""EmuDevice: the Device contract over the wave emulator (wmma_gen.emu).

Runs the code object's machine code (CompiledKernel.hsaco: the bytes a GPU would run,
decoded by wmma_gen.emu.decode) wave by wave on emulated global memory. Its Timing is host wall time of the emulation
(source="emulator"), never a GPU time.
"""
from __future__ import annotations

from typing import Sequence

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
    emu = _emu()
    cls = getattr(emu, "GlobalMemory", None)
    if cls is None:
        from ..emu.run.device_memory import GlobalMemory as cls
    return cls


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
