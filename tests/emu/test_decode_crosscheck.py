"""Compare a decoded instruction (machine code) with the parsed ISA text of the same compile.

`canonical(ins, labels, family)` removes what differs only in spelling: the true16 `.l` half
suffix (LLVM's fake16 printing has none), defaults LLVM omits from the text (VOP3P op_sel /
op_sel_hi / neg, DPP row/bank masks), cache-policy modifiers (glc/slc/dlc, th/scope: no effect
on one coherent memory, except an atomic's return flag), branch labels (compared as the
instruction index they name) and timing-hint operands (s_waitcnt, s_delay_alu, ...)."""
from __future__ import annotations

from wmma_gen.codeobj.instr import RAW_OPERANDS
from wmma_gen.codeobj.roles import roles
from wmma_gen.emu.isa.ds import DS
from wmma_gen.emu.run.bind_ds import swizzle_pattern

_CACHE = {"glc", "slc", "dlc", "nt", "sc0", "sc1", "scope", "th"}


def _operand(op, labels):
    value = op.value
    if op.kind == "label":
        value = labels.get(op.value, op.value)
    elif op.kind == "int":
        value = int(value) & 0xFFFFFFFF
    half = None if op.half == "l" else op.half
    return (op.kind, op.index, op.count, half, value, op.neg, op.abs)


def canonical(ins, labels, family):
    if ins.pair is not None:
        from dataclasses import replace
        return ("vopd", canonical(replace(ins, pair=None), labels, family), canonical(ins.pair, labels, family))
    name = ins.mnemonic
    kind = roles(_base(name), family)[0]
    ops = [list(_operand(o, labels)) for o in ins.operands]
    mods = dict(ins.mods)
    if name in RAW_OPERANDS:
        raw = mods.get("raw", "")
        mods = {"raw": int(raw, 0)} if name == "s_denorm_mode" else {}
    for k in list(mods):
        if k in _CACHE and not (k == "th" and "RETURN" in str(mods[k])) and not (k == "glc" and "atomic" in name):
            del mods[k]
    if "th" in mods or "glc" in mods:          # an atomic that returns the old value
        mods.pop("th", None)
        mods.pop("glc", None)
        mods["return"] = True
    if kind in ("vop3p", "mix") or (kind in ("valu",) and _is_vop3p(name)):
        n = len(ins.operands) - 1
        for key, dflt in (("op_sel", 0), ("op_sel_hi", 0 if kind == "mix" else 1), ("neg_lo", 0), ("neg_hi", 0)):
            mods[key] = tuple(mods.get(key, (dflt,) * n))[:n]
        if kind == "mix":            # LLVM prints mix neg/abs on the operands: fold into neg_lo / neg_hi
            nl, nh = list(mods["neg_lo"]), list(mods["neg_hi"])
            for k, o in enumerate(ops[1:]):
                nl[k] |= o[5]
                nh[k] |= o[6]
                o[5] = o[6] = False
            mods["neg_lo"], mods["neg_hi"] = tuple(nl), tuple(nh)
        if kind == "valu":
            for key in ("op_sel", "op_sel_hi", "neg_lo", "neg_hi"):
                mods.pop(key)
    if kind == "wmma":
        for key in ("op_sel", "neg_lo", "neg_hi"):
            mods[key] = tuple(mods.get(key, (0, 0, 0)))
        mods.pop("op_sel_hi", None)
    if "_dpp" in name or "dpp8" in mods:
        if "dpp8" not in mods:
            mods.setdefault("row_mask", 0xF)
            mods.setdefault("bank_mask", 0xF)
        if "bound_ctrl" in mods:
            mods["bound_ctrl"] = 1
        if not mods.get("fi", 0):
            mods.pop("fi", None)
    if _base(name) in DS and DS[_base(name)].kind == "ds_swizzle":
        mods["offset"] = swizzle_pattern(mods.get("offset", 0))
    for key in ("offset", "offset0", "offset1"):
        if mods.get(key, None) == 0:
            del mods[key]
    return (name, tuple(tuple(o) for o in ops), tuple(sorted((k, str(v)) for k, v in mods.items())))


def _base(name: str) -> str:
    for suf in ("_e64_dpp", "_e32", "_e64", "_dpp"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


def _is_vop3p(name: str) -> bool:
    return name.startswith(("v_dot", "v_pk_", "v_fma_mix"))


def compare_programs(text_prog, mc_prog, family):
    """[(index, text, decoded)] of the instructions that differ (empty = identical)."""
    bad = []
    if len(text_prog.instrs) != len(mc_prog.instrs):
        bad.append((-1, f"{len(text_prog.instrs)} instructions", f"{len(mc_prog.instrs)} instructions"))
    for i, (a, b) in enumerate(zip(text_prog.instrs, mc_prog.instrs)):
        if canonical(a, text_prog.labels, family) != canonical(b, mc_prog.labels, family):
            bad.append((i, a.text, b.text))
    return bad


# ---- the cross-check over compiled kernels ---------------------------------------------------
import functools  # noqa: E402

import pytest  # noqa: E402

from wmma_gen.emu import Program  # noqa: E402
from wmma_gen.emu.isa.table import family as family_of  # noqa: E402

GEMMS = [("gfx1100", d) for d in ("f16", "bf16", "i8", "i4")] + [("gfx1151", d) for d in ("f16", "i8")] + \
        [("gfx1201", d) for d in ("f16", "bf16", "i8", "i4")]
ATTENTION = [("gfx1100", "fwd"), ("gfx1201", "fwd"), ("gfx1151", "fwd"), ("gfx1100", "dkdv"), ("gfx1100", "dq"),
             ("gfx1201", "dkdv"), ("gfx1201", "dq"), ("gfx1100", "prepass")]


@functools.lru_cache(maxsize=None)
def compiled(kind: str, arch: str, what: str):
    """(CompiledKernel) of a representative kernel: a GEMM of dtype `what`, or attention."""
    from wmma_gen.compiler import compile_mlir
    from wmma_gen.targets import get_target
    if kind == "gemm":
        from wmma_gen.ops.gemm.build import compile_gemm
        from wmma_gen.ops.gemm.directive import GemmDirective
        from wmma_gen.ops.gemm.problem import GemmProblem
        from wmma_gen.ops.gemm.schedule import Schedule
        # through the set's MLIR: a compile-index hit carries no MLIR text (ops/compile_op.py)
        k = compile_gemm(GemmDirective(what), Schedule(), arch, GemmProblem(128, 128, 128))
        return compile_mlir(k.source.mlir, arch, cache=False)   # this process's codegen (see _check)
    if what == "fwd":
        from wmma_gen.attention_common.directive import AttentionDirective
        from wmma_gen.ops.attention.kernel import build_attention
        from wmma_gen.ops.attention.schedule import AttentionSchedule
        return compile_mlir(build_attention(AttentionDirective("f16", 64), AttentionSchedule(),
                                            get_target(arch)).mlir, arch, cache=False)
    from wmma_gen.ops.attention_bwd.defaults import default_schedule
    from wmma_gen.ops.attention_bwd.build import build_backward, make_spec
    kernels = dict(build_backward(make_spec(arch, "f16", 64), default_schedule(arch, 64)).items())
    return compile_mlir(kernels[what].mlir, arch, cache=False)


def _unordered(text_prog, mc_prog, family) -> list:
    """The instructions whose canonical form (branch targets left out) is in one program more
    often than in the other: what differs once the order is set aside."""
    from collections import Counter

    def forms(prog):
        return Counter(repr(canonical(i, {}, family)) if i.mnemonic not in BRANCHES else i.mnemonic
                       for i in prog.instrs)
    a, b = forms(text_prog), forms(mc_prog)
    return sorted((a - b).elements())[:10] + sorted((b - a).elements())[:10]


BRANCHES = {"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz", "s_cbranch_execz",
            "s_cbranch_execnz"}


def _check(ck):
    """ck's code object decodes as LLVM's ISA text of the same module. The text is a second
    codegen (test-only; ck.isa is decoded), and LLVM 24's scheduling is not deterministic between
    codegens (docs/mlir_providers.md; issue 37 saw 62 instructions reordered between a cached
    object and a new compile): so `compiled` compiles fresh, both codegens run in this process
    from one lowered module, and if the order still differs the check is on what is stable --
    every decoded instruction, as a multiset, equals the text's (branch targets aside)."""
    from wmma_gen.compiler import llvm_isa, lower
    text = Program.from_isa(llvm_isa(lower(ck.mlir, ck.arch), ck.arch), ck.name)
    mc = Program.from_code_object(ck.hsaco, ck.name)
    assert mc.arch == ck.arch and mc.source == "hsaco"
    bad = compare_programs(text, mc, family_of(mc.arch))
    if bad:
        diff = _unordered(text, mc, family_of(mc.arch))
        shown = "\n".join(f"  #{i}: text '{a}' | decoded '{b}'" for i, a, b in bad[:10])
        assert not diff and len(text.instrs) == len(mc.instrs), (
            f"{ck.name} ({ck.arch}): {len(bad)} instructions differ in place, and as a multiset:\n"
            + "\n".join(f"  {d}" for d in diff) + f"\n{shown}")
    # the binary kernel descriptor says what the .amdhsa_* directives of the text say
    for key, value in text.descriptor.items():
        if key in mc.descriptor and key != "next_free_vgpr":
            assert mc.descriptor[key] == value, (key, mc.descriptor[key], value)
    assert mc.next_free_vgpr >= text.next_free_vgpr
    assert mc.metadata[".name"] == ck.name and mc.kernarg_size == text.kernarg_size


@pytest.mark.parametrize("arch,dtype", GEMMS)
def test_gemm_decodes_like_its_isa_text(arch, dtype):
    _check(compiled("gemm", arch, dtype))


@pytest.mark.parametrize("arch,which", ATTENTION)
def test_attention_decodes_like_its_isa_text(arch, which):
    _check(compiled("attention", arch, which))
