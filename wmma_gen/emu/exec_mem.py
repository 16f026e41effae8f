"""Binders for memory rows: SMEM, GLOBAL and DS (see mem.py and ds.py for the semantics
and citations). Every access is bounds-checked per active lane: global addresses against
the allocation table, LDS addresses against the kernel's group_segment_fixed_size."""
from __future__ import annotations

import re

import numpy as np

from .asm import Instr
from .state import Fault
from .table import Op

u8, u32, u64 = np.uint8, np.uint32, np.uint64


def _active(g):
    return np.ones((g.W, 32), bool) if g.exec_all else g.mask


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
    np.copyto(g.v[d], val, where=active)


def store_bytes(g, s: int, size: int, half) -> np.ndarray:
    """(W, 32, size) bytes to store from v[s] (v[s] >> 16 for d16_hi stores)."""
    if size >= 4:
        return np.stack([g.v[s + k] for k in range(size // 4)], axis=-1).view(u8)
    w = g.v[s] >> u32(16) if half == "hi" else g.v[s]
    return np.ascontiguousarray(w)[..., None].view(u8)[..., :size]


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
    off = np.int64(_offset(ins))
    a = vaddr.index
    if saddr.kind == "off":
        def addr(g):
            base = g.v[a].astype(u64) | (g.v[a + 1].astype(u64) << u64(32))
            return (base.view(np.int64) + off).view(u64)
    else:
        s = saddr.index

        def addr(g):
            base = (g.s[s].astype(u64) | (g.s[s + 1].astype(u64) << u64(32)))[:, None]
            return ((base + g.v[a].astype(u64)).view(np.int64) + off).view(u64)
    return addr


def bind_global_load(row: Op, ins: Instr):
    vdst, vaddr, saddr = ins.operands
    addr, a, d = _global_addr(ins, vaddr, saddr), row.args, vdst.index

    def run(g, ctx):
        act = _active(g)
        write_loaded(g, d, ctx.mem.gather(addr(g), a["size"], act), a, act)
    return run


def bind_global_store(row: Op, ins: Instr):
    vaddr, vdata, saddr = ins.operands
    addr, a, s = _global_addr(ins, vaddr, saddr), row.args, vdata.index

    def run(g, ctx):
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
    addr, a = _global_addr(ins, vaddr, saddr), row.args

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


# ---- DS ----------------------------------------------------------------------------------------------
def _lds_index(g, ctx, addr: np.ndarray, size: int, act: np.ndarray) -> np.ndarray:
    """Flat LDS byte index of each lane's access; faults outside [0, group_segment_size).
    The address is vaddr + offset in 32 bits (it wraps: LLVM folds `(x - k) + offset:k`)."""
    addr = addr & 0xFFFFFFFF
    bad = act & ((addr < 0) | (addr + size > ctx.lds_size))
    if bad.any():
        w, lane = (int(x) for x in np.argwhere(bad)[0])
        raise Fault(f"LDS access of {size} bytes outside the {ctx.lds_size}-byte group segment",
                    wave=w, lane=lane, address=int(addr[w, lane]))
    return np.where(act, addr, 0) + (g.wg.astype(np.int64) * ctx.lds_size)[:, None]


def _lds_gather(ctx, idx, size):
    if size % 4 == 0 and not (idx & 3).any():  # dword-aligned: move words, not bytes
        return ctx.lds.view("<u4")[(idx >> 2)[..., None] + np.arange(size // 4)].view(u8)
    return ctx.lds[idx[..., None] + np.arange(size)]


def _lds_scatter(ctx, idx, data, act):
    size = data.shape[-1]
    sel = idx[act]
    if size % 4 == 0 and not (sel & 3).any():
        ctx.lds.view("<u4")[(sel >> 2)[:, None] + np.arange(size // 4)] = data[act].view("<u4")
    else:
        ctx.lds[sel[:, None] + np.arange(size)] = data[act]


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
    "scratch_load": bind_scratch_load, "scratch_store": bind_scratch_store,
    "smem": bind_smem, "global_load": bind_global_load, "global_store": bind_global_store,
    "global_atomic": bind_global_atomic, "ds_load": bind_ds_load, "ds_store": bind_ds_store,
    "ds_load2": bind_ds_load2, "ds_store2": bind_ds_store2, "ds_atomic": bind_ds_atomic,
    "ds_swizzle": bind_ds_swizzle, "ds_bpermute": bind_ds_bpermute, "ds_permute": bind_ds_permute,
}
