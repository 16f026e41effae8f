"""Two instructions LLVM 24 (the FlyDSL provider) puts in the attention kernels, run from their
machine code and from their listing text, against numpy:

- `v_fma_mixlo_f16 vD, vA, vB, neg(0)`: an f32 multiply rounded to f16 written as an fma whose
  addend is the constant 0 with the src2 neg bit (NEG field, VOP3P bits 63:61; RDNA3 ISA guide
  §15.3 VOP3P format and §16 V_FMA_MIXLO_F16, neg_lo negates source k; RDNA4 the same). fma(a, b, -0)
  keeps the sign of a zero product, fma(a, b, +0) does not: the listing once printed `-0`, which
  reads back as the constant +0 (LLVM prints `neg(0)`, AMDGPUInstPrinter::printOperandAndFPInputMods).
- gfx12 `v_dual_mul_f32 vX, vA, vC :: v_dual_mul_f32 vY, vB, vC`: both halves read the same VGPR
  in the src1 slot, which gfx12 allows (llvm/llvm-project#196198 "The hardware allows this"; RDNA3
  needs different banks there, RDNA3 ISA guide §7.6 "Dual Issue VALU").

Encodings checked with `llvm-mc -disassemble` of Debian llvm-22 (-mcpu=gfx1100 / gfx1201), which
prints exactly the texts below."""
from __future__ import annotations

import numpy as np
import pytest
from emu_helpers import as_f32, f32, lanes_kernel

from wmma_gen.codeobj import decode
from wmma_gen.codeobj.listing import _text
from wmma_gen.emu import GlobalMemory, Program, run_kernel

MIXLO_NEG0 = ("14 00 21 cc 0a 17 02 82", "v_fma_mixlo_f16 v20, v10, v11, neg(0)")
DUAL_MUL_SAME_SRC1 = ("0a 19 c6 c8 0b 19 14 14", "v_dual_mul_f32 v20, v10, v12 :: v_dual_mul_f32 v21, v11, v12")
MARK = "\ts_nop 0"


def _family(arch: str) -> str:
    return "gfx12" if arch.startswith("gfx12") else "gfx11"


def _kernel_text(arch: str, body: str, n_in: int, n_out: int) -> str:
    text = lanes_kernel(body, n_in, n_out).replace("--gfx1100", f"--{arch}")
    if arch.startswith("gfx12"):    # gfx12 split the s_waitcnt counters (RDNA4 ISA guide, S_WAIT_*CNT)
        text = text.replace("s_waitcnt lgkmcnt(0)", "s_wait_kmcnt 0x0").replace("s_waitcnt vmcnt(0)",
                                                                                 "s_wait_loadcnt 0x0")
    return text


def _programs(arch: str, prologue: str, encoding: str, n_in: int, n_out: int):
    """(the kernel with the decoder's Instr for `encoding`, the kernel with its listing text)."""
    (ins,), _ = decode(bytes.fromhex(encoding.replace(" ", "")), _family(arch))
    from_code = Program.from_isa(_kernel_text(arch, prologue + "\n" + MARK, n_in, n_out))
    (at,) = [i for i, x in enumerate(from_code.instrs) if x.mnemonic == "s_nop"]
    from_code.instrs[at] = ins
    from_text = Program.from_isa(_kernel_text(arch, prologue + "\n\t" + _text(ins, _family(arch)), n_in, n_out))
    return ins, from_code, from_text


def _run(prog: Program, inputs: list[np.ndarray], n_out: int) -> np.ndarray:
    mem = GlobalMemory()
    src, dst = mem.alloc(4 * 32 * len(inputs)), mem.alloc(4 * 32 * n_out)
    mem.write(src, np.concatenate(inputs))
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(dst, 4 * 32 * n_out), np.uint32).reshape(n_out, 32)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_mixlo_with_negated_zero_addend_keeps_the_sign_of_zero_products(arch):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(32).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    a[:4], b[:4] = 0.0, np.float32([-1.0, 1.0, -3.0, 2.0])       # products -0, +0, -0, +0
    keep = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    ins, from_code, from_text = _programs(arch, "\tv_mov_b32_e32 v20, v12", MIXLO_NEG0[0], 3, 1)
    assert _text(ins, _family(arch)) == MIXLO_NEG0[1] and ins.mods["neg_lo"] == (0, 0, 1)
    # exact f64 product (24+24 bits) + (-0), rounded to f32 and then to f16 (two roundings:
    # vop3p.fma_mix_f16); the high half is kept
    want_lo = (a.astype(np.float64) * b + -0.0).astype(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
    want = (keep & np.uint32(0xFFFF0000)) | want_lo
    for prog in (from_code, from_text):
        (out,) = _run(prog, [f32(a), f32(b), keep], 1)
        np.testing.assert_array_equal(out, want)
    assert list(want_lo[:4]) == [0x8000, 0, 0x8000, 0]        # the inputs do exercise the sign


def test_gfx12_vopd_halves_may_read_the_same_src1_vgpr():
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    ins, from_code, from_text = _programs("gfx1201", "", DUAL_MUL_SAME_SRC1[0], 3, 2)
    assert ins.text == DUAL_MUL_SAME_SRC1[1]
    x, y = ins, ins.pair
    assert x.operands[2].index == y.operands[2].index == 12 and y.operands[0].index == 21
    for prog in (from_code, from_text):
        px, py = _run(prog, [f32(a), f32(b), f32(c)], 2)
        np.testing.assert_array_equal(as_f32(px), a * c)
        np.testing.assert_array_equal(as_f32(py), b * c)
