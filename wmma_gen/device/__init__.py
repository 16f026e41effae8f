"""Devices: one contract (base.Device) with the emulator and HIP behind it."""
from .base import Buffer, Device, Timing
from .emu import EmuDevice
from .kernargs import pack_kernargs
from .select import get_device, hip_status

__all__ = ["Buffer", "Device", "Timing", "EmuDevice", "get_device", "hip_status", "pack_kernargs"]
