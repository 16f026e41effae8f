"""Machine code -> `Instr` list: the decoder of gfx11 / gfx12 kernels.

`decode(code, family)` walks the bytes of one kernel, classifies each instruction
(formats.classify), reads its fields and literal / DPP dwords, names the opcode from the
per-family opcode tables (optables.py) and builds the operands in the order LLVM prints them,
so the result equals what asm.parse_instruction makes of LLVM's ISA text for the same code
(tests/emu/test_decode_crosscheck.py). How many registers an operand spans and which
operands are implicit come from the mnemonic's operand roles (roles.py), the table written
from the semantic row that will execute the instruction (emu/isa table.Op.dst/src).

An opcode missing from the tables decodes to `<class opcode N>` and faults when executed
(never a silent wrong result); an encoding class the decoder does not know (so it cannot
tell the instruction length) raises EmulatorFault at load, naming the byte offset and the
raw dwords.
"""
from __future__ import annotations

from ..errors import EmulatorFault
from .decode_parts import Literal, finish, opcode_name, src_operand, unknown, words
from .instr import RAW_OPERANDS, Instr
from . import formats as F
from . import operands as O
from .roles import MEM, roles, width  # noqa: F401
from .valu import vop1, vop2, vop3, vop3p, vopc, vopd


def decode(code: bytes, family: str, kernel: str = "?", base: int = 0) -> tuple[list[Instr], dict[str, int]]:
    """Instructions of `code` (one kernel's bytes) and the labels of branch targets
    (label -> instruction index). `base` is the byte address of code[0] (for messages)."""
    instrs, starts, pos = [], [], 0
    while pos < len(code):
        w0 = words(code, pos, 1)[0]
        cls = F.classify(w0, family)
        if cls is None:
            raise EmulatorFault(f"cannot decode: first dword {w0:#010x} is no {family} encoding class the "
                                "emulator decodes (SOP*, SMEM, VOP*, DS, FLAT/GLOBAL/SCRATCH, MUBUF)",
                                kernel=kernel, pc=base + pos, instruction=f"raw {w0:#010x}")
        n = F.BASE_DWORDS[cls]
        ws = words(code, pos, n)
        if ws is None:
            raise EmulatorFault(f"truncated {cls} instruction at the end of the kernel code", kernel=kernel,
                                pc=base + pos, instruction=f"raw {w0:#010x}")
        bits = sum(w << (32 * i) for i, w in enumerate(ws))
        f = F.fields(bits, family, cls)
        f["_pc"] = base + pos
        ins, extra = _decode_one(cls, f, family, code, pos + 4 * n)
        size = 4 * (n + extra)
        if pos + size > len(code):
            raise EmulatorFault(f"truncated {cls} instruction (literal/DPP dword past the end)", kernel=kernel,
                                pc=base + pos, instruction=ins.mnemonic)
        ins.pc = base + pos
        ins.encoding = code[pos:pos + size].hex()
        ins.fmt = cls
        starts.append(pos)
        instrs.append(ins)
        pos += size
    index = {p: i for i, p in enumerate(starts)}
    labels = {}
    for ins in instrs:
        for op in ins.operands:
            if op.kind == "label":
                target = int(op.value[len(".Lpc_"):], 16) - base
                if target in index:
                    labels[op.value] = index[target]
                elif target == len(code):
                    labels[op.value] = len(instrs)
    return instrs, labels


def _decode_one(cls: str, f: dict, family: str, code: bytes, after: int) -> tuple[Instr, int]:
    """(Instr, extra dwords after the fixed part: literal and/or DPP)."""
    lit = Literal(code, after)
    fn = _DECODERS[cls]
    ins, extra = fn(f, family, lit)
    if lit.used:
        extra += 1
    return ins, extra


# ---- scalar ----------------------------------------------------------------------------------
def _salu(cls):
    def dec(f, family, lit):
        name = opcode_name(family, cls, f["op"])
        if name is None:
            if cls != "sopk" and (f.get("ssrc0") == 255 or f.get("ssrc1") == 255):
                lit()
            return unknown(cls, f["op"]), 0
        if name in RAW_OPERANDS:
            return finish(name, [], {"raw": str(f.get("simm16", 0))}), int(name == "s_setreg_imm32_b32")
        kind, dst, src = roles(name, family)
        if kind in ("barrier_signal",):
            return finish(name, [src_operand(f["ssrc0"], "i32", lit)], {}), 0
        dst_f = [f["sdst"]] if cls in ("sop1", "sop2", "sopk") else []
        src_f = {"sop1": ["ssrc0"], "sop2": ["ssrc0", "ssrc1"], "sopc": ["ssrc0", "ssrc1"], "sopk": ["simm16"]}[cls]
        if name in ("s_fmamk_f32", "s_fmamk_f16"):
            src_f = ["ssrc0", "K", "ssrc1"]
        elif name in ("s_fmaak_f32", "s_fmaak_f16"):
            src_f = ["ssrc0", "ssrc1", "K"]
        ops = []
        dtags = [t for t in dst if t.islower()]
        stags = [t for t in src if t.islower()]
        if cls == "sopk" and not dtags:
            stags_fields = [("sdst", stags[0])] + list(zip(src_f, stags[1:]))
        else:
            for t, code in zip(dtags, dst_f):
                ops.append(O.sreg(code, max(1, width(t) // 32)))
            stags_fields = list(zip(src_f, stags))
        for field, t in stags_fields:
            if field == "simm16":
                ops.append(O.integer(f["simm16"]))
            elif field == "sdst":
                ops.append(O.sreg(f["sdst"], max(1, width(t) // 32)))
            elif field == "K":
                ops.append(O.integer(lit()))
            else:
                ops.append(src_operand(f[field], t, lit))
        return finish(name, ops, {}), 0
    return dec


def _sopp(f, family, lit):
    name = opcode_name(family, "sopp", f["op"])
    if name is None:
        return unknown("sopp", f["op"]), 0
    kind, _, src = roles(name, family)
    simm = f["simm16"]
    if kind == "branch":
        target = f["_pc"] + 4 + 4 * F.sext(simm, 16)
        return finish(name, [O.label(target)], {}), 0
    if kind == "barrier_wait":
        return finish(name, [O.integer(F.sext(simm, 16))], {}), 0
    if name in RAW_OPERANDS:
        return finish(name, [], {"raw": str(simm)}), 0
    return finish(name, [], {}), 0


def _smem(f, family, lit):
    name = opcode_name(family, "smem", f["op"])
    if name is None:
        return unknown("smem", f["op"]), 0
    if name not in MEM:
        return finish(name, [], {}), 0
    n = MEM[name]
    ops = [O.sreg(f["sdata"], max(1, n // 4)), O.sreg(2 * f["sbase"], 4 if "buffer" in name else 2)]
    off = F.sext(f["offset"], 21 if family == "gfx11" else 24)
    mods = {}
    if f["soffset"] == 124:
        ops.append(O.integer(off))
    else:
        ops.append(O.sreg(f["soffset"]))
        if off:
            mods["offset"] = off
    return finish(name, ops, mods), 0


# ---- memory: DS, FLAT/GLOBAL/SCRATCH ------------------------------------------------------------
def _ds(f, family, lit):
    name = opcode_name(family, "ds", f["op"])
    if name is None:
        return unknown("ds", f["op"]), 0
    from .roles import ds_operands
    ops, mods = ds_operands(name, f, family)
    return finish(name, ops, mods), 0


def _flat_common(name, family, vdst, vaddr, vdata, saddr, sve, offset, seg, cache: dict, ret: bool = False):
    from .roles import flat_operands
    if roles(name, family)[0] == "nop":          # global_inv / global_wb: cache controls only
        return finish(name, [], {k: v for k, v in cache.items() if k == "scope"})
    ops, mods = flat_operands(name, family, vdst, vaddr, vdata, saddr, sve, seg)
    if ret and "atomic" in name:
        ops.insert(0, O.vreg(vdst))
    if offset:
        mods["offset"] = offset
    mods.update(cache)
    return finish(name, ops, mods)


_SEG = {0: "flat", 1: "scratch", 2: "global"}


def _flat(f, family, lit):
    seg = _SEG.get(f["seg"], "flat")
    name = opcode_name(family, seg, f["op"])
    if name is None:
        return unknown(seg, f["op"]), 0
    cache = {k: True for k in ("glc", "slc", "dlc") if f[k]}
    return _flat_common(name, family, f["vdst"], f["addr"], f["data"], f["saddr"], f["sve"],
                        F.sext(f["offset"], 13), seg, cache, ret=bool(f["glc"])), 0


_TH_LOAD = ("TH_LOAD_RT", "TH_LOAD_NT", "TH_LOAD_HT", "TH_LOAD_BYPASS", "TH_LOAD_LU", "TH_LOAD_RT_NT",
            "TH_LOAD_NT_HT", "TH_LOAD_RT_WB")
_TH_STORE = ("TH_STORE_RT", "TH_STORE_NT", "TH_STORE_HT", "TH_STORE_BYPASS", "TH_STORE_LU", "TH_STORE_RT_NT",
             "TH_STORE_NT_HT", "TH_STORE_RT_WB")
_SCOPE = ("SCOPE_CU", "SCOPE_SE", "SCOPE_DEV", "SCOPE_SYS")


def _vflat(f, family, lit):
    seg = _SEG.get(f["seg"], "flat")
    name = opcode_name(family, seg, f["op"])
    if name is None:
        return unknown(seg, f["op"]), 0
    cache = {}
    if "atomic" in name:
        if f["th"] & 1:
            cache["th"] = "TH_ATOMIC_RETURN"
    elif f["th"]:
        cache["th"] = (_TH_STORE if "store" in name else _TH_LOAD)[f["th"]]
    if f["scope"]:
        cache["scope"] = _SCOPE[f["scope"]]
    return _flat_common(name, family, f["vdst"], f["vaddr"], f["vsrc"], f["saddr"], f["sve"],
                        F.sext(f["offset"], 24), seg, cache, ret=bool(f["th"] & 1) and "atomic" in name), 0


def _buffer(cls):
    def dec(f, family, lit):
        name = opcode_name(family, cls, f["op"])
        if name is None:
            return unknown(cls, f["op"]), 0
        return finish(name, [], {}), 0     # only the cache controls (buffer_gl*_inv) are modelled
    return dec



_DECODERS = {
    "sop1": _salu("sop1"), "sop2": _salu("sop2"), "sopc": _salu("sopc"), "sopk": _salu("sopk"), "sopp": _sopp,
    "smem": _smem, "ds": _ds, "flat": _flat, "vflat": _vflat, "mubuf": _buffer("mubuf"),
    "vbuffer": _buffer("vbuffer"), "vop1": vop1, "vop2": vop2, "vopc": vopc, "vop3": vop3, "vop3p": vop3p,
    "vopd": vopd,
}
