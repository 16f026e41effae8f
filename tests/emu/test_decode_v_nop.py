"""V_NOP: VOP1 opcode 0 on gfx11 and gfx12, the hazard filler LLVM's hazard recognizer inserts
(e.g. the FlyDSL provider's LLVM with the iterative-ilp scheduler on gfx1201). Decoded from machine
code, it runs as a no-op; an opcode the tables do not list still faults when executed.

Encodings: llvm/test/MC/Disassembler/AMDGPU/gfx11_dasm_vop1.txt and gfx12_dasm_vop1.txt,
`0x00,0x00,0x00,0x7e` -> `v_nop`. LLVM emits that VOP1 form (llvm/lib/Target/AMDGPU/
GCNHazardRecognizer.cpp and SIInsertWaitcnts.cpp build AMDGPU::V_NOP_e32); the VOP3 form, VOP1
opcode + 384 (RDNA3 ISA guide §15.3.4: VOP3 opcodes 384-511 are the VOP1 opcodes), i.e. dword
0xd5800000, comes only from hand-written `v_nop_e64` and decodes through the same table row."""
from __future__ import annotations

import numpy as np
import pytest
from emu_helpers import lanes_kernel

from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.codeobj import decode
from wmma_gen.errors import EmulatorFault

V_NOP = bytes([0x00, 0x00, 0x00, 0x7E])
V_NOP_E64 = (0xD5800000).to_bytes(4, "little") + bytes(4)
# VOP1 opcode 9 (v_mov_fed_b32 in older families) is listed by neither family's table here
UNLISTED_VOP1 = ((0x3F << 25) | (9 << 9)).to_bytes(4, "little")
S_ENDPGM = {"gfx11": (0xBFB00000).to_bytes(4, "little"), "gfx12": (0xBFB00000).to_bytes(4, "little")}


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_v_nop_decodes_in_both_encodings(family):
    instrs, _ = decode(V_NOP + V_NOP_E64 + S_ENDPGM[family], family)
    assert [(i.text, i.fmt, i.pc) for i in instrs] == [
        ("v_nop", "vop1", 0), ("v_nop_e64", "vop3", 4), ("s_endpgm", "sopp", 12)]
    assert instrs[0].encoding == V_NOP.hex() and instrs[1].encoding == V_NOP_E64.hex()


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_unlisted_vop1_opcode_still_decodes_to_a_named_placeholder(family):
    instrs, _ = decode(UNLISTED_VOP1 + S_ENDPGM[family], family)
    assert instrs[0].mnemonic == "<vop1 opcode 9>" and instrs[1].mnemonic == "s_endpgm"


def _program_with_decoded(arch: str, code: bytes) -> Program:
    """The lanes kernel (v20 = v10 + 1, stored) with its `s_nop 0` marker replaced by the
    instruction decoded from `code`: the decoder's Instr, not the assembly parser's, runs."""
    body = "\tv_add_nc_u32_e32 v20, 1, v10\n\ts_nop 0\n\tv_mov_b32_e32 v21, v20"
    text = lanes_kernel(body, 1, 2).replace("--gfx1100", f"--{arch}")
    if arch.startswith("gfx12"):
        text = text.replace("s_waitcnt lgkmcnt(0)", "s_wait_kmcnt 0x0").replace("s_waitcnt vmcnt(0)",
                                                                                 "s_wait_loadcnt 0x0")
    prog = Program.from_isa(text)
    at = [i for i, ins in enumerate(prog.instrs) if ins.mnemonic == "s_nop"]
    assert len(at) == 1
    decoded, _ = decode(code, "gfx12" if arch.startswith("gfx12") else "gfx11")
    prog.instrs[at[0]] = decoded[0]
    return prog


def _run(prog: Program, x: np.ndarray) -> np.ndarray:
    mem = GlobalMemory()
    src, dst = mem.alloc(4 * 32), mem.alloc(4 * 64)
    mem.write(src, x)
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(dst, 4 * 64), np.uint32).reshape(2, 32)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("code", [V_NOP, V_NOP_E64], ids=["e32", "e64"])
def test_v_nop_runs_as_a_no_op(arch, code):
    x = np.random.default_rng(7).integers(0, 2**32 - 1, 32, dtype=np.uint32)
    out = _run(_program_with_decoded(arch, code), x)
    want = x + np.uint32(1)
    np.testing.assert_array_equal(out[0], want)
    np.testing.assert_array_equal(out[1], want)      # registers written before the nop read back intact


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_unlisted_vop1_opcode_faults_when_executed(arch):
    prog = _program_with_decoded(arch, UNLISTED_VOP1)
    with pytest.raises(EmulatorFault, match=r"<vop1 opcode 9>"):
        _run(prog, np.zeros(32, np.uint32))
