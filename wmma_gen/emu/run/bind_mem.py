"""Binders for the memory rows of isa/global_smem.py: SMEM, GLOBAL (loads, stores, atomics)
and SCRATCH (semantics and citations there). Every access is bounds-checked per active lane:
global addresses against the allocation table, scratch offsets against the private segment."""
from __future__ import annotations

import numpy as np

from ...codeobj.instr import Instr
from ..isa.table import Fault, Op

u8, u32, u64 = np.uint8, np.uint32, np.uint64


def _active(g):
    return g.mask       # (W, 32) bool; all True when g.exec_all (state.Group.refresh_exec)


def _offset(ins: Instr, key: str = "offset") -> int:
    v = ins.mods.get(key, 0)
    if not isinstance(v, int):
        raise Fault(f"{ins.mnemonic}: cannot read {key}:{v}")
    return v


# ---- register <-> bytes -------------------------------------------------------------------------
def write_loaded(g, d: int, raw: np.ndarray, a: dict, active: np.ndarray) -> None:
    """Write loaded bytes raw (W, 32, size) into VGPRs from v[d]."""
    size, signed, half = a["size"], a["signed"], a["half"]
    if size >= 4:
        words = raw.view("<u4")
        if g.exec_all:
            g.v[d:d + size // 4] = np.moveaxis(words, -1, 0)
            return
        for k in range(size // 4):
            np.copyto(g.v[d + k], words[..., k], where=active)
        return
    val = raw.view("<u2")[..., 0] if size == 2 else raw[..., 0]
    if signed:
        val = val.view(np.int16 if size == 2 else np.int8).astype(np.int32).view(u32)
    else:
        val = val.astype(u32)
    if half == "lo":
        val = (g.v[d] & u32(0xFFFF0000)) | (val & u32(0xFFFF))
    elif half == "hi":
        val = (g.v[d] & u32(0xFFFF)) | (val << u32(16))
    if g.exec_all:
        g.v[d] = val
    else:
        np.copyto(g.v[d], val, where=active)


def store_bytes(g, s: int, size: int, half) -> np.ndarray:
    """(W, 32, size) bytes to store from v[s] (v[s] >> 16 for d16_hi stores)."""
    if size >= 4:
        return np.ascontiguousarray(np.moveaxis(g.v[s:s + size // 4], 0, -1)).view(u8)
    w = g.v[s] >> u32(16) if half == "hi" else g.v[s]
    # the low `size` bytes as a contiguous array: narrow the words, then view their bytes
    # (little-endian, as memory holds them); slicing bytes out of 4-byte words copies slowly
    return w.astype("<u2" if size == 2 else u8)[..., None].view(u8)


# ---- SMEM ---------------------------------------------------------------------------------------
def bind_smem(row: Op, ins: Instr):
    sdst, sbase, off = ins.operands[:3]
    d, b = sdst.index, sbase.index
    n, size = row.args.get("dwords", 1), row.args.get("bytes", 4 * row.args.get("dwords", 1))
    imm = (off.value if off.kind == "int" else 0) + _offset(ins)
    soff = off.index if off.kind == "s" else None
    align = ~u64(min(size, 4) - 1)

    def run(g, ctx):
        addr = g.s[b].astype(u64) | (g.s[b + 1].astype(u64) << u64(32))
        addr = addr + u64(imm & 0xFFFFFFFFFFFFFFFF) + (g.s[soff].astype(u64) if soff is not None else u64(0))
        raw = ctx.mem.gather(addr & align, size, np.ones(g.W, bool))
        if size < 4:   # gfx12 s_load_{u,i}{8,16}
            v = raw.view("<u2")[..., 0] if size == 2 else raw[..., 0]
            if row.args["signed"]:
                v = v.view(np.int16 if size == 2 else np.int8).astype(np.int32).view(u32)
            g.s[d] = v.astype(u32)
            return
        g.s[d:d + n] = raw.view("<u4").T
    return run


# ---- GLOBAL --------------------------------------------------------------------------------------
def _global_addr(ins: Instr, vaddr, saddr):
    """(addr, split): addr(g) the (W, 32) uint64 addresses; split(g) the same addresses as
    (base, lanes) for GlobalMemory.window -- base the int64 wave address ((W,), or a python int
    for every wave), lanes the uint32 (W, 32) offsets added zero-extended -- or None when the
    high words of a VGPR pair differ between lanes."""
    off = np.int64(_offset(ins))
    a = vaddr.index
    if saddr.kind == "off":
        def addr(g):
            base = g.v[a].astype(u64) | (g.v[a + 1].astype(u64) << u64(32))
            return (base.view(np.int64) + off).view(u64)

        def split(g):
            hi = g.v[a + 1]
            h0 = int(hi[0, 0])
            return ((h0 << 32) + int(off), g.v[a]) if (hi == h0).all() else None
    else:
        s = saddr.index

        def base_of(g):
            return (g.s[s].astype(u64) | (g.s[s + 1].astype(u64) << u64(32))).view(np.int64) + off

        def addr(g):   # SGPR pair base (W, 1) + zero-extended 32-bit VGPR offset + imm, one wide add
            return (g.v[a] + base_of(g)[:, None]).view(u64)

        def split(g):
            return base_of(g), g.v[a]
    return addr, split


# The memory word a fast load reads, by (size, signed): the loaded value itself for 1 and 2
# bytes; for 4, 8 and 16 bytes the whole value as one word, split into dwords afterwards
_WORD = {(1, False): np.uint8, (1, True): np.int8, (2, False): "<u2", (2, True): "<i2",
         (4, False): "<u4", (8, False): "V8", (16, False): "V16"}


def _fast_load(g, ctx, split, d: int, a: dict) -> bool:
    """Every lane active, all addresses in one allocation and aligned to the word: read the
    words straight into v[d] (the same bits write_loaded leaves); False when the slow path
    (gather + write_loaded, which also faults) must run."""
    size = a["size"]
    dt = _WORD.get((size, a["signed"]))
    got = None if dt is None else split(g)
    got = None if got is None else ctx.mem.window(*got, size, dt)
    if got is None:
        return False
    words, q = got
    if size == 4:
        np.take(words, q, out=g.v[d], mode="clip")   # q is in range: window checked it
    elif size > 4:
        g.v[d:d + size // 4] = np.moveaxis(words[q].view("<u4").reshape(*q.shape, size // 4), -1, 0)
    elif a["half"] is not None:   # d16: the value, zero/sign-extended to 16 bits, replaces one half
        reg = g.v[d].view(np.int16 if a["signed"] else np.uint16)   # little-endian: [0] is lo
        np.copyto(reg[..., a["half"] == "hi"::2], words[q])
    else:                         # zero/sign-extended to 32 bits
        np.copyto(g.v[d].view(np.int32) if a["signed"] else g.v[d], words[q])
    return True


def _fast_store(g, ctx, split, s: int, a: dict) -> bool:
    """Every lane active, all addresses in one allocation and aligned to the word: store the
    words of v[s] straight from the VGPRs, in lane order as scatter does; False when the slow
    path (store_bytes + scatter, which also faults) must run."""
    size = a["size"]
    dt = _WORD.get((size, False))
    got = None if dt is None else split(g)
    got = None if got is None else ctx.mem.window(*got, size, dt)
    if got is None:
        return False
    words, q = got
    if size > 4:
        data = np.ascontiguousarray(np.moveaxis(g.v[s:s + size // 4], 0, -1)).view(dt)[..., 0]
    else:   # the low `size` bytes of each dword, or of its high half for d16_hi (little-endian)
        data = g.v[s].view(dt)[..., (2 // size if a["half"] == "hi" else 0)::4 // size]
    words[q.reshape(-1)] = data.reshape(-1)
    return True


def bind_global_load(row: Op, ins: Instr):
    vdst, vaddr, saddr = ins.operands
    (addr, split), a, d = _global_addr(ins, vaddr, saddr), row.args, vdst.index

    def run(g, ctx):
        if g.exec_all and _fast_load(g, ctx, split, d, a):
            return
        act = _active(g)
        write_loaded(g, d, ctx.mem.gather(addr(g), a["size"], act), a, act)
    return run


def bind_global_store(row: Op, ins: Instr):
    vaddr, vdata, saddr = ins.operands
    (addr, split), a, s = _global_addr(ins, vaddr, saddr), row.args, vdata.index

    def run(g, ctx):
        if g.exec_all and _fast_store(g, ctx, split, s, a):
            return
        act = _active(g)
        ctx.mem.scatter(addr(g), store_bytes(g, s, a["size"], a["half"]), act)
    return run


# ---- SCRATCH (per-lane private segment, see mem.SCRATCH) ------------------------------------------
def _scratch_offset(ins: Instr, vaddr, saddr):
    off = np.int64(_offset(ins))
    v = vaddr.index if vaddr.kind == "v" else None
    s = saddr.index if saddr.kind == "s" else None

    def addr(g):
        a = np.full((g.W, 32), off, np.int64)
        if v is not None:
            a = a + g.v[v].astype(np.int64)
        if s is not None:
            a = a + g.s[s].astype(np.int64)[:, None]
        return a
    return addr


def _private(g, ctx, ins, a, size, act):
    """Byte index into g.priv (W, 32, P) rows; faults outside [0, P)."""
    p = 0 if g.priv is None else g.priv.shape[-1]
    bad = act & ((a < 0) | (a + size > p))
    if bad.any():
        w, lane = (int(x) for x in np.argwhere(bad)[0])
        raise Fault(f"scratch access of {size} bytes at private offset {int(a[w, lane])} outside the "
                    f"{p}-byte private segment (kernel descriptor private_segment_fixed_size)",
                    wave=w, lane=lane, address=int(a[w, lane]))
    return np.where(act, a, 0)


def bind_scratch_load(row: Op, ins: Instr):
    vdst, vaddr, saddr = ins.operands
    addr, a, d = _scratch_offset(ins, vaddr, saddr), row.args, vdst.index

    def run(g, ctx):
        act = _active(g)
        idx = _private(g, ctx, ins, addr(g), a["size"], act)
        w, l = np.ogrid[:g.W, :32]
        raw = g.priv[w[..., None], l[..., None], idx[..., None] + np.arange(a["size"])]
        write_loaded(g, d, np.ascontiguousarray(raw), a, act)
    return run


def bind_scratch_store(row: Op, ins: Instr):
    vaddr, vdata, saddr = ins.operands
    addr, a, s = _scratch_offset(ins, vaddr, saddr), row.args, vdata.index

    def run(g, ctx):
        act = _active(g)
        idx = _private(g, ctx, ins, addr(g), a["size"], act)
        w, l = np.nonzero(act)
        data = store_bytes(g, s, a["size"], a["half"])
        g.priv[w[:, None], l[:, None], idx[w, l][:, None] + np.arange(a["size"])] = data[w, l]
    return run


_ATOMIC = {"add": np.add, "max": np.maximum, "min": np.minimum}
_NP = {"u32": np.uint32, "i32": np.int32, "f32": np.float32}


def _apply_atomic(buf: np.ndarray, byte_off: np.ndarray, data: np.ndarray, a: dict):
    """Lane-ordered read-modify-write on a uint8 buffer; returns the old values."""
    view = buf.view(_NP[a["type"]])
    idx = byte_off // 4
    vals = data.view(_NP[a["type"]])
    old = np.empty_like(vals)
    op = _ATOMIC[a["op"]]
    for k in range(idx.size):  # sequential: repeated addresses see each other's updates
        old[k] = view[idx[k]]
        view[idx[k]] = op(view[idx[k]], vals[k])
    return old.view(u32)


def bind_global_atomic(row: Op, ins: Instr):
    ret = "glc" in ins.mods or "RETURN" in str(ins.mods.get("th", ""))  # gfx12: th:TH_ATOMIC_RETURN
    ops = list(ins.operands)
    vdst = ops.pop(0) if ret else None
    vaddr, vdata, saddr = ops
    (addr, _), a = _global_addr(ins, vaddr, saddr), row.args

    def run(g, ctx):
        act = _active(g)
        ad = addr(g)
        off = ctx.mem.check(ad, 4, act)
        if (off[act] % 4).any():
            raise Fault(f"{ins.mnemonic}: unaligned atomic address")
        old = _apply_atomic(ctx.mem.arena, off[act], g.v[vdata.index][act].copy(), a)
        if vdst is not None:
            g.v[vdst.index][act] = old
    return run


BINDERS = {
    "scratch_load": bind_scratch_load, "scratch_store": bind_scratch_store,
    "smem": bind_smem, "global_load": bind_global_load, "global_store": bind_global_store,
    "global_atomic": bind_global_atomic,
}
