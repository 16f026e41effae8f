"""`bind_program`: each instruction of a Program becomes a closure `run(g, ctx)` once, by the
binder its table row names (bind_alu, bind_vec, bind_mem, bind_ds); an unknown, malformed or
arch-illegal instruction becomes a closure that faults when executed."""
from __future__ import annotations

from ...codeobj.instr import Instr
from ..isa.opcodes import OPS, WMMA_TABLES, lookup
from ..isa.table import BARRIER, END, Fault, allowed, family
from . import bind_ds, bind_mem, bind_vec
from .bind_alu import bind_branch, bind_salu, bind_valu, bind_vop3p, bind_vopd


def _denorm(row, ins):
    raw = ins.mods.get("raw", "")
    try:
        value = int(raw, 0)
    except ValueError:
        value = -1
    if value & 0xF != 0xF:
        def run(g, ctx):
            raise Fault(f"unimplemented: s_denorm_mode {raw} (only 'keep all denormals', 0xf)")
        return run
    return lambda g, ctx: None


def _workgroup_barrier(ins) -> bool:
    """gfx12 split barrier operand: only -1 (the workgroup barrier; simm16 0xffff as
    s_barrier_wait prints it) is modelled, named barriers (other ids, M0) fault."""
    ops = ins.operands
    if len(ops) != 1 or ops[0].kind != "int" or ops[0].value not in (-1, 0xFFFF, 0xFFFFFFFF):
        raise Fault(f"unimplemented: {ins.mnemonic} {', '.join(o.text for o in ops)} "
                    "(only the workgroup barrier -1 is modelled)")
    return True


BINDERS = {
    "salu": bind_salu, "valu": bind_valu, "vop3p": bind_vop3p,
    "lane": bind_vec.bind_lane, "mix": bind_vec.bind_mix,
    "nop": lambda row, ins: (lambda g, ctx: None),
    "barrier": lambda row, ins: (lambda g, ctx: BARRIER),
    "end": lambda row, ins: (lambda g, ctx: END),
    "denorm": _denorm,
    "barrier_signal": lambda row, ins: (_workgroup_barrier(ins) and (lambda g, ctx: None)),
    "barrier_wait": lambda row, ins: (_workgroup_barrier(ins) and (lambda g, ctx: BARRIER)),
    **bind_mem.BINDERS, **bind_ds.BINDERS,
}


def _unimplemented(message: str):
    def run(g, ctx):
        raise Fault(message)
    return run


def bind(ins: Instr, labels: dict[str, int], arch: str = ""):
    """Closure for one instruction; an unknown or malformed instruction, or one its row
    does not allow on `arch` (the Program's .amdgcn_target), becomes a closure that faults
    (naming the mnemonic and the arch) when executed."""
    try:
        if ins.pair is not None:
            return bind_vopd(ins, OPS)
        fam = family(arch).wmma   # the WMMA family: gfx12 on gfx1170/gfx1171 (table.WMMA12_ON_GFX11)
        if ins.base in WMMA_TABLES[fam]:
            return bind_vec.bind_wmma(WMMA_TABLES[fam][ins.base], ins, replicated=(fam == "gfx11"))
        other = [f for f, t in WMMA_TABLES.items() if ins.base in t]
        if other:
            return _unimplemented(f"illegal instruction {ins.mnemonic} for {arch or 'an unknown target'}: "
                                  f"only {', '.join(other)} targets have it")
        row = lookup(ins)
        if row is None:
            return _unimplemented(f"unimplemented instruction {ins.mnemonic}")
        if not allowed(row.archs, arch):
            return _unimplemented(f"illegal instruction {ins.mnemonic} for {arch or 'an unknown target'}: "
                                  f"only {', '.join(sorted(row.archs))} have it ({row.cite})")
        if row.kind == "branch":
            return bind_branch(row, ins, labels)
        return BINDERS[row.kind](row, ins)
    except Fault as f:
        return _unimplemented(f"cannot decode {ins.mnemonic}: {f.message}")


def bind_program(prog) -> list:
    arch = getattr(prog, "arch", "")
    return [bind(ins, prog.labels, arch) for ins in prog.instrs]
