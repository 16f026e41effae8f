"""Binders for the LDS rows of isa/ds.py (semantics and citations there): loads, stores, two-address
forms, atomics, and the cross-lane forms that move no LDS memory (swizzle, permute). Every
LDS access is bounds-checked per active lane against the kernel's group_segment_fixed_size
plus the launch's dynamic LDS."""
from __future__ import annotations

import re

import numpy as np

from ...codeobj.instr import Instr
from ..isa.table import Fault, Op
from .bind_mem import _WORD, _active, _apply_atomic, _offset, store_bytes, write_loaded
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


# ---- fast paths: every lane active, every access inside the group segment and aligned ----------------
def _fast_index(g, ctx, va: int, offs: tuple, size: int, dt):
    """The fast path's addressing, for every lane active: (words, [q per offset]), the LDS as
    `dt` words and each lane's flat word index (intp (W, 32)) for each offset in `offs`, when
    every vaddr + offset + size lies in the group segment without a 32-bit wrap and vaddr, the
    offsets and the segment size are multiples of the word. None otherwise; the caller then
    runs the general path (which wraps as _lds_index does, and faults naming the lane)."""
    n, unit = ctx.lds_size, np.dtype(dt).itemsize
    if n % unit or min(offs) < 0 or any(o & (unit - 1) for o in offs):
        return None
    v, k, top = g.v[va], unit.bit_length() - 1, max(offs) + size
    # vaddr + offset + size <= n for every lane (below 2**32: no wrap) and every offset, and
    # aligned; OR >= max, so the OR alone often settles the bound
    low = int(np.bitwise_or.reduce(v, axis=None))
    if low & (unit - 1) or (low + top > n and int(v.max()) + top > n) or ctx.lds.size >= 1 << 32:
        return None
    word = v >> u32(k) if k else v
    return (ctx.lds[:ctx.lds.size // unit * unit].view(dt),
            [np.add(word, _segment_words(g.wg, n >> k, o >> k)).astype(np.intp) for o in offs])


_SEGMENTS: dict = {}   # (words per segment, word offset) -> (wg, its (W, 32) first words)


def _segment_words(wg: np.ndarray, words: int, o: int) -> np.ndarray:
    """uint32 (W, 32): the flat word index of each wave's group segment plus the word offset o
    (below 2**32: the LDS is). Kept while the group keeps its wg array (nothing writes into
    one; a group that changes its waves gets a new array), as a (W, 1) broadcast costs a
    wide add per call."""
    key = (words, o)
    got = _SEGMENTS.get(key)
    if got is None or got[0] is not wg:
        if len(_SEGMENTS) > 64:
            _SEGMENTS.clear()
        got = _SEGMENTS[key] = wg, np.repeat((wg * words + o).astype(u32), 32).reshape(len(wg), 32)
    return got[1]


def _load_words(g, d: int, words, q, a: dict) -> None:
    """Write the words at q into v[d] with the bits write_loaded leaves."""
    size = a["size"]
    if size == 4:
        np.take(words, q, out=g.v[d], mode="clip")   # q is in range: _fast_index checked it
    elif size > 4:
        got = np.take(words, q, mode="clip").view("<u4").reshape(*q.shape, size // 4)
        np.copyto(g.v[d:d + size // 4], np.moveaxis(got, -1, 0))
    elif a["half"] is not None:   # d16: the value, zero/sign-extended to 16 bits, replaces one half
        reg = g.v[d].view(np.int16 if a["signed"] else np.uint16)   # little-endian: [0] is lo
        np.copyto(reg[..., a["half"] == "hi"::2], np.take(words, q, mode="clip"))
    else:                         # zero/sign-extended to 32 bits
        np.copyto(g.v[d].view(np.int32) if a["signed"] else g.v[d], np.take(words, q, mode="clip"))


def _fast_load(g, ctx, va: int, offs: tuple, d: int, a: dict) -> bool:
    """Every lane active and every access in range and aligned: read the words straight into
    v[d] (v[d + k * size // 4] for the k-th offset); False when the general path must run."""
    size = a["size"]
    dt = _WORD.get((size, a["signed"]))
    got = None if dt is None else _fast_index(g, ctx, va, offs, size, dt)
    if got is None:
        return False
    words, qs = got
    for k, q in enumerate(qs):
        _load_words(g, d + k * (size // 4), words, q, a)
    return True


def _fast_store(g, ctx, va: int, offs: tuple, srcs: tuple, a: dict) -> bool:
    """Every lane active and every access in range and aligned to the whole access: store the
    words of v[src] straight from the VGPRs, in lane order (accesses coincide or are disjoint,
    so the last lane wins as in scatter_bytes); offsets in order. False when the general path
    must run."""
    size = a["size"]
    dt = _WORD.get((size, False))
    got = None if dt is None else _fast_index(g, ctx, va, offs, size, dt)
    if got is None:
        return False
    words, qs = got
    for q, s in zip(qs, srcs):
        if size > 4:
            data = np.ascontiguousarray(np.moveaxis(g.v[s:s + size // 4], 0, -1)).view(dt)[..., 0]
        else:   # the low `size` bytes of each dword, or of its high half for d16_hi (little-endian)
            data = g.v[s].view(dt)[..., (2 // size if a["half"] == "hi" else 0)::4 // size]
        words[q] = np.ascontiguousarray(data)   # a contiguous source assigns twice as fast
    return True


# ---- binders --------------------------------------------------------------------------------------------
def bind_ds_load(row: Op, ins: Instr):
    vdst, vaddr = ins.operands
    off, a, d, va = _offset(ins), row.args, vdst.index, vaddr.index

    def run(g, ctx):
        if g.exec_all and _fast_load(g, ctx, va, (off,), d, a):
            return
        act = _active(g)
        idx = _lds_index(g, ctx, g.v[va].astype(np.int64) + off, a["size"], act)
        write_loaded(g, d, _lds_gather(ctx, idx, a["size"]), a, act)
    return run


def bind_ds_store(row: Op, ins: Instr):
    vaddr, vdata = ins.operands
    off, a, s, va = _offset(ins), row.args, vdata.index, vaddr.index

    def run(g, ctx):
        if g.exec_all and _fast_store(g, ctx, va, (off,), (s,), a):
            return
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
        if g.exec_all and _fast_load(g, ctx, va, (o0, o1), d, a):
            return
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
        if g.exec_all and _fast_store(g, ctx, va, (o0, o1), (data0.index, data1.index), a):
            return
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
