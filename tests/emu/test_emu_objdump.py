"""The emulator executes the ISA text of a compilation; this proves that text is the
machine code in the hsaco: llvm-objdump's disassembly of the hsaco's .text lists the
same instructions, operands and branch targets in the same order.

Needs an llvm-objdump that decodes every gfx1100 instruction LLVM emits (Debian package
llvm-22 on bookworm; older ones print `.long` for some VOP3 encodings). Skipped with the
reason when none is found.
"""
from __future__ import annotations

import glob
import re
import shutil
import subprocess

import kernels_mlir as K
import pytest
from mlir_helper import wrap

from wmma_gen.emu import Program

MCPU = "gfx1100"


def _candidates() -> list[str]:
    found = sorted(glob.glob("/usr/lib/llvm-*/bin/llvm-objdump"),
                   key=lambda p: -int(re.search(r"llvm-(\d+)", p).group(1)))
    found += [p for p in (shutil.which(f"llvm-objdump-{v}") for v in range(30, 13, -1)) if p]
    if shutil.which("llvm-objdump"):
        found.append(shutil.which("llvm-objdump"))
    return list(dict.fromkeys(found))


def _disassemble(objdump: str, hsaco: bytes, tmp_path) -> list[tuple[int, str]]:
    path = tmp_path / "k.hsaco"
    path.write_bytes(hsaco)
    out = subprocess.run([objdump, "-d", f"--mcpu={MCPU}", str(path)], capture_output=True, text=True,
                         timeout=60)
    rows = []
    for line in out.stdout.splitlines():
        m = re.match(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):", line)
        if m:
            rows.append((int(m.group(2), 16), m.group(1).strip()))
    return rows


def _compiled(src: str):
    from wmma_gen.compiler import compile_mlir
    return compile_mlir(wrap(src), MCPU)


@pytest.fixture(scope="module")
def objdump(tmp_path_factory):
    try:
        probe = _compiled(K.DIVERGE)
    except Exception as e:  # noqa: BLE001 - the reason is reported in the skip message
        pytest.skip(f"cannot build an hsaco here ({type(e).__name__}: {e})")
    tmp = tmp_path_factory.mktemp("objdump")
    for exe in _candidates():
        rows = _disassemble(exe, probe.hsaco, tmp)
        if rows and not any(t.startswith((".long", "<unknown>", ".byte")) for _, t in rows):
            return exe
    pytest.skip(f"no llvm-objdump that decodes all {MCPU} instructions (tried {_candidates() or 'none'}); "
                "install the Debian package llvm-22")


def _norm(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    # SMEM: the disassembler prints an absent soffset (SGPR_NULL) as `null` and omits a zero
    # immediate; the assembly printer writes the zero immediate. Same encoding.
    text = re.sub(r"^(s_load_\S+ .*), null$", r"\1, 0x0", text)
    return re.sub(r"0x[0-9A-Fa-f]+", lambda m: hex(int(m.group(0), 16)), text)


def _gemm(dtype: str, lds: str):
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.ops.gemm.schedule import Schedule
    from wmma_gen.compiler import compile_mlir
    k = compile_gemm(GemmDirective(dtype), Schedule(lds=lds, buffers=2 if lds != "none" else 1), MCPU,
                     GemmProblem(64, 64, 64))
    return compile_mlir(k.source.mlir, MCPU)    # with its MLIR text: a compile-index hit carries none


@pytest.mark.parametrize("name", ["DIVERGE", "LDS_RING", "IDS", "gemm-f16-ab", "gemm-i8-none"])
def test_hsaco_disassembles_to_the_isa_text(objdump, tmp_path, name):
    k = _gemm(*name.split("-")[1:]) if name.startswith("gemm") else _compiled(getattr(K, name))
    from wmma_gen.compiler import llvm_isa, lower
    # LLVM's own text (a second, test-only codegen): k.isa is decoded from k.hsaco already
    prog = Program.from_isa(llvm_isa(lower(k.mlir, k.arch), k.arch), k.name)
    rows = _disassemble(objdump, k.hsaco, tmp_path)
    assert len(rows) >= len(prog.instrs)
    tail = [t for _, t in rows[len(prog.instrs):]]
    assert all(t.startswith(("s_code_end", "s_nop")) for t in tail), tail[:3]
    rows = rows[: len(prog.instrs)]
    index_of = {addr: i for i, (addr, _) in enumerate(rows)}
    for i, (ins, (addr, text)) in enumerate(zip(prog.instrs, rows)):
        if ins.operands and ins.operands[0].kind == "label":
            # SOPP branch: simm16 counts dwords from the next instruction (RDNA3 ISA §4.4)
            mnemonic, imm = text.split()[:2]
            simm = int(imm, 0) & 0xFFFF
            target = addr + 4 + 4 * (simm - 0x10000 if simm & 0x8000 else simm)
            assert mnemonic == ins.mnemonic
            assert index_of[target] == prog.labels[ins.operands[0].value], (i, ins.text, text)
            continue
        assert _norm(text) == _norm(ins.text), f"instruction #{i}: ISA '{ins.text}' vs hsaco '{text}'"
