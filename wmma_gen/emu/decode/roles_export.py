"""Write the decoder's operand-role table (wmma_gen/codeobj/operand_roles.py) from the emulator's
semantic rows (emu/isa), so the code-object reader -- which the compiler imports -- needs none of
the emulator's semantics. The rows stay the one source: tests/emu/test_operand_roles_sync.py
fails when the written table and the rows differ; rerun

    python -m wmma_gen.emu.decode.roles_export
"""
from __future__ import annotations

import textwrap
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "codeobj" / "operand_roles.py"
# Op.args keys the decoder reads: memory access bytes, whether a DS atomic returns
_ARGS = ("size", "ret")

_HEAD = '''"""Operand roles of every mnemonic the decoder names: kind, destination and source role tags
(upper case = implicit), the Op.args the decoder reads (access `size` in bytes, DS atomic `ret`),
and the register counts of the WMMA operands per WMMA family. The decoder uses them to know how
many registers an operand spans and which operands the encoding leaves implicit (roles.py).

GENERATED from the emulator's semantic rows (emu/isa) by `python -m wmma_gen.emu.decode.roles_export`;
do not edit. tests/emu/test_operand_roles_sync.py fails when this table and the rows differ, so
decode and execution cannot disagree about an operand."""

# role tag -> bits of one operand (emu/isa/table.TYPES; `u8` is read as a 32-bit register)
BITS = {{
    {bits}
}}

# One group per line, `kind|dst tags|src tags|key=value args: mnemonic ...`; indented lines continue
# the mnemonics of the group above.
_GROUPS = """
{rows}"""


def _parse(text: str) -> dict[str, tuple[str, str, str, dict]]:
    rows, roles = {{}}, None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            head, _, line = line.partition(": ")
            kind, dst, src, args = head.split("|")
            roles = (kind, dst, src, {{k: int(v) if v.isdigit() else v == "True"
                                      for k, v in (a.split("=") for a in args.split(",") if a)}})
        rows.update((name, roles) for name in line.split())
    return rows


# mnemonic -> (kind, dst tags, src tags, args)
ROWS = _parse(_GROUPS)

# WMMA family -> mnemonic -> (A registers, B registers, C/D registers)
WMMA = {{
{wmma}}}
'''


def table_text() -> str:
    """The module text for the current semantic rows."""
    from ..isa.opcodes import OPS, WMMA_TABLES
    from ..isa.table import TYPES
    groups: dict[tuple, list[str]] = {}
    for name, r in sorted(OPS.items()):
        args = ",".join(f"{k}={r.args[k]}" for k in _ARGS if k in r.args)
        groups.setdefault((r.kind, r.dst, r.src, args), []).append(name)
    rows = ""
    for key, names in sorted(groups.items()):
        head = "|".join(key) + ": "
        lines = textwrap.wrap(" ".join(names), 104 - len(head), subsequent_indent="    ")
        first, rest = lines[0], " ".join(x.strip() for x in lines[1:])
        rows += head + first + "\n" + "".join(f"    {x}\n" for x in textwrap.wrap(rest, 100))
    wmma = ""
    for fam, table in sorted(WMMA_TABLES.items()):
        wmma += f"    {fam!r}: {{\n" + "".join(
            f"        {name!r}: ({w.a_regs}, {w.b_regs}, {w.c_regs}),\n" for name, w in sorted(table.items())) + "    },\n"
    bits = ", ".join(f"{tag!r}: {spec[0]}" for tag, spec in TYPES.items())
    return _HEAD.format(bits="\n    ".join(textwrap.wrap(bits, 100)), rows=rows, wmma=wmma)


def main() -> None:
    TARGET.write_text(table_text())
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
