"""Binders for the LDS rows of isa/ds.py (semantics and citations there): loads, stores, two-address
forms, atomics, and the cross-lane forms that move no LDS memory (swizzle, permute). Every
LDS access is bounds-checked per active lane against the kernel's group_segment_fixed_size
plus the launch's dynamic LDS."""
from __future__ import annotations

import re

import numpy as np

from ..decode.instr import Instr
from ..isa.table import Fault, Op
from .bind_mem import _active, _apply_atomic, _offset, store_bytes, write_loaded
from .device_memory import gather_bytes, scatter_bytes

u8, u32 = np.uint8, np.uint32


# ---- LDS ----------------------------------------------------------------------------------------------
def _lds_index(g, ctx, addr: np.ndarray, size: int, act: np.ndarray) -> np.ndarray:
    """Flat LDS byte index of each lane's access; faults outside [0, group_segment_size).
    The address is vaddr + offset in 32 bits (it wraps: LLVM folds `(x - k) + offset:k`)."""
    addr = addr & 0xFFFFFFFF
    base = (g.wg.astype(np.int64) * ctx.lds_size)[:, None]
    if g.exec_all and int(addr.max()) + size <= ctx.lds_size:   # common case: one reduction
        return addr + base
    bad = act & ((addr < 0) | (addr + size > ctx.lds_size))
    if bad.any():
        w, lane = (int(x) for x in np.argwhere(bad)[0])
        raise Fault(f"LDS access of {size} bytes outside the {ctx.lds_size}-byte group segment",
                    wave=w, lane=lane, address=int(addr[w, lane]))
    return np.where(act, addr, 0) + base


def _lds_gather(ctx, idx, size):
    return gather_bytes(ctx.lds, idx, size)


def _lds_scatter(ctx, idx, data, act):
    if act.all():
        scatter_bytes(ctx.lds, idx.reshape(-1), data.reshape(-1, data.shape[-1]))
    else:
        scatter_bytes(ctx.lds, idx[act], data[act])


def bind_ds_load(row: Op, ins: Instr):
    vdst, vaddr = ins.operands
    off, a, d, va = _offset(ins), row.args, vdst.index, vaddr.index

    def run(g, ctx):
        act = _active(g)
        idx = _lds_index(g, ctx, g.v[va].astype(np.int64) + off, a["size"], act)
        write_loaded(g, d, _lds_gather(ctx, idx, a["size"]), a, act)
    return run


def bind_ds_store(row: Op, ins: Instr):
    vaddr, vdata = ins.operands
    off, a, s, va = _offset(ins), row.args, vdata.index, vaddr.index

    def run(g, ctx):
        act = _active(g)
        idx = _lds_index(g, ctx, g.v[va].astype(np.int64) + off, a["size"], act)
        _lds_scatter(ctx, idx, store_bytes(g, s, a["size"], a["half"]), act)
    return run


def _two_offsets(ins: Instr, a: dict):
    scale = a["size"] * a["stride"]
    return _offset(ins, "offset0") * scale, _offset(ins, "offset1") * scale


def bind_ds_load2(row: Op, ins: Instr):
    vdst, vaddr = ins.operands
    (o0, o1), a, d, va = _two_offsets(ins, row.args), row.args, vdst.index, vaddr.index
    n = a["size"] // 4

    def run(g, ctx):
        act = _active(g)
        base = g.v[va].astype(np.int64)
        for k, o in enumerate((o0, o1)):
            idx = _lds_index(g, ctx, base + o, a["size"], act)
            write_loaded(g, d + k * n, _lds_gather(ctx, idx, a["size"]), a, act)
    return run


def bind_ds_store2(row: Op, ins: Instr):
    vaddr, data0, data1 = ins.operands
    (o0, o1), a, va = _two_offsets(ins, row.args), row.args, vaddr.index

    def run(g, ctx):
        act = _active(g)
        base = g.v[va].astype(np.int64)
        for o, src in ((o0, data0), (o1, data1)):
            idx = _lds_index(g, ctx, base + o, a["size"], act)
            _lds_scatter(ctx, idx, store_bytes(g, src.index, a["size"], None), act)
    return run


def bind_ds_atomic(row: Op, ins: Instr):
    ops = list(ins.operands)
    vdst = ops.pop(0) if row.args["ret"] else None
    vaddr, vdata = ops
    off, a = _offset(ins), row.args

    def run(g, ctx):
        act = _active(g)
        idx = _lds_index(g, ctx, g.v[vaddr.index].astype(np.int64) + off, 4, act)
        old = _apply_atomic(ctx.lds, idx[act], g.v[vdata.index][act].copy(), a)
        if vdst is not None:
            g.v[vdst.index][act] = old
    return run


# ---- DS cross-lane (no LDS memory traffic) ---------------------------------------------------------
def swizzle_pattern(offset) -> int:
    """The 16-bit ds_swizzle offset from LLVM's `swizzle(MODE,...)` syntax
    (llvm/docs/AMDGPUModifierSyntax.rst, "swizzle pattern")."""
    if isinstance(offset, int):
        return offset
    m = re.fullmatch(r"swizzle\((\w+)((?:,[^,)]+)*)\)", offset.replace(" ", ""))
    if not m:
        raise Fault(f"cannot read ds_swizzle offset {offset!r}")
    mode, args = m.group(1), [x.strip('"') for x in m.group(2).split(",")[1:]]
    if mode == "QUAD_PERM":
        return 0x8000 | sum(int(x) << (2 * i) for i, x in enumerate(args))
    if mode == "BITMASK_PERM":
        and_m = or_m = xor_m = 0
        for i, c in enumerate(args[0]):
            bit = 1 << (4 - i)
            and_m |= bit if c in "pi" else 0
            or_m |= bit if c == "1" else 0
            xor_m |= bit if c == "i" else 0
        return and_m | (or_m << 5) | (xor_m << 10)
    if mode == "SWAP":
        return 0x1F | (int(args[0]) << 10)
    if mode == "REVERSE":
        return 0x1F | ((int(args[0]) - 1) << 10)
    if mode == "BROADCAST":
        return (0x1F & ~(int(args[0]) - 1)) | (int(args[1]) << 5)
    raise Fault(f"unknown ds_swizzle mode {mode}")


def swizzle_lanes(pattern: int) -> np.ndarray:
    lane = np.arange(32)
    if pattern & 0x8000:
        return (lane & ~3) | ((pattern >> (2 * (lane & 3))) & 3)
    and_m, or_m, xor_m = pattern & 0x1F, (pattern >> 5) & 0x1F, (pattern >> 10) & 0x1F
    return ((lane & and_m) | or_m) ^ xor_m


def _gather_lanes(g, data: np.ndarray, src: np.ndarray) -> np.ndarray:
    w = np.arange(g.W)[:, None]
    val = data[w, src]
    return val if g.exec_all else np.where(g.mask[w, src], val, u32(0))


def bind_ds_swizzle(row: Op, ins: Instr):
    vdst, vsrc = ins.operands
    src = np.broadcast_to(swizzle_lanes(swizzle_pattern(ins.mods.get("offset", 0))), (1, 32))

    def run(g, ctx):
        np.copyto(g.v[vdst.index], _gather_lanes(g, g.v[vsrc.index], src), where=_active(g))
    return run


def bind_ds_bpermute(row: Op, ins: Instr):
    vdst, vaddr, vdata = ins.operands
    off = _offset(ins)

    def run(g, ctx):
        src = ((g.v[vaddr.index].astype(np.int64) + off) // 4) % 32
        np.copyto(g.v[vdst.index], _gather_lanes(g, g.v[vdata.index], src), where=_active(g))
    return run


def bind_ds_permute(row: Op, ins: Instr):
    vdst, vaddr, vdata = ins.operands
    off = _offset(ins)

    def run(g, ctx):
        act = _active(g)
        dst_lane = ((g.v[vaddr.index].astype(np.int64) + off) // 4) % 32
        out = np.zeros((g.W, 32), u32)
        w, l = np.nonzero(act)  # lane order: a later lane overwrites an earlier one
        out[w, dst_lane[w, l]] = g.v[vdata.index][w, l]
        np.copyto(g.v[vdst.index], out, where=act)
    return run


BINDERS = {
    "ds_load": bind_ds_load, "ds_store": bind_ds_store,
    "ds_load2": bind_ds_load2, "ds_store2": bind_ds_store2, "ds_atomic": bind_ds_atomic,
    "ds_swizzle": bind_ds_swizzle, "ds_bpermute": bind_ds_bpermute, "ds_permute": bind_ds_permute,
}
