"""Print a decoded instruction in LLVM's assembly syntax (AMDGPUInstructionSyntax.rst,
AMDGPUModifierSyntax.rst): `mnemonic op, op, ... mod mod:val`. Used for fault messages and
`wmma-gen emu run --disassemble`; the text parser reads it back to the same Instr."""
from __future__ import annotations


def _mod(k, v) -> str:
    if v is True:
        return k
    if isinstance(v, tuple):
        return f"{k}:[{','.join(str(x) for x in v)}]"
    if k in ("row_mask", "bank_mask"):
        return f"{k}:{v:#x}"
    return f"{k}:{v}"


def render(ins) -> str:
    if "raw" in ins.mods:
        head = f"{ins.mnemonic} {ins.mods['raw']}".strip()
    else:
        ops = ", ".join(o.text for o in ins.operands)
        mods = " ".join(_mod(k, v) for k, v in ins.mods.items())
        head = " ".join(p for p in (ins.mnemonic, ops, mods) if p)
    if ins.pair is not None:
        return f"{head} :: {render(ins.pair)}"
    return head
