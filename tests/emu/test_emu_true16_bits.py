"""The rows Triton's bf16 kernels lean on (f32 -> bf16 RNE, -inf / NaN fills), one hand-written
instruction per case on gfx1100 and gfx1201, against references written here from the ISA guides,
not from wmma_gen/emu/isa. Pseudo-code as printed in the RDNA3 ISA reference guide (Aug 2023); the
RDNA4 guide has the same §7.1 OPSEL and §7.4 text and lists these instructions at the same opcodes:

  §7.4  16-bit Math and VGPRs: V0.L = V0[15:0], V0.H = V0[31:16]; VOP1/VOP2/VOPC select the half
        with bit 7 of the register field, VOP3 with OPSEL
  §7.1  VOP3 fields, OPSEL [0]=src0 [1]=src1 [2]=src2 [3]=dest; dest=0 writes
        {prev_dst[31:16], result[15:0]}, dest=1 writes {result[15:0], prev_dst[15:0]}; OPSEL may
        select the upper or lower half of an SGPR data input (RDNA4 §7.1; RDNA3 §7.5 VOP3P OPSEL)
  §3.2.2 EXEC: a lane whose EXEC bit is 0 does not write its VGPRs
  §16.12 V_CNDMASK_B16 (VOP3 605): D0.u16 = VCC.u64[laneId] ? S1.u16 : S0.u16; in VOP3 the VCC
        source may be any SGPR (S2); float modifiers negate / take the absolute value
  §16.8 / §16.12 V_MOV_B16 (VOP1 28, VOP3 412): D0.b16 = S0.b16
  §16.9 V_CMP_O_F32 (23): D0.u64[laneId] = !isNAN(64'F(S0.f)) && !isNAN(64'F(S1.f));
        V_CMP_U_F32 (24): isNAN(64'F(S0.f)) || isNAN(64'F(S1.f)) (the per-instruction text; the
        summary Table 112 of the RDNA3 guide prints U with the negations left in)
  §16.12 V_BFE_U32 (528): D0.u32 = (S0.u32 >> S1[4:0]) & ((1U << S2[4:0]) - 1U)
  §16.12 V_ADD3_U32 (597): D0.u32 = S0.u32 + S1.u32 + S2.u32, no carry in or out

The kernels are wave32 (the emulator's only wave size), so the condition of v_cndmask_b16 is VCC_LO
or one SGPR; LLVM rejects an SGPR pair there. Each asm line is also assembled with llvm-mc (when
installed) and decoded, and must decode to the operands the text names: Triton objects run through
the decoder, these tests through the text parser."""
from __future__ import annotations

import math
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from emu_helpers import run_lanes
from test_emu_gfx12 import run_lanes12

from wmma_gen.codeobj import decode
from wmma_gen.emu.decode.asm import parse_instruction

ARCHS = ("gfx1100", "gfx1201")
M16, M32 = 0xFFFF, 0xFFFFFFFF
LANE = np.arange(32)
S9 = 0x8001BEEF                 # scalar data source: .h = 0x8001, .l = 0xBEEF


def run(arch, body, inputs, n_out=1, waves=1):
    inputs = [np.asarray(x, np.uint32) for x in inputs]
    if arch == "gfx1100":
        return run_lanes(body, inputs, n_out, waves)
    return list(run_lanes12(body, inputs, n_out, waves))


def bits(mask: int) -> np.ndarray:
    """Lane mask -> per-lane bool (lane i is bit i)."""
    return ((mask >> LANE) & 1).astype(bool)


def half(x, h: str) -> np.ndarray:
    """§7.4: .l = [15:0], .h = [31:16]."""
    x = np.asarray(x, np.uint32)
    return (x >> 16) if h == "h" else (x & M16)


def write16(old, val, h: str) -> np.ndarray:
    """§7.1 OPSEL dest: the other half of the destination VGPR keeps its previous bits."""
    old, val = np.asarray(old, np.uint32), np.asarray(val, np.uint32) & M16
    return (old & 0xFFFF0000) | val if h == "l" else (old & M16) | (val << 16)


def masked(old, new, exec_mask: int) -> np.ndarray:
    """§3.2.2: lanes with EXEC=0 keep the old VGPR value."""
    return np.where(bits(exec_mask), new, old).astype(np.uint32)


@pytest.fixture
def data(rng):
    """v10, v11, v12 (v12 = the destination's old value): random bits per lane."""
    return [rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32) for _ in range(3)]


def setup(line, cond, exec_mask, cond_reg="s8"):
    """Destination v20 := v12, s9 := S9, the condition SGPR := cond, EXEC := exec_mask for `line`."""
    return (f"\tv_mov_b32_e32 v20, v12\n\ts_mov_b32 s9, {S9:#x}\n\ts_mov_b32 {cond_reg}, {cond:#x}\n"
            f"\ts_mov_b32 exec_lo, {exec_mask:#x}\n\t{line}\n\ts_mov_b32 exec_lo, -1")


# ---- v_cndmask_b16 ------------------------------------------------------------------------
NEG, ABS = 0x8000, 0x7FFF      # sign-bit operations of the float modifiers on 16-bit values
# (id, line, condition SGPR, dest half, S0(r), S1(r), condition, EXEC); r = {register: u32 lanes}
CNDMASK = [
    ("vcc-lll", "v_cndmask_b16 v20.l, v10.l, v11.l, vcc_lo", "vcc_lo", "l",
     lambda r: half(r["v10"], "l"), lambda r: half(r["v11"], "l"), 0x9A3CF00F, M32),
    ("sgpr-hhl", "v_cndmask_b16 v20.h, v10.h, v11.l, s8", "s8", "h",
     lambda r: half(r["v10"], "h"), lambda r: half(r["v11"], "l"), 0x5A5AC3C3, 0xF0FF0FF0),
    ("sgpr-lhh", "v_cndmask_b16 v20.l, v10.h, v11.h, s8", "s8", "l",
     lambda r: half(r["v10"], "h"), lambda r: half(r["v11"], "h"), 0x0F0F3C3C, 0xFFFF00FF),
    ("bf16-nan-fill", "v_cndmask_b16 v20.h, 0x7fff, v11.h, s8", "s8", "h",
     lambda r: 0x7FFF, lambda r: half(r["v11"], "h"), 0xDEADBEEF, 0x7FFFFFFE),
    ("bf16-ninf-fill", "v_cndmask_b16 v20.h, 0xff80, v10.l, vcc_lo", "vcc_lo", "h",
     lambda r: 0xFF80, lambda r: half(r["v10"], "l"), 0x12345678, 0xFFFFFFF0),
    ("inline-zero", "v_cndmask_b16 v20.l, v10.l, 0, s8", "s8", "l",
     lambda r: half(r["v10"], "l"), lambda r: 0, 0xAAAA5555, 0xFF00FF00),
    ("sgpr-source", "v_cndmask_b16 v20.l, s9, v11.h, s8", "s8", "l",
     lambda r: S9 & M16, lambda r: half(r["v11"], "h"), 0x33CC33CC, M32),
    ("neg-abs", "v_cndmask_b16 v20.h, -v10.l, |v11.h|, s8", "s8", "h",
     lambda r: half(r["v10"], "l") ^ NEG, lambda r: half(r["v11"], "h") & ABS, 0xC0FFEE11, 0xFFFEFFFF),
    ("dst-is-source", "v_cndmask_b16 v20.h, 0x7fff, v20.h, s8", "s8", "h",
     lambda r: 0x7FFF, lambda r: half(r["v20"], "h"), 0xF00FF00F, 0xFFFFFF0F),
    ("dst-both-halves", "v_cndmask_b16 v20.l, v20.h, v20.l, vcc_lo", "vcc_lo", "l",
     lambda r: half(r["v20"], "h"), lambda r: half(r["v20"], "l"), 0x0FF00FF0, M32),
    ("exec-zero", "v_cndmask_b16 v20.h, v10.l, v11.h, s8", "s8", "h",
     lambda r: half(r["v10"], "l"), lambda r: half(r["v11"], "h"), M32, 0),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CNDMASK, ids=[c[0] for c in CNDMASK])
def test_cndmask_b16_halves(arch, case, data):
    _, line, cond_reg, dst, s0, s1, cond, exec_mask = case
    a, b, old = data
    got, = run(arch, setup(line, cond, exec_mask, cond_reg), [a, b, old])
    r = {"v10": a, "v11": b, "v20": old}
    result = np.where(bits(cond), s1(r), s0(r)) & M16
    np.testing.assert_array_equal(got, masked(old, write16(old, result, dst), exec_mask))


# ---- v_mov_b16 ----------------------------------------------------------------------------
# (line, dest half, S0(r), EXEC)
MOV = [
    ("v_mov_b16_e32 v20.h, v10.l", "h", lambda r: half(r["v10"], "l"), 0xFFF0FFFF),
    ("v_mov_b16_e32 v20.l, v10.h", "l", lambda r: half(r["v10"], "h"), 0x0FFFFFFF),
    ("v_mov_b16_e64 v20.h, v10.h op_sel:[1,1]", "h", lambda r: half(r["v10"], "h"), 0xFFFF7FFF),
    ("v_mov_b16_e64 v20.l, v10.h op_sel:[1,0]", "l", lambda r: half(r["v10"], "h"), M32),
    ("v_mov_b16_e64 v20.h, v10.l", "h", lambda r: half(r["v10"], "l"), 0xAAAAAAAA),
    ("v_mov_b16_e32 v20.l, 0x7fff", "l", lambda r: 0x7FFF, 0x55555555),
    ("v_mov_b16_e32 v20.h, -1", "h", lambda r: M16, 0xFFFF0000),
    ("v_mov_b16_e32 v20.h, s9", "h", lambda r: S9 & M16, M32),
    ("v_mov_b16_e64 v20.l, s9 op_sel:[1,0]", "l", lambda r: S9 >> 16, M32),
    ("v_mov_b16_e32 v20.h, v20.l", "h", lambda r: half(r["v20"], "l"), 0xF0F0F0F0),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", MOV, ids=[c[0] for c in MOV])
def test_mov_b16_halves(arch, case, data):
    line, dst, s0, exec_mask = case
    a, _, old = data
    got, = run(arch, setup(line, 0, exec_mask), [a, a, old])
    r = {"v10": a, "v20": old}
    np.testing.assert_array_equal(got, masked(old, write16(old, s0(r), dst), exec_mask))


# ---- v_cmp_o_f32 / v_cmp_u_f32 ------------------------------------------------------------
F32 = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
       0x7F800001, 0xFFBFFFFF, 0x7FFFFFFF, 0x00000001, 0x807FFFFF, 0x7F7FFFFF]
PAIRS = [(a, b) for a in F32 for b in F32]
WAVES = math.ceil(len(PAIRS) / 32)
PAIRS += [(0, 0)] * (32 * WAVES - len(PAIRS))


def is_nan(x) -> np.ndarray:
    """IEEE binary32 NaN: exponent all ones, mantissa non-zero (widening to f64 keeps it NaN)."""
    return (np.asarray(x, np.uint32) & 0x7FFFFFFF) > 0x7F800000


def ordered(a, b):
    return ~is_nan(a) & ~is_nan(b)


def unordered(a, b):
    return is_nan(a) | is_nan(b)


# (line, reference(S0, S1) given the loaded a = v10, b = v11); s9 = 0xFF800000 (-inf)
CMP = [
    ("v_cmp_o_f32_e32 vcc_lo, v10, v11", lambda a, b: ordered(a, b)),
    ("v_cmp_o_f32_e64 s8, v10, v11", lambda a, b: ordered(a, b)),
    ("v_cmp_o_f32_e64 s8, -v10, |v11|", lambda a, b: ordered(a ^ 0x80000000, b & 0x7FFFFFFF)),
    ("v_cmp_o_f32_e64 s8, v10, v10", lambda a, b: ordered(a, a)),
    ("v_cmp_o_f32_e64 vcc_lo, s9, v11", lambda a, b: ordered(np.uint32(0xFF800000), b)),
    ("v_cmp_u_f32_e32 vcc_lo, v10, v11", lambda a, b: unordered(a, b)),
    ("v_cmp_u_f32_e64 s8, v10, v11", lambda a, b: unordered(a, b)),
    ("v_cmp_u_f32_e64 s8, |v10|, -v11", lambda a, b: unordered(a & 0x7FFFFFFF, b ^ 0x80000000)),
    ("v_cmp_u_f32_e64 vcc_lo, s9, v11", lambda a, b: unordered(np.uint32(0xFF800000), b)),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CMP, ids=[c[0] for c in CMP])
def test_cmp_ordered_unordered_f32(arch, case):
    """Zeros of both signs, infinities, quiet and signalling NaNs of both signs, denormals, max:
    every pair, one lane each. The compare's destination SGPR is read back whole in each lane."""
    line, ref = case
    dst = line.split()[1].rstrip(",")
    a = np.array([p[0] for p in PAIRS], np.uint32)
    b = np.array([p[1] for p in PAIRS], np.uint32)
    body = f"\ts_mov_b32 s9, 0xff800000\n\t{line}\n\tv_mov_b32_e32 v20, {dst}"
    mask, = run(arch, body, [a, b], waves=WAVES)
    got = ((mask >> (np.arange(mask.size) % 32)) & 1).astype(bool)
    want = ref(a, b)
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(a[i]), hex(b[i]), bool(got[i])) for i in bad[:8]]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("line,dst", [("v_cmp_eq_u32_e32 vcc_lo, v10, v10", "vcc_lo"),
                                      ("v_cmp_o_f32_e64 s8, v10, v10", "s8"),
                                      ("v_cmp_lt_u32_e64 s8, v10, -1", "s8")])
@pytest.mark.parametrize("exec_mask", [0x0000FFFF, 0xA5A5A5A5, 0x00000000])
def test_cmp_writes_zero_for_inactive_lanes(arch, line, dst, exec_mask):
    """RDNA3/3.5 ISA §3.4.6 (V_CMP updates all bits of its mask) and §7.7: "V_CMP and V_CMPX write
    the full mask, not a partial mask": a lane with EXEC = 0 gets a 0 bit, whatever the mask held
    before (all ones here) and whatever the compare would give (true in every lane here)."""
    x = np.arange(32, dtype=np.uint32) * 3 + 1          # finite, never 0xffffffff: every compare is true
    body = (f"\ts_mov_b32 {dst}, -1\n\ts_mov_b32 exec_lo, {exec_mask:#x}\n\t{line}\n"
            f"\ts_mov_b32 exec_lo, -1\n\tv_mov_b32_e32 v20, {dst}")
    got, = run(arch, body, [x])
    assert (got == exec_mask).all(), [hex(v) for v in got[:4]]


# ---- v_bfe_u32 ----------------------------------------------------------------------------
# (offset, width) per lane: fields inside the word, width 0 / 32 / 33 (mod 32), offsets >= 32,
# offset + width past bit 31 (the field is cut at bit 31, zeros shifted in), all-ones operands
BFE_ROWS = [(0, 0), (0, 1), (16, 1), (31, 1), (0, 31), (1, 31), (0, 32), (0, 33), (4, 36), (32, 8),
            (40, 8), (28, 8), (24, 16), (31, 31), (17, 20), (M32, M32), (0xFFFFFFE0, 0xFFFFFFE5), (5, 0),
            (8, 8), (12, 4), (3, 29), (3, 30), (16, 16), (16, 17), (30, 2), (30, 3), (0, 16), (15, 16),
            (64, 64), (33, 65), (7, 25), (7, 26)]


def bfe_u32(s0: int, s1: int, s2: int) -> int:
    """§16.12 V_BFE_U32, line by line."""
    return (s0 >> (s1 & 31)) & ((1 << (s2 & 31)) - 1)


@pytest.mark.parametrize("arch", ARCHS)
def test_bfe_u32_offset_and_width_mod_32(arch, rng):
    x = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32) | np.uint32(0x80000001)
    off = np.array([r[0] for r in BFE_ROWS], np.uint32)
    width = np.array([r[1] for r in BFE_ROWS], np.uint32)
    got, = run(arch, "\tv_bfe_u32 v20, v10, v11, v12", [x, off, width])
    want = [bfe_u32(int(x[k]), int(off[k]), int(width[k])) for k in range(32)]
    np.testing.assert_array_equal(got, np.array(want, np.uint32))


# constant forms: Triton's bit-16 extract, inline constants >= 32, literals, an SGPR offset
BFE_CONST = [("16, 1", 16, 1), ("40, 36", 40, 36), ("0x101, 42", 0x101, 42), ("s9, 5", S9, 5),
             ("31, 64", 31, 64), ("0, 32", 0, 32)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("ops,off,width", BFE_CONST, ids=[c[0] for c in BFE_CONST])
def test_bfe_u32_constant_operands(arch, ops, off, width, rng):
    line = f"v_bfe_u32 v20, v10, {ops}"
    x = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    got, = run(arch, f"\ts_mov_b32 s9, {S9:#x}\n\t{line}", [x])
    np.testing.assert_array_equal(got, np.array([bfe_u32(int(v), off, width) for v in x], np.uint32))


# ---- v_add3_u32 ---------------------------------------------------------------------------
ADD3_ROWS = [(M32, 1, 0), (M32, M32, M32), (0x80000000, 0x80000000, 0), (0x80000000, 0x80000000, 1),
             (0x7F7FFFFF, 1, 0x7FFF), (0, 0, 0), (1, 2, 3), (0xFFFFFFFE, 1, 1), (0xFFFF8001, 0, 0x7FFF),
             (0x7FFFFFFF, 0x7FFFFFFF, 2), (M32, 0, M32)]


@pytest.mark.parametrize("arch", ARCHS)
def test_add3_u32_wraps(arch, rng):
    rand = rng.integers(0, 1 << 32, (32 - len(ADD3_ROWS), 3), dtype=np.uint64).tolist()
    rows = ADD3_ROWS + [tuple(r) for r in rand]
    a, b, c = (np.array([r[k] for r in rows], np.uint32) for k in range(3))
    got, = run(arch, "\tv_add3_u32 v20, v10, v11, v12", [a, b, c])
    np.testing.assert_array_equal(got, np.array([(x + y + z) % (1 << 32) for x, y, z in rows], np.uint32))


ADD3_CONST = [("v10, v11, 0x7fff", lambda a, b: a + b + 0x7FFF), ("v10, -1, s9", lambda a, b: a + M32 + S9),
              ("-1, -1, v10", lambda a, b: M32 + M32 + a)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("ops,ref", ADD3_CONST, ids=[c[0] for c in ADD3_CONST])
def test_add3_u32_constant_operands(arch, ops, ref, rng):
    line = f"v_add3_u32 v20, {ops}"
    a, b = (rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    a[:4] = [M32, 0x80000000, 0xFFFF8001, 1]
    got, = run(arch, f"\ts_mov_b32 s9, {S9:#x}\n\t{line}", [a, b])
    np.testing.assert_array_equal(got, np.array([ref(int(x), int(y)) % (1 << 32) for x, y in zip(a, b)],
                                                np.uint32))


# ---- Triton's f32 -> bf16 round-to-nearest-even sequence -----------------------------------
def bf16_rne(x: int) -> int:
    """Nearest bf16 (the f32 encodings with 16 zero low bits) to the f32 `x`, ties to an even
    bf16 mantissa, overflow past the largest bf16 to infinity (IEEE 754 roundTiesToEven); NaN ->
    0x7fff, the fill the sequence selects for NaN."""
    if is_nan(x):
        return 0x7FFF
    sign, mag = x & 0x80000000, x & 0x7FFFFFFF
    if mag >= 0x7F800000:
        return (x >> 16) & M16

    def value(m):    # magnitude of an f32 encoding; 0x7f800000 as the unbounded-exponent 2**128
        return Fraction(2) ** 128 if m == 0x7F800000 else Fraction(float(np.uint32(m).view(np.float32)))
    lo = mag & 0xFFFF0000
    up = lo + 0x10000
    d_lo, d_up = value(mag) - value(lo), value(up) - value(mag)
    pick = lo if d_lo < d_up or (d_lo == d_up and not (lo >> 16) & 1) else up
    return ((sign | pick) >> 16) & M16


def test_bf16_rne_reference():
    assert bf16_rne(0x3F808000) == 0x3F80 and bf16_rne(0x3F818000) == 0x3F82      # ties to even
    assert bf16_rne(0x3F808001) == 0x3F81 and bf16_rne(0xBF807FFF) == 0xBF80
    assert bf16_rne(0x7F7FFFFF) == 0x7F80 and bf16_rne(0x7F7F7FFF) == 0x7F7F      # overflow to inf
    assert bf16_rne(0x007FFFFF) == 0x0080 and bf16_rne(0x80000000) == 0x8000


TRITON_RNE = ["v_bfe_u32 v21, v10, 16, 1", "v_add3_u32 v21, v10, v21, 0x7fff", "v_cmp_o_f32_e64 s8, v10, v10",
              "v_cndmask_b16 v20.l, 0x7fff, v21.h, s8"]


@pytest.mark.parametrize("arch", ARCHS)
def test_triton_bf16_rne_sequence(arch, rng):
    """The four-instruction f32 -> bf16 conversion of Triton's bf16 objects (v_bfe_u32 bit 16,
    v_add3_u32 + 0x7fff, v_cmp_o_f32 x, x, v_cndmask_b16 0x7fff into a half) against IEEE RNE."""
    x = np.concatenate([np.array(F32 + [0x3F808000, 0x3F818000, 0x3F808001, 0xBF807FFF, 0x7F7F7FFF,
                                        0x007FFFFF, 0x00008000, 0x80018000], np.uint32),
                        rng.integers(0, 1 << 32, 10, dtype=np.uint64).astype(np.uint32)])
    old = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    body = "\tv_mov_b32_e32 v20, v11\n" + "\n".join(f"\t{line}" for line in TRITON_RNE)
    got, = run(arch, body, [x, old])
    want = write16(old, np.array([bf16_rne(int(v)) for v in x], np.uint32), "l")
    np.testing.assert_array_equal(got, want)


# ---- the same lines through llvm-mc and the decoder ---------------------------------------
MC_FLAGS = ("-triple=amdgcn-amd-amdhsa", "-mattr=+real-true16", "-show-encoding")
LINES = sorted({c[1] for c in CNDMASK} | {c[0] for c in MOV} | {c[0] for c in CMP} | set(TRITON_RNE)
               | {f"v_bfe_u32 v20, v10, {c[0]}" for c in BFE_CONST} | {f"v_add3_u32 v20, {c[0]}" for c in ADD3_CONST}
               | {"v_bfe_u32 v20, v10, v11, v12", "v_add3_u32 v20, v10, v11, v12"})


def _llvm_mc():
    for mc in ("llvm-mc-22", "llvm-mc"):
        path = shutil.which(mc)
        probe = path and subprocess.run([path, *MC_FLAGS, "-mcpu=gfx1201"], input="v_mov_b16_e32 v1.h, v2.l\n",
                                        capture_output=True, text=True, check=False)
        if probe and probe.returncode == 0:
            return path
    return None


def _operands(ins):
    """(kind, index, count, half, value, neg, abs) per operand, with a VOP3 op_sel folded into
    the halves it selects (§7.1: op_sel[k] picks source k's high half, the last bit the dest's)."""
    sel = tuple(ins.mods.get("op_sel", ()))
    out = []
    for k, op in enumerate(ins.operands):
        bit = sel and (sel[-1] if k == 0 else (sel[k - 1] if k - 1 < len(sel) - 1 else 0))
        h = "h" if op.half == "h" or (op.kind in ("v", "s") and bit) else ("l" if op.kind == "v" else None)
        value = int(op.value) & M32 if op.kind == "int" else op.value
        out.append((op.kind, op.index, op.count, h, value, op.neg, op.abs))
    return ins.base, tuple(out)


@pytest.mark.parametrize("arch", ARCHS)
def test_lines_decode_to_the_operands_they_name(arch):
    """Each line above, assembled by llvm-mc (true16 on) and decoded, names the same registers,
    halves, constants and modifiers as the text the tests ran."""
    mc = _llvm_mc()
    if mc is None:
        pytest.skip("no llvm-mc with true16 gfx11/gfx12 support (install llvm-22)")
    r = subprocess.run([mc, *MC_FLAGS, f"-mcpu={arch}"], input="\n".join(LINES) + "\n", capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr[:2000]
    encodings = [ln.split("encoding: [")[1].rstrip("]") for ln in r.stdout.splitlines() if "encoding:" in ln]
    assert len(encodings) == len(LINES)
    family = "gfx11" if arch == "gfx1100" else "gfx12"
    for line, enc in zip(LINES, encodings):
        (ins,), _ = decode(bytes(int(b, 16) for b in enc.split(",")), family)
        assert _operands(ins) == _operands(parse_instruction(line)), (line, ins.text)
