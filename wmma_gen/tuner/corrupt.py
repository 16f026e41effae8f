"""Test-only: the sweep's corrupt-output hook (autotune's Hooks.corrupt -> SpecObjective(corrupt=...)).

`corrupting(device)` is a Device whose read-backs after a launch have one 4-byte word in the
middle overwritten with 0x7f7f7f7f (a huge f32/i32, a NaN pair in f16/bf16): the kernel looks
wrong to whoever checks it, so the gate must prune it. Nothing but that hook reaches this module."""
from __future__ import annotations

from wmma_gen.device.base import Device


def corrupting(device) -> Device:
    """`device` with every read-back after the first launch corrupted in one word."""

    class CorruptOutput(Device):
        name = f"corrupt-{device.name}"

        def __init__(self):
            super().__init__()
            self.launched = False

        def alloc(self, nbytes):
            return device.alloc(nbytes)

        def free(self, buf):
            device.free(buf)

        def copy_in(self, buf, data):
            device.copy_in(buf, data)

        def copy_out(self, buf, nbytes=None):
            raw = bytearray(device.copy_out(buf, nbytes))
            if self.launched and len(raw) >= 4:
                mid = len(raw) // 2 // 4 * 4
                raw[mid:mid + 4] = b"\x7f\x7f\x7f\x7f"
            return bytes(raw)

        def launch(self, kernel, grid, block, args):
            self.launched = True
            return device.launch(kernel, grid, block, args)

        def sync(self):
            device.sync()

        _alloc = _free = _copy_in = _copy_out = None   # everything is delegated above

    CorruptOutput.__abstractmethods__ = frozenset()
    return CorruptOutput()
