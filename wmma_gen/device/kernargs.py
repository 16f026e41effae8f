"""Kernarg segment bytes from a kernel's metadata `.args` (offsets, sizes, value kinds).

Nothing here assumes a layout: every byte position comes from the code object metadata
(llvm/docs/AMDGPUUsage.rst, "Code Object V3+ Metadata", `.args` with `.offset`, `.size`,
`.value_kind`), and the segment is exactly `.kernarg_segment_size` bytes.

  global_buffer        explicit: a device address (Buffer.addr or an int), little endian
  by_value             explicit: an int (two's complement) or a float (size 2/4/8: f16/f32/f64)
  hidden_block_count_* grid size in workgroups along x/y/z          (AMDGPUUsage, "Code Object
  hidden_group_size_*  workgroup size in work-items along x/y/z      V5 Metadata", hidden
  hidden_remainder_*   0: the grid is whole workgroups (no partial)  argument table)
  hidden_grid_dims     number of dimensions the dispatch uses (1..3)
  hidden_global_offset_* 0: no global offset
  any other hidden_*   0: runtime services (printf/hostcall buffers, heap, queue pointers,
                       apertures, dynamic LDS size) are not provided; a kernel that
                       dereferences one faults loudly on the emulator (address 0 is outside
                       every allocation). On HIP the runtime fills hidden args itself.
"""
from __future__ import annotations

import struct
from typing import Sequence

import numpy as np

from ..errors import DeviceError

_FLOAT_FMT = {2: "<e", 4: "<f", 8: "<d"}


def explicit_args(metadata) -> list:
    return [a for a in metadata.args if not a.kind.startswith("hidden_")]


def hidden_values(grid: tuple[int, int, int], block: tuple[int, int, int]) -> dict[str, int]:
    vals: dict[str, int] = {}
    for i, ax in enumerate("xyz"):
        vals[f"hidden_block_count_{ax}"] = grid[i]
        vals[f"hidden_group_size_{ax}"] = block[i]
        vals[f"hidden_remainder_{ax}"] = 0
        vals[f"hidden_global_offset_{ax}"] = 0
    used = [i for i in range(3) if grid[i] * block[i] > 1]
    vals["hidden_grid_dims"] = (max(used) + 1) if used else 1
    return vals


def check_launch(metadata, grid, block) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Validate grid (workgroups) and block (work-items) against the kernel's limits."""
    out = []
    for field, dims in (("grid", grid), ("block", block)):
        dims = tuple(dims)
        if len(dims) != 3 or any(not isinstance(v, (int, np.integer)) or v < 1 for v in dims):
            raise DeviceError(f"{field}={dims!r} is not allowed: three positive integers (x, y, z)")
        out.append(tuple(int(v) for v in dims))
    g, b = out
    threads = b[0] * b[1] * b[2]
    if threads > metadata.max_flat_workgroup_size:
        raise DeviceError(f"block={b} is not allowed: {threads} work-items exceed kernel "
                          f"{metadata.name}'s .max_flat_workgroup_size={metadata.max_flat_workgroup_size}")
    reqd = tuple(metadata.reqd_workgroup_size)
    if reqd and tuple(reqd) != b:
        raise DeviceError(f"block={b} is not allowed: kernel {metadata.name} requires "
                          f".reqd_workgroup_size={reqd}")
    return g, b


def _encode(arg, value, index: int) -> bytes:
    where = f"kernel arg {index} ({arg.kind}{' ' + arg.name if arg.name else ''}, {arg.size} bytes)"
    if arg.kind == "global_buffer":
        if isinstance(value, (bool, float, np.floating)) or not isinstance(value, (int, np.integer)):
            raise DeviceError(f"{where}={value!r} is not allowed: a Buffer or a device address")
        if not 0 <= int(value) < 1 << (8 * arg.size):
            raise DeviceError(f"{where}={value!r} is not allowed: an address in 0..2**{8 * arg.size}-1")
        return int(value).to_bytes(arg.size, "little")
    if arg.kind != "by_value":
        raise DeviceError(f"{where} is not allowed: value kind {arg.kind!r} is not supported "
                          "(global_buffer, by_value and hidden_* are)")
    if isinstance(value, (float, np.floating)):
        if arg.size not in _FLOAT_FMT:
            raise DeviceError(f"{where}={value!r} is not allowed: floats need size 2, 4 or 8")
        return struct.pack(_FLOAT_FMT[arg.size], float(value))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        v, bits = int(value), 8 * arg.size
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            raise DeviceError(f"{where}={v} is not allowed: does not fit {bits} bits")
        return (v & ((1 << bits) - 1)).to_bytes(arg.size, "little")
    raise DeviceError(f"{where}={value!r} is not allowed: an int or a float")


def pack_kernargs(metadata, values: Sequence, grid: tuple[int, int, int],
                  block: tuple[int, int, int]) -> bytes:
    """The kernarg segment for one launch: `values` are the explicit args in metadata order
    (device addresses for global_buffer, numbers for by_value)."""
    explicit = explicit_args(metadata)
    if len(values) != len(explicit):
        kinds = ", ".join(a.kind for a in explicit)
        raise DeviceError(f"kernel args count={len(values)} is not allowed: kernel {metadata.name} "
                          f"takes {len(explicit)} explicit args ({kinds})")
    size = metadata.kernarg_size
    buf = bytearray(size)
    hidden = hidden_values(grid, block)
    it = iter(values)
    for i, a in enumerate(metadata.args):
        if a.offset < 0 or a.size < 1 or a.offset + a.size > size:
            raise DeviceError(f"kernel {metadata.name} metadata arg {i} offset={a.offset} size={a.size} "
                              f"is not allowed: must lie inside .kernarg_segment_size={size}")
        if a.kind.startswith("hidden_"):
            raw = (hidden.get(a.kind, 0) & ((1 << (8 * a.size)) - 1)).to_bytes(a.size, "little")
        else:
            raw = _encode(a, next(it), i)
        buf[a.offset:a.offset + a.size] = raw
    return bytes(buf)
