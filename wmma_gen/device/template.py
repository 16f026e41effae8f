"""Prepacked launches: a kernarg segment packed once per operand layout, pointers patched per call.

A training step calls the same kernel with the same shapes and strides every time; only the
addresses change (fresh activations). `Template` holds what `launcher.bind` checked and
`kernargs.pack_kernargs` packed for one layout: the segment, the byte offsets of its pointer
arguments (from the code object's `.args`), the argument values and, for CPU operands, each
operand's byte span relative to its address (the emulator maps host memory per launch). A
device turns a Template into a launch closure once (`Device.prepack`, part of the Device
contract: device/base.py), so a repeat call is one struct.pack_into of the new addresses and
one enqueue -- the host cost that bench/launch_overhead.py measures.
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field

import numpy as np

from .kernargs import check_launch, explicit_args, pack_kernargs


def layout_key(feed: dict) -> tuple:
    """What a Template depends on besides addresses: every operand's shape, strides, dtype,
    device (and, for numpy arrays, whether they are writeable: bind refuses read-only outputs)."""
    return tuple((n, op.shape, op.strides, op.dtype, op.device, op.device_id,
                  isinstance(op.owner, np.ndarray) and op.owner.flags.writeable) for n, op in feed.items())


@dataclass(frozen=True)
class Template:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    segment: bytes
    pointers: tuple[str, ...]          # buffer names, in pointer-slot order
    fmt: str                            # struct format packing the pointers at their offsets
    values: tuple = ()                  # the explicit argument values bind produced (pointers included)
    slots: tuple[int, ...] = ()         # index in `values` of each name in `pointers`
    spans: tuple = ()                   # (name, lo - ptr, hi - ptr) of CPU operands (launcher.Bound)
    offsets: tuple[int, ...] = ()       # byte offset of each pointer slot in `segment` (`pointers` order)
    native: dict = field(default_factory=dict, compare=False, repr=False)   # ctypes copy, see patched()

    @classmethod
    def build(cls, compiled, sig, bound) -> "Template":
        grid, block = check_launch(compiled.metadata, bound.grid, bound.block)
        segment = pack_kernargs(compiled.metadata, list(bound.values), grid, block)
        index = {a.name: i for i, a in enumerate(sig.args)}
        slots = [(m.offset, a.name) for a, m in zip(sig.args, explicit_args(compiled.metadata)) if a.is_buffer]
        fmt, pos, names = "<", 0, []
        for off, name in sorted(slots):
            fmt += f"{off - pos}xQ"
            pos = off + 8
            names.append(name)
        return cls(grid, block, segment, tuple(names), fmt, tuple(bound.values),
                   tuple(index[n] for n in names), tuple(bound.span_offsets), tuple(sorted(off for off, _ in slots)))

    def values_at(self, pointers: tuple) -> list:
        """The explicit argument values with `pointers` (in `self.pointers` order) put in."""
        values = list(self.values)
        for i, p in zip(self.slots, pointers):
            values[i] = p
        return values

    def spans_at(self, pointers: tuple) -> tuple:
        """Byte ranges of the CPU operands at these addresses."""
        at = dict(zip(self.pointers, pointers))
        return tuple((at[n] + lo, at[n] + hi) for n, lo, hi in self.spans)

    def patched(self, ptrs: dict):
        """A ctypes buffer holding the segment with `ptrs` patched in, reused call after call:
        a launch captures its kernel arguments when it is enqueued (HIP copies the `extra`
        kernarg buffer at hipModuleLaunchKernel), so the next call may overwrite it."""
        buf = self.native.get("buf")
        if buf is None:
            buf = self.native["buf"] = ctypes.create_string_buffer(bytes(self.segment), len(self.segment))
        struct.pack_into(self.fmt, buf, 0, *(ptrs[n] for n in self.pointers))
        return buf
