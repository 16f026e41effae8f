"""One error family for wmma_gen (STYLE rule 13).

Messages name the field, the value and what is allowed.
"""
from __future__ import annotations


class WmmaGenError(Exception):
    """Base of every error wmma_gen raises on purpose."""


class ScheduleError(WmmaGenError, ValueError):
    """A user-supplied value (directive, schedule, target, shape) is not allowed."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field, self.value, self.allowed = field, value, allowed
        super().__init__(f"{field}={value!r} is not allowed: {allowed}")

    @classmethod
    def rejected(cls, check: str, reason: str, value: object = None) -> "ScheduleError":
        """A named legality check failed; `reason` already names the field, value and limit."""
        err = cls.__new__(cls)
        err.field, err.value, err.allowed = check, value, reason
        Exception.__init__(err, f"schedule rejected by check '{check}': {reason}")
        return err


class CompileError(WmmaGenError):
    """An MLIR pass or the linker failed; carries diagnostics and a repro."""

    def __init__(self, message: str, diagnostics: str = "", pipeline: str = "", mlir_path: str = ""):
        self.diagnostics, self.pipeline, self.mlir_path = diagnostics, pipeline, mlir_path
        parts = [message]
        if diagnostics:
            lines = diagnostics.splitlines()
            shown = "\n".join(lines[:30]) + (f"\n... ({len(lines) - 30} more lines)" if len(lines) > 30 else "")
            parts.append(f"diagnostics:\n{shown}")
        if mlir_path:
            parts.append(f"module dumped to {mlir_path}")
        if pipeline:
            parts.append(f"repro: mlir-opt {mlir_path or 'kernel.mlir'} --pass-pipeline='{pipeline}'")
        super().__init__("\n".join(parts))


class EmulatorFault(WmmaGenError):
    """The emulated kernel did something the hardware would fault on (or we cannot emulate)."""

    def __init__(self, message: str, *, kernel: str = "?", pc: int | None = None,
                 instruction: str = "", lane: int | None = None, address: int | None = None,
                 wave: int | None = None):
        self.kernel, self.pc, self.instruction = kernel, pc, instruction
        self.lane, self.address, self.wave = lane, address, wave
        where = [f"kernel={kernel}"]
        if pc is not None:
            where.append(f"pc={pc:#x}")
        if instruction:
            where.append(f"instruction='{instruction}'")
        if wave is not None:
            where.append(f"wave={wave}")
        if lane is not None:
            where.append(f"lane={lane}")
        if address is not None:
            where.append(f"address={address:#x}")
        super().__init__(f"{message} ({', '.join(where)})")


class DeviceError(WmmaGenError):
    """A device (HIP or emulator) call failed or is unavailable."""
