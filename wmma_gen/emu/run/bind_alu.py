"""Binders: turn (table row, parsed instruction) into a closure `run(g, ctx)` once per
program. A binder does decode, operand fetch and EXEC-masked write-back for a whole family;
the rows only supply pure semantics. A closure returns None (next PC), a target PC, a
`Split`, or BARRIER / END.

VALU float behaviour (stated once for every row): the descriptor of LLVM's kernels sets
float_denorm_mode_32/16_64 = 3 (denormals kept, in and out) and ieee_mode = 1; the
emulator always keeps denormals (numpy IEEE arithmetic) and faults on `s_denorm_mode`
values that would flush. NaNs propagate as numpy produces them (quiet); min/max follow
IEEE minNum/maxNum (a quiet NaN operand loses). add/sub/mul/div/sqrt are correctly
rounded; fma is correctly rounded (round-to-odd in f64, see isa/vop_float.fma);
transcendental ops (exp, log, rcp, rsq, sin, cos) are computed in f64 and rounded once,
which is at least as accurate as the hardware's 1 ulp.
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from ...codeobj.instr import SPECIAL_SGPR, Instr, Operand
from ..isa.dpp import dpp_plan
from ..isa.table import TYPES, Fault, LaneFault, Op, Split
from . import operands as O
from .state import EXEC, SCC, VCC, bits_to_mask

_IMPLICIT = {"SCC": Operand("s", SCC), "EXEC": Operand("s", EXEC), "VCC": Operand("s", VCC),
             "M0": Operand("s", SPECIAL_SGPR["m0"][0])}


def _roles(spec: str, ops: list[Operand], ins: Instr, implicit_lm_vcc: bool = False):
    """Match role tags to operands; returns [(tag, Operand)] and the rest of `ops`."""
    out = []
    for tag in spec.split():
        if tag in _IMPLICIT:
            out.append((tag, _IMPLICIT[tag]))
        elif tag == "D":
            out.append(("D", None))
        elif not ops and tag == "lm" and implicit_lm_vcc:
            out.append((tag, _IMPLICIT["VCC"]))
        elif not ops:
            raise Fault(f"{ins.mnemonic}: missing operand for role {tag!r}")
        else:
            out.append((tag, ops.pop(0)))
    return out, ops


# ---- VALU: VOP1 / VOP2 / VOP3 / VOPC (and the halves of VOPD) ---------------------------------
def valu_parts(row: Op, ins: Instr, vopd: bool = False):
    """(compute, write) for a VALU instruction; VOPD runs both computes before both writes."""
    ops = list(ins.operands)
    dsts, ops = _roles(row.dst, ops, ins)
    srcs, rest = _roles(row.src, ops, ins, implicit_lm_vcc=vopd)
    if rest:
        raise Fault(f"{ins.mnemonic}: unexpected extra operands {[o.text for o in rest]}")
    op_sel = ins.mods.get("op_sel", (0, 0, 0, 0))
    dst_types = [t for t, _ in dsts]
    plan = dpp_plan(ins.mods) if ("_dpp" in ins.mnemonic or "dpp8" in ins.mods) else None
    readers = []
    for k, (tag, op) in enumerate(srcs):
        if tag == "D":
            tag, op = dst_types[0], dsts[0][1]
        elif tag in _IMPLICIT:
            tag = "lm" if tag == "VCC" else "u32"
        hi = bool(op_sel[k]) if k < len(op_sel) - 1 and TYPES.get(tag, (0,))[0] == 16 else False
        readers.append(O.vreader(op, tag, hi, pre=plan.permute if (plan and k == 0) else None))
    writers = []
    for tag, op in dsts:
        if tag == "EXEC":
            writers.append(O.lm_writer(_IMPLICIT["EXEC"]))
        else:
            hi = bool(op_sel[-1]) if len(op_sel) == 4 and TYPES.get(tag, (0,))[0] == 16 else False
            writers.append(O.vwriter(op, tag, hi))
    fn, post = row.fn, _output_mods(ins, dst_types)
    if "sel" in row.args:   # the modifier (op_sel / byte_sel) picks bytes or words (isa/fp8_convert.py)
        fn = partial(row.fn, **{row.args["sel"]: ins.mods.get(row.args["sel"])})
    single = len(writers) == 1

    def compute(g):
        try:
            return fn(*[r(g) for r in readers])
        except LaneFault as e:  # only EXEC-active lanes may fault
            bad = np.broadcast_to(e.mask, (g.W, 32)) & (True if g.exec_all else g.mask)
            if bad.any():
                w, lane = (int(x) for x in np.argwhere(bad)[0])
                raise Fault(e.message, wave=w, lane=lane) from None
            return e.result

    def write(g, out):
        mask = None if g.exec_all else g.mask
        if plan is not None:
            extra = plan.write_mask(g)
            mask = extra if mask is None else (mask & extra)
        if single:
            writers[0](g, post(out), mask)
        else:
            for w, v in zip(writers, out):
                w(g, v, mask)
    return compute, write


def _output_mods(ins: Instr, dst_types):
    clamp, mul = "clamp" in ins.mods, {"mul:2": 2.0, "mul:4": 4.0, "div:2": 0.5}
    scale = next((mul[k + ":" + str(v)] for k, v in ins.mods.items() if f"{k}:{v}" in mul), None)
    if not clamp and scale is None:
        return lambda x: x
    if dst_types[0] not in O.FLOATS:
        if clamp:
            raise Fault(f"unimplemented: clamp on integer op {ins.mnemonic}")
    dt = TYPES[dst_types[0]][1]

    def post(x):
        x = np.asarray(x, dt)
        if scale is not None:
            x = (x * dt(scale)).astype(dt)
        if clamp:  # dx10_clamp: NaN clamps to 0 (RDNA3 ISA guide §7.3 "Output modifiers")
            x = np.where(np.isnan(x), dt(0), np.clip(x, dt(0), dt(1))).astype(dt)
        return x
    return post


def bind_valu(row: Op, ins: Instr):
    compute, write = valu_parts(row, ins)
    return lambda g, ctx: write(g, compute(g))


def bind_vopd(ins: Instr, table):
    """VOPD: both halves read their sources before either writes (RDNA3 ISA guide §7.6)."""
    parts = []
    for half in (ins, ins.pair):
        name = half.mnemonic.replace("v_dual_", "v_", 1)
        row = table.get(name)
        if row is None or row.kind != "valu":
            raise Fault(f"unimplemented instruction {half.mnemonic}")
        parts.append(valu_parts(row, half, vopd=True))
    (cx, wx), (cy, wy) = parts

    def run(g, ctx):
        rx, ry = cx(g), cy(g)
        wx(g, rx)
        wy(g, ry)
    return run


# ---- VOP3P: packed 16-bit math ---------------------------------------------------------------
def bind_vop3p(row: Op, ins: Instr):
    """Each source's low/high result half takes the half chosen by op_sel / op_sel_hi,
    negated by neg_lo / neg_hi (RDNA3 ISA guide §7.5 "Packed math"); the row's function
    is elementwise and runs once on both halves stacked."""
    ops = list(ins.operands)
    dsts, ops = _roles(row.dst, ops, ins)
    srcs, _ = _roles(row.src, ops, ins)
    n = len(srcs)
    op_sel = ins.mods.get("op_sel", (0,) * n)
    op_sel_hi = ins.mods.get("op_sel_hi", (1,) * n)
    neg_lo = ins.mods.get("neg_lo", (0,) * n)
    neg_hi = ins.mods.get("neg_hi", (0,) * n)
    readers = []
    for k, (tag, op) in enumerate(srcs):
        lo = O.vreader(replace(op, neg=False, abs=False), tag, bool(op_sel[k]))
        hi = O.vreader(replace(op, neg=False, abs=False), tag, bool(op_sel_hi[k]))
        readers.append((lo, hi, bool(neg_lo[k]), bool(neg_hi[k]), tag in O.FLOATS))
    dtag, dop = dsts[0]
    dt = TYPES[dtag][1]
    clamp = "clamp" in ins.mods

    def fetch(g, lo, hi, nl, nh, is_f):
        a, b = np.broadcast_arrays(lo(g), hi(g))
        if is_f and (nl or nh):
            a, b = (-a if nl else a), (-b if nh else b)
        return np.stack([a, b])

    wr = O.vwriter(dop, "u32")

    def run(g, ctx):
        vals = [fetch(g, *r) for r in readers]
        nd = max(v.ndim for v in vals)     # a constant or SGPR source is (2,): align it as (2, 1, ..)
        vals = [v.reshape(v.shape[:1] + (1,) * (nd - v.ndim) + v.shape[1:]) for v in vals]
        out = np.asarray(row.fn(*vals)).astype(dt)
        if clamp:
            out = np.clip(out, 0, 1).astype(dt) if dtag in O.FLOATS else out
        raw = out.view(np.uint16).astype(np.uint32)
        wr(g, raw[0] | (raw[1] << np.uint32(16)), None if g.exec_all else g.mask)
    return run


# ---- SALU: SOP1 / SOP2 / SOPC / SOPK -------------------------------------------------------------
def bind_salu(row: Op, ins: Instr):
    ops = list(ins.operands)
    dsts, ops = _roles(row.dst, ops, ins)
    srcs, rest = _roles(row.src, ops, ins)
    if rest:
        raise Fault(f"{ins.mnemonic}: unexpected extra operands {[o.text for o in rest]}")
    readers = [O.sreader(dsts[0][1], dsts[0][0]) if tag == "D" else
               O.sreader(op, "u32" if tag in _IMPLICIT else tag) for tag, op in srcs]
    writers = []
    for tag, op in dsts:
        if tag == "SCC":
            writers.append(O.scc_writer)
        else:
            w = O.swriter(op, "u32" if tag in _IMPLICIT else tag)
            writers.append(lambda g, v, w=w: w(g, v))
    fn = row.fn
    if len(writers) == 1:
        w0 = writers[0]
        if "clamp" in ins.mods or any(k in ins.mods for k in ("mul", "div")):   # VOP3 v_s_* output modifiers
            post = _output_mods(ins, [dsts[0][0]])
            return lambda g, ctx: w0(g, post(fn(*[r(g) for r in readers])))
        return lambda g, ctx: w0(g, fn(*[r(g) for r in readers]))

    def run(g, ctx):
        out = fn(*[r(g) for r in readers])
        for w, v in zip(writers, out):
            w(g, v)
    return run


# ---- control: SOPP branches, barrier, end, no-ops --------------------------------------------------
def bind_branch(row: Op, ins: Instr, labels: dict[str, int]):
    """row.fn(g) -> (W,) bool 'taken', or None for an unconditional branch."""
    target = labels[ins.operands[0].value]
    cond = branch_conditions()[row.src] if row.src else None
    if cond is None:
        return lambda g, ctx: target

    def run(g, ctx):
        taken = cond(g)
        if taken.all():
            return target
        if not taken.any():
            return None
        return Split(taken, target)
    return run


def branch_conditions():
    """Conditions of s_cbranch_* (RDNA3 ISA guide §4.4 "Branching")."""
    return {
        "scc0": lambda g: g.s[SCC] == 0, "scc1": lambda g: g.s[SCC] != 0,
        "vccz": lambda g: g.s[VCC] == 0, "vccnz": lambda g: g.s[VCC] != 0,
        "execz": lambda g: g.s[EXEC] == 0, "execnz": lambda g: g.s[EXEC] != 0,
    }


def lane_mask(g) -> np.ndarray:
    return g.mask if not g.exec_all else np.ones((g.W, 32), bool)


__all__ = ["bind_valu", "bind_vopd", "bind_vop3p", "bind_salu", "bind_branch", "valu_parts",
           "bits_to_mask", "lane_mask"]
