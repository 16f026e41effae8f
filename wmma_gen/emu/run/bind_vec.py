"""Binders for the vector rows that are not plain VALU: cross-lane ops (lane.py),
v_fma_mix* (vop3p.py) and WMMA (wmma11.py, wmma12.py)."""
from __future__ import annotations

import numpy as np

from ...codeobj.instr import Instr
from ..isa.table import Fault, Op
from ..isa.wmma11 import unreplicated_waves
from ..isa.wmma_regs import NotReplicated
from . import operands as O

u32 = np.uint32


def bind_lane(row: Op, ins: Instr):
    ops = list(ins.operands)
    dst = ops.pop(0)
    readers = []
    for tag in row.src.split():
        if tag == "D":
            readers.append(lambda g, i=dst.index: g.v[i])
        elif tag == "v":
            op = ops.pop(0)
            if op.kind != "v":
                raise Fault(f"{ins.mnemonic}: operand {op.text} must be a VGPR")
            readers.append(lambda g, i=op.index: g.v[i])
        else:
            readers.append(O.sreader(ops.pop(0), "u32"))
    op_sel = tuple(ins.mods.get("op_sel", (0, 0)))[:2]
    kw = {"op_sel": op_sel} if "permlane" in row.mnemonic else {}
    fn, kind = row.fn, row.dst
    other = ins.operands[1].index if kind == "v2" else None
    sw = O.swriter(dst, "u32") if kind == "s" else None

    def run(g, ctx):
        mask = np.ones((g.W, 32), bool) if g.exec_all else g.mask
        out = fn(*[r(g) for r in readers], exec_mask=mask, **kw)
        if kind == "s":
            sw(g, out)
        elif kind == "vall":
            g.v[dst.index][...] = out
        elif kind == "v2":
            a, b = (np.array(x) for x in out)
            np.copyto(g.v[dst.index], a, where=mask)
            np.copyto(g.v[other], b, where=mask)
        else:
            np.copyto(g.v[dst.index], out, where=mask)
    return run


def bind_mix(row: Op, ins: Instr):
    """v_fma_mix*: source k is f16 (half op_sel[k]) when op_sel_hi[k] = 1, else f32;
    neg_lo negates and neg_hi takes |x| (RDNA3 ISA §16 V_FMA_MIX_F32)."""
    dst, *srcs = ins.operands
    n = len(srcs)
    op_sel, op_sel_hi = ins.mods.get("op_sel", (0,) * 4), ins.mods.get("op_sel_hi", (0,) * n)
    neg_lo, neg_hi = ins.mods.get("neg_lo", (0,) * n), ins.mods.get("neg_hi", (0,) * n)
    readers = []
    for k, op in enumerate(srcs):
        r = O.vreader(op, "f16", bool(op_sel[k])) if op_sel_hi[k] else O.vreader(op, "f32")
        readers.append((r, bool(neg_lo[k]), bool(neg_hi[k])))
    half = row.src or None
    w = O.vwriter(dst, row.dst, half == "hi")

    def val(g, r, nl, nh):
        x = np.asarray(r(g), np.float64)
        x = np.abs(x) if nh else x
        return -x if nl else x

    def run(g, ctx):
        w(g, row.fn(*[val(g, *r) for r in readers]), None if g.exec_all else g.mask)
    return run


def _replication_fault(ins: Instr, role: str, op, regs: np.ndarray, bad_waves: np.ndarray, first: int = 0):
    """gfx11 WMMA reads A/B from lanes 0-15 and requires lanes 16-31 to replicate them
    (RDNA3 ISA §7.9: "lanes 0-15 data are replicated into lanes 16-31"); otherwise the
    hardware result is unspecified, so the emulator faults naming the lanes. bad_waves
    counts from wave `first`."""
    w = first + int(np.nonzero(bad_waves)[0][0])
    diff = regs[w, 16:, :] != regs[w, :16, :]
    lanes = sorted({int(x) + 16 for x in np.nonzero(diff.any(axis=1))[0]})
    lane, r = (int(x) for x in np.argwhere(diff)[0])
    raise Fault(f"{ins.mnemonic}: {role} operand {op.text} is not replicated across half-waves: lanes "
                f"{lanes} differ from lanes {[x - 16 for x in lanes]} (first: lane {lane + 16} "
                f"v{op.index + r}={int(regs[w, lane + 16, r]):#010x} vs lane {lane} "
                f"{int(regs[w, lane, r]):#010x}); gfx11 WMMA needs lanes 16-31 = lanes 0-15 "
                "(RDNA3 ISA §7.9)", wave=w, lane=lane + 16)


def block(g, op, n: int) -> np.ndarray:
    """VGPRs op.index .. op.index+n-1 of every wave as a (W, 32, n) view (no copy)."""
    return g.v[op.index:op.index + n].transpose(1, 2, 0)


def bind_wmma(wop, ins: Instr, replicated: bool = False):
    """v_wmma_*: D, A, B, C register blocks as (W, 32, regs) uint32; requires EXEC all
    ones (RDNA3 ISA §7.9 "WMMA": "EXEC must be all 1's"). `replicated` (gfx11): A and B must
    hold the same data in lanes 16-31 as in lanes 0-15, else the instruction faults."""
    d, a, b, c = ins.operands
    for op, n, role in ((d, wop.c_regs, "D"), (a, wop.a_regs, "A"), (b, wop.b_regs, "B")):
        if op.kind != "v" or op.count != n:
            raise Fault(f"{ins.mnemonic}: {role} must be {n} VGPRs, got {op.text}")
    if c.kind == "v":
        cread = lambda g: block(g, c, wop.c_regs)
    elif c.kind in ("int", "float") and (c.kind == "int" or wop.c_regs == 8 and "f32" in wop.mnemonic):
        bits = O.const_bits(c, "f32" if c.kind == "float" else "u32")
        cread = lambda g: np.full((g.W, 32, wop.c_regs), bits, u32)
    else:
        raise Fault(f"unimplemented: {ins.mnemonic} with C operand {c.text}")
    kw = {k: tuple(ins.mods[k]) for k in ("neg_lo", "neg_hi", "op_sel") if k in ins.mods}
    check = {"replicated": True} if replicated and wop.checks_replication else {}
    if "clamp" in ins.mods:
        kw["clamp"] = True


    def run(g, ctx):
        if not g.exec_all:
            w = int(np.nonzero(~g.mask.all(axis=1))[0][0])
            raise Fault(f"{ins.mnemonic} needs EXEC all ones (RDNA3 ISA §7.9), wave has "
                        f"exec={int(g.s[126][w]):#010x}", wave=w)
        ra, rb = block(g, a, wop.a_regs), block(g, b, wop.b_regs)

        def require_replicated(first: int = 0):
            for role, op, n, regs in (("A", a, wop.a_regs, ra), ("B", b, wop.b_regs, rb)):
                x = g.v[op.index:op.index + n, first:]   # (n, W, 32): compare the halves in place
                if (x[:, :, 16:] != x[:, :, :16]).any():
                    _replication_fault(ins, role, op, regs, unreplicated_waves(regs[first:]), first)
        if replicated and not wop.checks_replication:
            require_replicated()
        if wop.writes_out:           # D written in place, after A, B and C are read
            try:                     # the row checks replication itself, on the way (one pass)
                wop.fn(ra, rb, cread(g), out=g.v[d.index:d.index + wop.c_regs], **kw, **check)
            except NotReplicated as e:   # waves before e.first_wave passed (their D may be written)
                require_replicated(e.first_wave)
                raise AssertionError(f"{ins.mnemonic}: NotReplicated but every lane pair matches")
            return
        out = np.asarray(wop.fn(ra, rb, cread(g), **kw), u32)
        g.v[d.index:d.index + wop.c_regs] = out.transpose(2, 0, 1)
    return run
