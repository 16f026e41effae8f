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
    .amdhsa_kernel NAME ...     the 64-byte kernel descriptor, as `.amdhsa_*` fields
    .amdgpu_metadata ...        the NT_AMDGPU_METADATA note, as YAML

Alignment padding LLVM writes as `.p2align` shows up as the `s_nop 0` words it assembles to.
The instruction part is valid LLVM assembly: tests/compile/test_listing.py assembles it again
with llvm-mc and gets the same instructions back.
"""
from __future__ import annotations

from ..errors import CompileError
from ..targets import get_target

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
    as operand modifiers `-x` / `|x|`; it does not accept neg_lo:/neg_hi: on these opcodes
    (AMDGPUModifierSyntax.rst, "VOP3P MAD_MIX modifiers"), and omits all-zero op_sel(_hi)."""
    neg, absolute = ins.mods.get("neg_lo", ()), ins.mods.get("neg_hi", ())
    ops = []
    for k, o in enumerate(ins.operands):
        t = o.text
        if k and k - 1 < len(absolute) and absolute[k - 1]:
            t = f"|{t}|"
        if k and k - 1 < len(neg) and neg[k - 1]:
            t = f"-{t}"
        ops.append(t)
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

    from ..emu.decode import decode, decode_descriptor, load_code_object
    from ..emu.decode.codeobject import CodeObjectError
    try:
        co = load_code_object(hsaco)
    except CodeObjectError as e:       # the linker handed back something that is not a code object
        raise CompileError("the linked code object cannot be read", diagnostics=str(e)) from None
    family = get_target(co.arch).family
    feats = "".join(f":{k}{'+' if v else '-'}" for k, v in sorted(co.features.items()))
    out = ["; decoded from the code object's machine code (wmma_gen.compiler.listing); the .amdhsa_kernel",
           "; block lists the descriptor's fields as read, not a reassemblable directive set",
           f'\t.amdgcn_target "amdgcn-amd-amdhsa--{co.arch}{feats}"', "\t.text"]
    for n, (name, k) in enumerate(sorted(co.kernels.items())):
        instrs, labels = decode(k.code, family, name, k.code_address)
        at = {}
        for label, index in labels.items():
            at.setdefault(index, []).append(label)
        out += [f"\t.globl\t{name}", f"\t.type\t{name},@function", f"{name}:"]
        for i, ins in enumerate(instrs):
            out += [f"{label}:" for label in sorted(at.get(i, ()))]
            out.append(f"\t{_text(ins, family):<56s} ; {ins.pc:#06x}: {ins.encoding}")
        out += [f"{label}:" for label in sorted(at.get(len(instrs), ()))]
        out += [f".Lfunc_end{n}:", f"\t.size\t{name}, .Lfunc_end{n}-{name}"]
        out += ["\t.rodata", f"\t.amdhsa_kernel {name}"]
        out += [f"\t\t.amdhsa_{key} {value}" for key, value in decode_descriptor(k.descriptor, family).items()]
        out.append("\t.end_amdhsa_kernel")
    out += ["\t.amdgpu_metadata", "---", yaml.safe_dump(_plain(co.metadata), sort_keys=True).rstrip(), "...",
            "\t.end_amdgpu_metadata", ""]
    return "\n".join(out)


def _plain(doc):
    """The msgpack document with tuples and bytes made YAML-safe."""
    if isinstance(doc, dict):
        return {str(k): _plain(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_plain(v) for v in doc]
    if isinstance(doc, bytes):
        return doc.hex()
    return doc
