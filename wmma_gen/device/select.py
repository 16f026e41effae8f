"""Choosing a device: get_device("auto" | "emu" | "hip").

auto -> HipDevice when hip-python imports AND a real GPU is visible, else EmuDevice (an
        emulator-backed HIP runtime, as in tests/hipstub, is never chosen automatically).
hip  -> HipDevice, or DeviceError with the reason (or the install hint) when there is none.
Devices are shared per kind (their kernel caches persist across calls).
"""
from __future__ import annotations

from ..errors import DeviceError, ScheduleError
from .base import Device

KINDS = ("auto", "emu", "hip")
_shared: dict[str, Device] = {}


def hip_status() -> tuple[bool, str]:
    """(a GPU is usable through hip-python, reason when not)."""
    from .hip import visible_gpus
    archs, reason = visible_gpus()
    return bool(archs), reason


def get_device(kind: "str | Device | None" = "auto") -> Device:
    if isinstance(kind, Device):
        return kind
    kind = "auto" if kind is None else kind
    if kind not in KINDS:
        raise ScheduleError("device", kind, f"one of {', '.join(KINDS)} (or a Device instance)")
    if kind == "auto":
        if "auto" in _shared:
            return _shared["auto"]
        from .hip import real_gpu_visible
        _shared["auto"] = dev = get_device("hip" if real_gpu_visible() else "emu")
        return dev
    dev = _shared.get(kind)
    if dev is None:
        if kind == "hip":
            ok, reason = hip_status()
            if not ok:
                raise DeviceError(f"device=hip is not available: {reason}")
            from .hip import HipDevice
            dev = HipDevice()
        else:
            from .emu import EmuDevice
            dev = EmuDevice()
        _shared[kind] = dev
    return dev
