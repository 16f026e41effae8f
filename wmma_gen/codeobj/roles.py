"""Operand roles of a mnemonic (kind, dst and src role tags; WMMA rows: register counts; memory
rows: access size), read from operand_roles.py -- the table written from the emulator's semantic
rows, so decode and execution agree about every operand (tests/emu/test_operand_roles_sync.py)
while this package imports none of the emulator. The decoder uses them to know how many registers
an operand spans and which operands the encoding leaves implicit."""
from __future__ import annotations

import re
from typing import NamedTuple

from . import operands as O
from .operand_roles import BITS, ROWS, WMMA

_SMEM = re.compile(r"^s_(?:buffer_)?load_(?:b(\d+)|[ui](8|16))$")


class Row(NamedTuple):
    kind: str
    dst: str
    src: str
    args: dict


class WmmaRow(NamedTuple):
    a_regs: int
    b_regs: int
    c_regs: int


_ROWS = {name: Row(*r) for name, r in ROWS.items()}
_WMMA = {fam: {name: WmmaRow(*w) for name, w in table.items()} for fam, table in WMMA.items()}


def row(name: str, family: str) -> Row | WmmaRow | None:
    base = name.replace("v_dual_", "v_", 1) if name.startswith("v_dual_") else name
    return _WMMA[getattr(family, "wmma", family)].get(base) or _ROWS.get(base)   # Family: gfx1170 -> gfx12 WMMA


def roles(name: str, family: str) -> tuple[str, list[str], list[str]]:
    """(kind, dst tags, src tags); kind 'wmma' for WMMA rows, 'unknown' without a row."""
    r = row(name, family)
    if r is None:
        return "unknown", [], []
    if isinstance(r, WmmaRow):
        return "wmma", [], []
    return r.kind, r.dst.split(), r.src.split()


def width(tag: str) -> int:
    """Bits of one operand of role `tag` (0 for implicit upper-case roles)."""
    if tag in BITS:
        return BITS[tag]
    return 0 if tag.isupper() else 32


def _smem_bytes(name: str) -> int | None:
    m = _SMEM.match(name)
    if not m:
        return None
    return int(m.group(1)) // 8 if m.group(1) else int(m.group(2)) // 8


class _Mem(dict):
    def __missing__(self, name):
        n = _smem_bytes(name)
        if n is None:
            raise KeyError(name)
        return n

    def __contains__(self, name):
        return _smem_bytes(name) is not None


MEM = _Mem()


def _size(name: str, family: str, default: int = 4) -> int:
    r = row(name, family)
    if isinstance(r, Row) and "size" in r.args:
        return int(r.args["size"])
    m = re.search(r"_b(\d+)$", name)
    return int(m.group(1)) // 8 if m else default


def _regs(nbytes: int) -> int:
    return max(1, (nbytes + 3) // 4)


def ds_operands(name: str, f: dict, family: str):
    """DS operands and modifiers in LLVM's order (AMDGPUAsmGFX11.rst / GFX12.rst, DS)."""
    kind = roles(name, family)[0]
    size = _size(name, family)
    mods = {}
    addr = O.vreg(f["addr"])
    n = _regs(size)
    if kind in ("ds_load2", "ds_store2"):
        for k in ("offset0", "offset1"):
            if f[k]:
                mods[k] = f[k]
    else:
        off = f["offset0"] | (f["offset1"] << 8)
        if off:
            mods["offset"] = off
    if kind == "ds_load":
        ops = [O.vreg(f["vdst"], n), addr]
    elif kind == "ds_load2":
        ops = [O.vreg(f["vdst"], 2 * n), addr]
    elif kind == "ds_store":
        ops = [addr, O.vreg(f["data0"], n)]
    elif kind == "ds_store2":
        ops = [addr, O.vreg(f["data0"], n), O.vreg(f["data1"], n)]
    elif kind == "ds_swizzle":
        ops = [O.vreg(f["vdst"]), addr]
    elif kind in ("ds_bpermute", "ds_permute"):
        ops = [O.vreg(f["vdst"]), addr, O.vreg(f["data0"])]
    elif kind == "ds_atomic":
        r = row(name, family)
        ops = ([O.vreg(f["vdst"])] if r.args["ret"] else []) + [addr, O.vreg(f["data0"])]
    elif "load" in name or "rtn" in name:
        ops = [O.vreg(f["vdst"], n), addr]
    else:
        ops = [addr, O.vreg(f["data0"], n)]
    return ops, mods


def flat_operands(name: str, family: str, vdst: int, vaddr: int, vdata: int, saddr: int, sve: int,
                  seg: str):
    """FLAT / GLOBAL / SCRATCH operands in LLVM's order: loads `vdst, vaddr, saddr`, stores
    `vaddr, vdata, saddr`, returning atomics `vdst, vaddr, vdata, saddr`. GLOBAL: saddr NULL
    (printed `off`) means a 64-bit vaddr; SCRATCH: SVE=0 means no vaddr (`off`)."""
    n = _regs(_size(name, family))
    if seg == "scratch":
        va = O.vreg(vaddr) if sve else O.OFF
        sa = O.OFF if saddr == 124 else O.sreg(saddr)
    elif seg == "flat":
        va, sa = O.vreg(vaddr, 2), None
    else:
        off = saddr == 124
        va = O.vreg(vaddr, 2 if off else 1)
        sa = O.OFF if off else O.sreg(saddr, 2)
    tail = [sa] if sa is not None else []
    if "atomic" in name:
        return [va, O.vreg(vdata, n)] + tail, {}
    if "store" in name:
        return [va, O.vreg(vdata, n)] + tail, {}
    return [O.vreg(vdst, n), va] + tail, {}
