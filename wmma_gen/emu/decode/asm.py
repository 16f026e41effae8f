"""Parse one line of gfx11 / gfx12 assembly (as LLVM prints it) into an `Instr`.

Syntax follows llvm/docs/AMDGPUInstructionSyntax.rst, AMDGPUOperandSyntax.rst and
AMDGPUModifierSyntax.rst: `mnemonic op, op, ... mod mod:val ...`. Operands are
registers (`v3`, `v[4:7]`, `v0.l`/`v0.h` true16 halves, `s5`, `s[0:1]`, `vcc_lo`, `exec_lo`,
`m0`, `null`, `off`), constants (`-1`, `0x3f800000`, `0.5`, `1/(2*pi)`, `0.15915494`),
labels, and VOP3 source modifiers `-x`, `|x|`, `abs(x)`, `neg(x)`. gfx12 adds `ttmpN`
operands (architected workgroup ids) and `th:TH_*` / `scope:SCOPE_*` modifiers (parsed as
string-valued mods). VOPD pairs are written
`v_dual_x ... :: v_dual_y ...` and parse to an Instr with a `.pair`.
"""
from __future__ import annotations

import re

from ...codeobj.instr import INV_2PI, RAW_OPERANDS, SPECIAL_SGPR, TTMP0, Instr, Operand

_TTMP = re.compile(r"^ttmp(?:(\d+)|\[(\d+):(\d+)\])$")
_REG = re.compile(r"^([sv])(?:(\d+)|\[(\d+):(\d+)\])(?:\.([lh]))?$")
_FLOAT = re.compile(r"^-?(\d+\.\d*(e[-+]?\d+)?|inf|nan)$", re.I)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside brackets/parens/quotes."""
    out, depth, cur, quote = [], 0, [], False
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "([":
            depth += 1
        elif not quote and ch in ")]":
            depth -= 1
        if ch == sep and depth == 0 and not quote:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def parse_int(text: str) -> int:
    return int(text, 0)


def parse_operand(tok: str) -> Operand:
    t = tok.strip()
    neg = absm = False
    if t.startswith("neg(") and t.endswith(")"):
        neg, t = True, t[4:-1]
    if t.startswith("-") and (t[1:2] in ("|", "v", "s") or t[1:5] in ("abs(", "vcc_", "exec", "m0", "null")):
        neg, t = True, t[1:]
    if t.startswith("|") and t.endswith("|"):
        absm, t = True, t[1:-1]
    elif t.startswith("abs(") and t.endswith(")"):
        absm, t = True, t[4:-1]
    m = _REG.match(t)
    if m:
        kind, single, lo, hi, half = m.groups()
        first = int(single if single is not None else lo)
        count = 1 if single is not None else int(hi) - first + 1
        return Operand(kind, first, count, half, None, neg, absm, tok)
    m = _TTMP.match(t)
    if m:  # trap temporaries: operand encodings 108-123 (RDNA3/RDNA4 ISA, scalar operands)
        first = int(m.group(1) if m.group(1) is not None else m.group(2))
        count = 1 if m.group(1) is not None else int(m.group(3)) - first + 1
        return Operand("s", TTMP0 + first, count, None, None, neg, absm, tok)
    base, _, half = t.partition(".")
    if base in SPECIAL_SGPR:
        idx, count = SPECIAL_SGPR[base]
        return Operand("s", idx, count, half or None, None, neg, absm, tok)
    if t == "off":
        return Operand("off", text=tok)
    if t in ("1/(2*pi)", "0.15915494", "0.15915494309189532"):
        return Operand("float", value=INV_2PI, neg=neg, abs=absm, text=tok)
    if re.match(r"^-?(0x[0-9a-fA-F]+|\d+)$", t):
        return Operand("int", value=parse_int(t), neg=neg, abs=absm, text=tok)
    if _FLOAT.match(t):
        return Operand("float", value=float(t), neg=neg, abs=absm, text=tok)
    if re.match(r"^[.A-Za-z_$][\w.$]*$", t):
        return Operand("label", value=t, text=tok)
    raise ValueError(f"cannot parse operand {tok!r}")


def _parse_mod(tok: str) -> tuple[str, object]:
    """`offset:16` -> ('offset', 16); `quad_perm:[1,0,3,2]` -> list; `glc` -> True."""
    name, sep, val = tok.partition(":")
    if not sep:
        return tok, True
    val = val.strip()
    if val.startswith("[") and val.endswith("]"):
        return name, tuple(parse_int(x) for x in val[1:-1].split(",") if x.strip())
    try:
        return name, parse_int(val)
    except ValueError:
        return name, val


def parse_instruction(text: str, line: int = 0) -> Instr:
    """Parse one instruction line (comments already stripped)."""
    if "::" in text:
        x, y = text.split("::", 1)
        first = parse_instruction(x.strip(), line)
        first.pair = parse_instruction(y.strip(), line)
        first.text = text.strip()
        return first
    text = text.strip()
    mnemonic, _, rest = text.partition(" ")
    rest = rest.strip()
    if mnemonic in RAW_OPERANDS:
        return Instr(mnemonic, (), {"raw": rest}, text, line)
    if mnemonic == "ds_swizzle_b32":  # offset:swizzle(MODE,...) contains commas in parens
        pass
    ops: list[Operand] = []
    mods: dict = {}
    pieces = _split_top(rest)
    for i, piece in enumerate(pieces):
        toks = _split_top(piece, " ")
        # An operand may carry spaces only inside |...| abs bars; LLVM prints none.
        head, tail = toks[0], toks[1:]
        if ":" in head and not head.startswith(("s[", "v[", "ttmp[", "-s[", "-v[", "|", "-|")) or head in _FLAG_MODS:
            tail = toks
        elif head in ("-", ):
            raise ValueError(f"cannot parse operand in {text!r}")
        else:
            ops.append(parse_operand(head))
        for t in tail:
            k, v = _parse_mod(t)
            mods[k] = v
    if mnemonic.startswith("v_") and len({_literal(o) for o in ops} - {None}) > 1:
        raise ValueError(f"{text!r}: two different literal constants; a VALU instruction holds one 32-bit "
                         "literal (RDNA3.5 ISA guide §7.2.2.3 Source Operand Restrictions)")
    return Instr(mnemonic, tuple(ops), mods, text, line)


_INLINE_FLOATS = {0.0, 0.5, 1.0, 2.0, 4.0}


def _literal(op: Operand):
    """A key for the literal constant `op` needs, None for a register or an inline constant
    (integers -16..64, +-0.5/1/2/4, 0, 1/(2*pi): RDNA3.5 ISA guide §7.2, source operand table)."""
    if op.kind == "int":
        v = op.value - (1 << 32) if op.value > 0x7FFFFFFF else op.value      # 0xffffffff is inline -1
        return None if -16 <= v <= 64 else ("int", v)
    if op.kind == "float":
        return None if abs(op.value) in _INLINE_FLOATS or op.value == INV_2PI else ("float", op.value)
    return None


_FLAG_MODS = {"glc", "slc", "dlc", "nv", "clamp", "bound_ctrl:0", "bound_ctrl:1", "fi:1", "fi:0",
              "row_mirror", "row_half_mirror", "offen", "idxen", "lds", "tfe", "lwe", "a16", "d16",
              "gds", "sc0", "sc1", "nt"}
