"""The packed 16-bit VALU ops (VOP3P opcodes 1-18) decode from machine code and run on the emulator.

The decode tables once listed only v_pk_mad_i16/u16 and v_pk_fma_f16 among them, so an
LLVM 24 (FlyDSL) backward kernel with `v_pk_lshlrev_b16` faulted as `<vop3p opcode 4>` although
the emulator had its semantics. Encodings: `llvm-mc-22 -show-encoding` of `<op> v20, v10, v11`
for -mcpu=gfx1100 and gfx1201 (opcode in bits 22:16 of the first dword; RDNA3 ISA guide §15.3.6
VOP3P opcodes; gfx12 moved v_pk_min/max_f16 to 27/28 as v_pk_min/max_num_f16, not listed here).
References: numpy on each 16-bit half (op_sel_hi 1,1: the high half reads the high halves)."""
from __future__ import annotations

import numpy as np
import pytest
from emu_helpers import lanes_kernel

from wmma_gen.codeobj import decode
from wmma_gen.emu import GlobalMemory, Program, run_kernel

u16, i16, f16 = np.uint16, np.int16, np.float16


OPS = {   # opcode -> (mnemonic, element type, reference)
    1: ("v_pk_mul_lo_u16", u16, lambda a, b: a * b),
    2: ("v_pk_add_i16", i16, lambda a, b: a + b),
    3: ("v_pk_sub_i16", i16, lambda a, b: a - b),
    4: ("v_pk_lshlrev_b16", u16, lambda a, b: b << (a & 15)),
    5: ("v_pk_lshrrev_b16", u16, lambda a, b: b >> (a & 15)),
    6: ("v_pk_ashrrev_i16", i16, lambda a, b: b >> (a.view(u16) & 15).astype(i16)),
    7: ("v_pk_max_i16", i16, np.maximum),
    8: ("v_pk_min_i16", i16, np.minimum),
    10: ("v_pk_add_u16", u16, lambda a, b: a + b),
    11: ("v_pk_sub_u16", u16, lambda a, b: a - b),
    12: ("v_pk_max_u16", u16, np.maximum),
    13: ("v_pk_min_u16", u16, np.minimum),
    15: ("v_pk_add_f16", f16, lambda a, b: a + b),
    16: ("v_pk_mul_f16", f16, lambda a, b: a * b),
}
GFX11_ONLY = {17: ("v_pk_min_f16", f16, np.minimum), 18: ("v_pk_max_f16", f16, np.maximum)}
CASES = [(arch, op) for arch in ("gfx1100", "gfx1201") for op in sorted(OPS)] + \
        [("gfx1100", op) for op in sorted(GFX11_ONLY)]


def _encoding(opcode: int) -> bytes:
    return bytes([0x14, 0x40, opcode, 0xCC, 0x0A, 0x17, 0x02, 0x18])   # <op> v20, v10, v11


SHIFT_BY_CONSTANT = bytes([0x14, 0x40, 0x04, 0xCC, 0x82, 0x16, 0x02, 0x18])   # v_pk_lshlrev_b16 v20, 2, v11


def _run(arch: str, code: bytes | int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    family = "gfx12" if arch.startswith("gfx12") else "gfx11"
    text = lanes_kernel("\ts_nop 0", 2, 1).replace("--gfx1100", f"--{arch}")
    if family == "gfx12":       # gfx12 split the s_waitcnt counters (RDNA4 ISA guide, S_WAIT_*CNT)
        text = text.replace("s_waitcnt lgkmcnt(0)", "s_wait_kmcnt 0x0").replace("s_waitcnt vmcnt(0)",
                                                                                 "s_wait_loadcnt 0x0")
    prog = Program.from_isa(text)
    (at,) = [i for i, x in enumerate(prog.instrs) if x.mnemonic == "s_nop"]
    (prog.instrs[at],), _ = decode(_encoding(code) if isinstance(code, int) else code, family)
    mem = GlobalMemory()
    src, dst = mem.alloc(4 * 64), mem.alloc(4 * 32)
    mem.write(src, np.concatenate([a.view(np.uint32), b.view(np.uint32)]))
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(dst, 4 * 32), np.uint32).copy()


@pytest.mark.parametrize("arch,opcode", CASES, ids=[f"{a}-{(OPS | GFX11_ONLY)[o][0]}" for a, o in CASES])
def test_packed_op_runs_from_machine_code(arch, opcode):
    name, kind, ref = (OPS | GFX11_ONLY)[opcode]
    family = "gfx12" if arch.startswith("gfx12") else "gfx11"
    (ins,), _ = decode(_encoding(opcode), family)
    assert ins.mnemonic == name
    rng = np.random.default_rng(opcode)
    if kind is f16:
        halves = [rng.standard_normal(64).astype(f16) for _ in range(2)]
    else:
        halves = [rng.integers(0, 1 << 16, 64, dtype=np.uint64).astype(u16).view(kind) for _ in range(2)]
    a, b = (np.ascontiguousarray(h).view(np.uint32) for h in halves)   # lane l: halves 2l (lo), 2l+1 (hi)
    with np.errstate(over="ignore"):
        want = ref(halves[0], halves[1]).astype(kind).view(u16)
    got = _run(arch, opcode, a, b).view(u16)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_packed_op_with_an_inline_constant_source(arch):
    """A constant source is one value for both halves and every lane (LLVM 24 writes
    `v_pk_lshlrev_b16 vD, 2, vS` in the backward): it broadcasts against the VGPR source."""
    b = np.random.default_rng(1).integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    got = _run(arch, SHIFT_BY_CONSTANT, np.zeros(32, np.uint32), b).view(u16)
    np.testing.assert_array_equal(got, b.view(u16) << u16(2))
