"""The assembly listing of a code object, decoded from its machine code (stage `isa`).

The compiler's one artifact is the hsaco; its ISA text is derived from those bytes, so the
model's loop analysis (model/isa_loop.py), `wmma-gen compile --out`'s kernel.s and any test
reading `CompiledKernel.isa` see exactly the instructions the emulator (and a GPU) runs.
LLVM's own text would need a second code generation: `gpu-module-to-binary{format=bin}`
prints the module to assembly and assembles it internally without returning the text
(mlir/lib/Target/LLVM/ROCDL/Target.cpp, AMDGPUSerializer::moduleToObject).

Layout of the listing, close to what LLVM prints (llvm/docs/AMDGPUUsage.rst "AMDHSA Kernel
Assembler Directives", "Code Object V3+ Metadata"):

    .amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
    .text
    NAME:                       one line per instruction; `; <byte offset>: <encoding>` comment
    .Lpc_<offset>:              a label at every branch target (the decoder's names)
    .Lfunc_end0:
    .fill N, 4, WORD            the code padding after the function, as the object holds it
                                (LLVM's s_code_end words: instruction prefetch stays in code)
    .amdhsa_kernel NAME ...     the 64-byte kernel descriptor as the `.amdhsa_*` assembler
                                directives that set its fields (AMDGPUUsage "AMDHSA Kernel
                                Assembler Directives"), its raw words in a comment
    .amdgpu_metadata ...        the NT_AMDGPU_METADATA note, as YAML

Alignment padding LLVM writes as `.p2align` shows up as the `s_nop 0` words it assembles to.
The listing is LLVM assembly for the whole code object: tests/compile/test_listing.py
assembles it with llvm-mc, links it with ld.lld and gets the same instructions, padding,
kernel descriptor (all but the entry offset the linker places) and metadata back -- so a
kernel.s from `wmma-gen compile --out` can be edited and rebuilt.
"""
from __future__ import annotations

import struct

from ..errors import CompileError
from ..targets import get_target
from .codeobject import CodeObjectError, load_code_object
from .descriptor import decode_descriptor
from .family import Family
from .machine import decode
from .operands import modified_text

# s_waitcnt SIMM16 on gfx11: vmcnt [15:10], lgkmcnt [9:4], expcnt [2:0] (RDNA3 ISA guide,
# SOPP S_WAITCNT; LLVM AMDGPUBaseInfo getVmcntBitShiftLo/getLgkmcntBitShift for GFX11).
# LLVM prints the counters that are below their maximum (all three if none is).
_WAITCNT11 = (("vmcnt", 10, 0x3F), ("expcnt", 0, 0x7), ("lgkmcnt", 4, 0x3F))


def waitcnt_text(simm16: int) -> str:
    """`s_waitcnt vmcnt(0) lgkmcnt(0)` for a gfx11 s_waitcnt immediate (LLVM's spelling)."""
    fields = [(name, (simm16 >> lo) & mask, mask) for name, lo, mask in _WAITCNT11]
    shown = [f"{n}({v})" for n, v, mask in fields if v != mask] or [f"{n}({v})" for n, v, _ in fields]
    return "s_waitcnt " + " ".join(shown)


def mix_text(ins) -> str:
    """v_fma_mix*: LLVM writes the per-source neg / abs bits (neg_lo / neg_hi in the encoding)
    as operand modifiers `-x` / `|x|` (`neg(c)` for a constant); it does not accept neg_lo:/neg_hi: on these opcodes
    (AMDGPUModifierSyntax.rst, "VOP3P MAD_MIX modifiers"), and omits all-zero op_sel(_hi)."""
    neg, absolute = ins.mods.get("neg_lo", ()), ins.mods.get("neg_hi", ())
    ops = [ins.operands[0].text]
    for k, o in enumerate(ins.operands[1:]):
        ops.append(modified_text(o, k < len(neg) and bool(neg[k]), k < len(absolute) and bool(absolute[k])))
    mods = []
    for key, v in ins.mods.items():
        if key in ("neg_lo", "neg_hi") or (key in ("op_sel", "op_sel_hi") and not any(v)):
            continue
        mods.append(f"{key}:[{','.join(str(x) for x in v)}]" if isinstance(v, tuple) else
                    (key if v is True else f"{key}:{v}"))
    return " ".join([ins.mnemonic, ", ".join(ops), *mods])


def _text(ins, family: str) -> str:
    if family == "gfx11" and ins.mnemonic == "s_waitcnt" and "raw" in ins.mods:
        return waitcnt_text(int(ins.mods["raw"], 0))
    if ins.mnemonic.startswith("v_fma_mix") and ("neg_lo" in ins.mods or "neg_hi" in ins.mods):
        return mix_text(ins)
    return ins.text


def listing(hsaco: bytes) -> str:
    """The listing of every kernel in `hsaco` (one kernel for wmma_gen's own objects)."""
    import yaml

    try:
        co = load_code_object(hsaco)
    except CodeObjectError as e:       # the linker handed back something that is not a code object
        raise CompileError("the linked code object cannot be read", diagnostics=str(e)) from None
    t = get_target(co.arch)            # unknown arch -> error listing the known ones
    family = Family(t.encoding, t.family)   # encoding family: gfx11 for gfx1170, whose WMMA is gfx12's
    feats = "".join(f":{k}{'+' if v else '-'}" for k, v in sorted(co.features.items()))
    out = ["; decoded from the code object's machine code (wmma_gen.codeobj.listing); rebuild with",
           f"; llvm-mc -triple=amdgcn-amd-amdhsa -mcpu={co.arch} -filetype=obj kernel.s -o kernel.o && "
           "ld.lld -shared kernel.o -o kernel.hsaco",
           f'\t.amdgcn_target "amdgcn-amd-amdhsa--{co.arch}{feats}"', "\t.text"]
    for n, (name, k) in enumerate(sorted(co.kernels.items(), key=lambda nk: nk[1].code_address)):  # as laid out
        instrs, labels = decode(k.code, family, name, k.code_address)
        at = {}
        for label, index in labels.items():
            at.setdefault(index, []).append(label)
        out += ["\t.p2align 8", f"\t.globl\t{name}", f"\t.type\t{name},@function", f"{name}:"]
        for i, ins in enumerate(instrs):
            out += [f"{label}:" for label in sorted(at.get(i, ()))]
            out.append(f"\t{_text(ins, family):<56s} ; {ins.pc:#06x}: {ins.encoding}")
        out += [f"{label}:" for label in sorted(at.get(len(instrs), ()))]
        out += [f".Lfunc_end{n}:", f"\t.size\t{name}, .Lfunc_end{n}-{name}"]
        out += _fill(k.tail)
        words = struct.unpack_from("<III", k.descriptor, 44)
        out += ["\t.rodata", "\t.p2align 6", f"\t.amdhsa_kernel {name}",
                f"\t\t; as read: compute_pgm_rsrc1 {words[1]:#010x}, compute_pgm_rsrc2 {words[2]:#010x}, "
                f"compute_pgm_rsrc3 {words[0]:#010x}"]
        out += [f"\t\t.amdhsa_{key} {value}" for key, value in directives(k.descriptor, family, k.metadata)]
        out += ["\t.end_amdhsa_kernel", "\t.text"]
    out += ["\t.amdgpu_metadata", "---", yaml.safe_dump(_plain(co.metadata), sort_keys=True).rstrip(), "...",
            "\t.end_amdgpu_metadata", ""]
    return "\n".join(out)


def _fill(tail: bytes) -> list[str]:
    """`.fill` runs that assemble to exactly `tail` (4-byte words; a ragged end as .byte)."""
    out, n4 = [], len(tail) // 4 * 4
    words = struct.unpack_from(f"<{n4 // 4}I", tail) if n4 else ()
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and words[j] == words[i]:
            j += 1
        out.append(f"\t.fill {j - i}, 4, {words[i]:#010x}")
        i = j
    if len(tail) > n4:
        out.append("\t.byte " + ", ".join(f"{b:#04x}" for b in tail[n4:]))
    return out


# Descriptor bits that have an assembler directive beyond decode_descriptor's fields
# (llvm/docs/AMDGPUUsage.rst, tables "compute_pgm_rsrc1/2 for GFX6-GFX12" and "compute_pgm_rsrc3
# for GFX10-GFX12"): the FP exception enables of rsrc2, rsrc3's SHARED_VGPR_COUNT (GFX10-11) and
# INST_PREF_SIZE (GFX11: bits 9:4, GFX12: bits 11:4), GFX12's rsrc1 WG_RR_EN (bit 21).
_EXCEPTIONS = ("fp_ieee_invalid_op", "fp_denorm_src", "fp_ieee_div_zero", "fp_ieee_overflow",
               "fp_ieee_underflow", "fp_ieee_inexact", "int_div_zero")          # rsrc2 bits 24..30
# decode_descriptor fields that are no directive on GFX11/12: the raw words, the entry offset (the
# linker's), the trap handler and the GFX6-10 / GFX90A user SGPRs (rejected by the assembler)
_NOT_DIRECTIVES = {"compute_pgm_rsrc1", "compute_pgm_rsrc2", "compute_pgm_rsrc3", "kernel_code_entry_byte_offset",
                   "enable_trap_handler", "user_sgpr_private_segment_buffer", "user_sgpr_flat_scratch_init",
                   "user_sgpr_kernarg_preload_length", "user_sgpr_kernarg_preload_offset"}


def directives(descriptor: bytes, family: str, metadata: dict) -> list[tuple[str, int]]:
    """(name, value) of the `.amdhsa_*` directives that rebuild `descriptor` on GFX11/GFX12.
    next_free_sgpr is the metadata's .sgpr_count: GFX10+ descriptors hold no SGPR count."""
    d = decode_descriptor(descriptor, family)
    rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", descriptor, 44)
    out = [(k, v) for k, v in d.items() if k not in _NOT_DIRECTIVES]
    out += [("next_free_sgpr", int(metadata.get(".sgpr_count", 0))), ("reserve_vcc", 0)]
    if family == "gfx12":
        out += [("round_robin_scheduling", (rsrc1 >> 21) & 1), ("inst_pref_size", (rsrc3 >> 4) & 0xFF)]
    else:
        out += [("shared_vgpr_count", rsrc3 & 0xF), ("inst_pref_size", (rsrc3 >> 4) & 0x3F)]
    out += [(f"exception_{name}", (rsrc2 >> (24 + i)) & 1) for i, name in enumerate(_EXCEPTIONS)]
    return out


def _plain(doc):
    """The msgpack document with tuples and bytes made YAML-safe."""
    if isinstance(doc, dict):
        return {str(k): _plain(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_plain(v) for v in doc]
    if isinstance(doc, bytes):
        return doc.hex()
    return doc
