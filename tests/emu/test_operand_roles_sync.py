"""The decoder's operand roles (codeobj/operand_roles.py) are the emulator's semantic rows
(emu/isa), written out so the code-object reader imports none of the emulator: a row added or
changed in emu/isa without rerunning the writer fails here, naming the command."""
from __future__ import annotations

from wmma_gen.codeobj import roles
from wmma_gen.codeobj.operand_roles import BITS, ROWS, WMMA
from wmma_gen.emu.decode import roles_export
from wmma_gen.emu.isa.opcodes import OPS, WMMA_TABLES
from wmma_gen.emu.isa.table import TYPES, family


def test_written_table_is_current():
    assert roles_export.TARGET.read_text() == roles_export.table_text(), \
        "codeobj/operand_roles.py is stale: run `python -m wmma_gen.emu.decode.roles_export`"


def test_decoder_sees_the_rows_the_executor_binds():
    assert set(ROWS) == set(OPS)
    for name, op in OPS.items():
        kind, dst, src, args = ROWS[name]
        assert (kind, dst, src) == (op.kind, op.dst, op.src), name
        assert all(op.args[k] == v for k, v in args.items()), name
    assert {f: set(t) for f, t in WMMA.items()} == {f: set(t) for f, t in WMMA_TABLES.items()}
    assert BITS == {tag: spec[0] for tag, spec in TYPES.items()}


def test_gfx117x_reads_gfx12_wmma_rows_with_gfx11_encoding():
    fam = family("gfx1170")                       # GFX11 encoding, GFX12 WMMA (emu/isa/table.py)
    r = roles.row("v_wmma_f32_16x16x16_f16", fam)
    w = WMMA_TABLES["gfx12"]["v_wmma_f32_16x16x16_f16"]
    assert fam == "gfx11" and (r.a_regs, r.b_regs, r.c_regs) == (w.a_regs, w.b_regs, w.c_regs)
