"""The opcode table (every row of every family) and `bind_program`, which turns a
Program's instructions into closures once. `OPS` doubles as the coverage list."""
from __future__ import annotations

from . import exec_mem, exec_vec
from .asm import Instr
from .ds import DS
from .executor import bind_branch, bind_salu, bind_valu, bind_vop3p, bind_vopd
from .lane import LANE
from .mem import CACHE12, GLOBAL, SCRATCH, SMEM
from .sop import CONTROL, SALU
from .sop12 import CONTROL12, SALU12
from .sop_float import SALU_FLOAT
from .state import Fault
from .table import BARRIER, END, Op, allowed, family
from .vop3p import PACKED
from .vop_float import FLOAT
from .vop_float12 import FLOAT12
from .vop_int import INT, INT12
from .vopc import VOPC

from .ops_wmma import WMMA_OPS
from .ops_wmma12 import WMMA12_OPS

# WMMA rows per family: the same mnemonic (v_wmma_f32_16x16x16_f16) has different operand
# sizes and lane layouts on gfx11 and gfx12, so the Program's arch selects the table.
WMMA_TABLES = {"gfx11": WMMA_OPS, "gfx12": WMMA12_OPS}

OPS: dict[str, Op] = {}
for _table in (SALU, SALU12, SALU_FLOAT, CONTROL, CONTROL12, SMEM, INT, INT12, FLOAT, FLOAT12, VOPC, PACKED, LANE, DS, GLOBAL, SCRATCH, CACHE12):
    for _k, _row in _table.items():
        if _k in OPS:
            raise ValueError(f"opcode {_k} defined twice")
        OPS[_k] = _row


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
    "lane": exec_vec.bind_lane, "mix": exec_vec.bind_mix,
    "nop": lambda row, ins: (lambda g, ctx: None),
    "barrier": lambda row, ins: (lambda g, ctx: BARRIER),
    "end": lambda row, ins: (lambda g, ctx: END),
    "denorm": _denorm,
    "barrier_signal": lambda row, ins: (_workgroup_barrier(ins) and (lambda g, ctx: None)),
    "barrier_wait": lambda row, ins: (_workgroup_barrier(ins) and (lambda g, ctx: BARRIER)),
    **exec_mem.BINDERS,
}


def lookup(ins: Instr) -> Op | None:
    return OPS.get(ins.mnemonic) or OPS.get(ins.base)


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
        fam = family(arch)
        if ins.base in WMMA_TABLES[fam]:
            return exec_vec.bind_wmma(WMMA_TABLES[fam][ins.base], ins, replicated=(fam == "gfx11"))
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


def coverage() -> list[str]:
    """Every mnemonic the emulator executes (without encoding suffixes)."""
    return sorted(set(OPS) | set(WMMA_OPS) | set(WMMA12_OPS))
