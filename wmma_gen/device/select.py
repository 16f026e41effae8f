"""Choosing a device: get_device("auto" | "emu" | "hip" | "cuda"), and the device and arch for
operands that already live somewhere (device_for).

auto -> HipDevice when hip-python imports AND a real GPU is visible, else EmuDevice (an
        emulator-backed HIP runtime, as in tests/hipstub, is never chosen automatically).
hip  -> HipDevice, or DeviceError with the reason (or the install hint) when there is none.
cuda -> the same as hip (ROCm builds of PyTorch call AMD GPUs "cuda").
Devices are shared per kind and GPU index (their kernel caches persist across calls).

Arch: a GPU's own (hipGetDeviceProperties gcnArchName); for the emulator `WMMA_GEN_ARCH`,
else DEFAULT_EMU_ARCH. `routed(device, arch)` sends CPU operands to another device for a
block of code -- how tests drive the real HipDevice over the emulator-backed HIP stand-in
with torch CPU tensors' pointers as "device" pointers.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Mapping

from ..errors import DeviceError, ScheduleError
from .base import Device

KINDS = ("auto", "emu", "hip", "cuda")
DEFAULT_EMU_ARCH = "gfx1100"
_shared: dict[str, Device] = {}
_shared_lock = threading.RLock()  # two threads asking at once must not build two devices for one GPU
                                  # (re-entrant: "auto" asks for "hip" or "emu" while holding it)
class _Route(threading.local):
    value = None        # a class default: reading it unset raises nothing (every call key reads it)


_route = _Route()


def hip_status() -> tuple[bool, str]:
    """(a GPU is usable through hip-python, reason when not)."""
    from .hip import visible_gpus
    archs, reason = visible_gpus()
    return bool(archs), reason


def get_device(kind: "str | Device | None" = "auto", device_id: int = 0) -> Device:
    if isinstance(kind, Device):
        return kind
    kind = "auto" if kind is None else kind
    if kind not in KINDS:
        raise ScheduleError("device", kind, f"one of {', '.join(KINDS)} (or a Device instance)")
    kind = "hip" if kind == "cuda" else kind
    slot = "auto" if kind == "auto" else f"hip:{device_id}" if kind == "hip" else kind
    dev = _shared.get(slot)
    if dev is not None:
        return dev
    with _shared_lock:
        return _shared.get(slot) or _create(kind, slot, device_id)


def _create(kind: str, slot: str, device_id: int) -> Device:
    """Build and keep the shared device of `slot` (the caller holds _shared_lock)."""
    if kind == "auto":
        from .hip import real_gpu_visible
        dev = get_device("hip" if real_gpu_visible() else "emu")
    elif kind == "hip":
        ok, reason = hip_status()
        if not ok:
            raise DeviceError(f"device=hip is not available: {reason}")
        from .hip import HipDevice
        dev = HipDevice(device_id)
    else:
        from .emu import EmuDevice
        dev = EmuDevice()
    _shared[slot] = dev
    return dev


def emu_arch() -> str:
    """The arch the emulator runs when the caller names none: WMMA_GEN_ARCH or gfx1100."""
    arch = os.environ.get("WMMA_GEN_ARCH") or DEFAULT_EMU_ARCH
    from ..targets import get_target
    return get_target(arch).arch


def arch_of(device: Device, arch: str | None = None) -> str:
    """The arch to compile for on `device`: a GPU's own (a different explicit arch is refused),
    else `arch`, else WMMA_GEN_ARCH / gfx1100."""
    own = getattr(device, "arch", None)
    if own is not None and getattr(device, "source", "hip") == "hip":
        if arch is not None and arch != own:
            raise ScheduleError("arch", arch, f"{own}, the arch of GPU {getattr(device, 'device_id', 0)} "
                                "the operands live on (or None)")
        return own
    if arch is not None:
        from ..targets import get_target
        return get_target(arch).arch
    return own if own is not None else emu_arch()


@contextmanager
def routed(device: Device, arch: str | None = None):
    """Within the block, CPU operands run on `device` (compiled for `arch`, default the
    device's own or WMMA_GEN_ARCH) instead of the emulator."""
    prev = _route.value
    _route.value = (device, arch)
    try:
        yield device
    finally:
        _route.value = prev


def current_route() -> tuple[Device, str | None] | None:
    """(device, arch) of the innermost `routed` block on this thread, or None outside one."""
    return _route.value


def device_for(operands: Mapping[str, object], arch: str | None = None) -> tuple[Device, str]:
    """(device, arch) for operands that already live somewhere (Operands, tensors, arrays):
    ROCm memory -> the HipDevice of that GPU, CPU memory -> the emulator (or the routed
    device). Operands on different devices are refused, naming each."""
    from .operand import as_operand
    where = {}
    for name, x in operands.items():
        if x is not None:
            where[name] = as_operand(x, name).where()
    kinds = set(where.values())
    if len(kinds) > 1:
        raise DeviceError("tensors on different devices are not allowed: "
                          + ", ".join(f"{n} on {w}" for n, w in where.items()))
    place = kinds.pop() if kinds else "cpu"
    if place == "cpu":
        route = _route.value
        if route is not None:
            dev, routed_arch = route
            return dev, arch_of(dev, arch or routed_arch)
        return get_device("emu"), arch_of(get_device("emu"), arch)
    dev = get_device("hip", int(place.split(":")[1]))
    return dev, arch_of(dev, arch)
