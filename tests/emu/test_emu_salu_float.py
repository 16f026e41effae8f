"""RDNA3.5 scalar float ops (gfx1150/gfx1151; RDNA3.5 ISA §6.8) against independent numpy /
Fraction references, one hand-written instruction per case; plus the gfx1100 refusal and
the beta GEMM that made LLVM emit s_mul_f32 for gfx1151."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from emu_helpers import asm_kernel

from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.errors import EmulatorFault

F32_SPECIAL = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x40200000, 0xC0200000, 0x3F000000,
               0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0xFFC00001, 0x00000001, 0x80123456,
               0x7F7FFFFF, 0x477FF000, 0x477FF001, 0x4B800001]
F16_SPECIAL = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x4100, 0xC100, 0x3800, 0x7C00, 0xFC00, 0x7E00,
               0x7D00, 0xFE01, 0x0001, 0x8123, 0x7BFF, 0x3555]
IN, OUT = 8, 56     # inputs live in s8.., results in s56.. (both below vcc_lo = s106)


def run_scalar(lines: list[str], inputs: list[int], n_out: int, arch: str = "gfx1151") -> np.ndarray:
    """Load `inputs` (u32) into s8.., run `lines`, return s56..s56+n_out as u32."""
    loads = "\n".join(f"\ts_load_b32 s{IN + k}, s[4:5], {4 * k:#x}" for k in range(len(inputs)))
    stores = "\n".join(f"\tv_mov_b32_e32 v2, s{OUT + k}\n\tglobal_store_b32 v1, v2, s[6:7] offset:{4 * k}"
                       for k in range(n_out))
    body = "\n".join(f"\t{l}" for l in lines)
    isa = asm_kernel(f"""\ts_load_b128 s[4:7], s[0:1], 0x0
\ts_waitcnt lgkmcnt(0)
{loads}
\ts_waitcnt lgkmcnt(0)
{body}
\tv_mov_b32_e32 v1, 0
{stores}
\ts_endpgm""").replace("--gfx1100", f"--{arch}")
    prog = Program.from_isa(isa)
    mem = GlobalMemory()
    src, dst = mem.alloc(4 * max(1, len(inputs))), mem.alloc(4 * n_out)
    mem.write(src, np.asarray(inputs, np.uint32))
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(dst, 4 * n_out), np.uint32).copy()


def run_op(fmt: str, cases: list[tuple[int, ...]], pre: str = "", post: str = "") -> np.ndarray:
    """Run `fmt` (with {d} and {s0}, {s1}, ... SGPR names) once per case, 16 cases a kernel.
    `pre` / `post` run before / after it (e.g. seed an accumulator, read SCC)."""
    out = []
    n = len(cases[0])
    for start in range(0, len(cases), 16):
        chunk = cases[start:start + 16]
        lines = []
        for j in range(len(chunk)):
            names = {f"s{i}": f"s{IN + n * j + i}" for i in range(n)} | {"d": f"s{OUT + j}"}
            lines += [x.format(**names) for x in (pre, fmt, post) if x]
        out.append(run_scalar(lines, [v for c in chunk for v in c], len(chunk)))
    return np.concatenate(out)


def f32(u):
    return np.uint32(u).view(np.float32)


def f16(u):
    return np.uint16(u).view(np.float16)


def same(got, want, width=32):
    """Bit-exact, except any NaN matches any quiet NaN."""
    raw = np.uint32 if width == 32 else np.uint16
    ft = np.float32 if width == 32 else np.float16
    qbit = 22 if width == 32 else 9
    g = np.asarray(got, np.uint32).astype(raw)
    w = np.asarray(want, np.uint32).astype(raw)
    gnan, wnan = np.isnan(g.view(ft)), np.isnan(w.view(ft))
    ok = np.where(wnan, gnan & (((g >> raw(qbit)) & raw(1)) == 1), g == w)
    bad = np.flatnonzero(~ok)
    assert not bad.size, f"{bad.size} mismatches, first at {bad[0]}: got {g[bad[0]]:#x} want {w[bad[0]]:#x}"


def pairs(special, rng, width):
    rand = rng.integers(0, 1 << width, (48, 2), dtype=np.uint64).tolist()
    return list(itertools.product(special, special)) + [tuple(r) for r in rand]


# ---- references, written from the RDNA3.5 pseudo-code, not from the emulator rows ------------
def round_to(r: Fraction, ft):
    """Round an exact rational to ft, nearest-even, via f64 plus an exact neighbour check."""
    x = ft(float(r))
    cands = [x, np.nextafter(x, ft(np.inf)), np.nextafter(x, ft(-np.inf))]
    cands = [c for c in cands if np.isfinite(c)] or [x]
    raw = np.uint32 if ft is np.float32 else np.uint16
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - r), int(np.asarray(c).view(raw)) & 1))


def ref_fma(a, b, c, ft):
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return ft(np.float64(a) * np.float64(b) + np.float64(c))
    r = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if r == 0:  # exact zero: sign from IEEE rules for a*b + c
        return ft(np.float64(a) * np.float64(b) + np.float64(c))
    big = np.finfo(ft).max
    if abs(r) > Fraction(float(big)) + Fraction(float(big - np.nextafter(big, ft(0)))) / 2:
        return ft(np.inf if r > 0 else -np.inf)
    return round_to(r, ft)


def is_snan(x):
    raw = np.asarray(x).view(np.uint32 if x.dtype == np.float32 else np.uint16)
    return bool(np.isnan(x)) and not (int(raw) >> (22 if x.dtype == np.float32 else 9)) & 1


def ref_min(a, b, want_min=True):
    if is_snan(a) or is_snan(b) or (np.isnan(a) and np.isnan(b)):
        return np.float32(np.nan).astype(a.dtype)
    if np.isnan(a):
        return b
    if np.isnan(b):
        return a
    if a == 0 and b == 0:
        neg = np.signbit(a) or np.signbit(b) if want_min else np.signbit(a) and np.signbit(b)
        return -a.dtype.type(0) if neg else a.dtype.type(0)
    return min(a, b) if want_min else max(a, b)


CMP = {"lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
       "gt": lambda a, b: a > b, "lg": lambda a, b: a < b or a > b, "ge": lambda a, b: a >= b,
       "o": lambda a, b: not (np.isnan(a) or np.isnan(b)), "u": lambda a, b: bool(np.isnan(a) or np.isnan(b)),
       "nge": lambda a, b: not a >= b, "nlg": lambda a, b: not (a < b or a > b),
       "ngt": lambda a, b: not a > b, "nle": lambda a, b: not a <= b, "neq": lambda a, b: not a == b,
       "nlt": lambda a, b: not a < b}


def _bits(vals, width):
    raw = np.uint32 if width == 32 else np.uint16
    return np.array([np.asarray(v).view(raw) for v in vals], np.uint32)


# ---- tests -----------------------------------------------------------------------------------
@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "min", "max"])
def test_binary(rng, t, op):
    width = 32 if t == "f32" else 16
    cvt = f32 if t == "f32" else f16
    cases = pairs(F32_SPECIAL if t == "f32" else F16_SPECIAL, rng, width)
    with np.errstate(all="ignore"):
        want = []
        for a, b in cases:
            x, y = cvt(a), cvt(b)
            want.append({"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
                         "min": lambda: ref_min(x, y), "max": lambda: ref_min(x, y, False)}[op]())
    # f16 sources carry junk in bits [31:16]: they must be ignored, and the result's cleared
    junk = (lambda v: v | 0xABCD0000) if t == "f16" else (lambda v: v)
    got = run_op(f"s_{op}_{t} {{d}}, {{s0}}, {{s1}}", [(junk(a), junk(b)) for a, b in cases])
    same(got, _bits(want, width), width)
    if t == "f16":
        assert not (got >> 16).any()


def test_min_max_signed_zero_and_snan():
    pz, nz, snan, one = 0x00000000, 0x80000000, 0x7FA00000, 0x3F800000
    got = run_op("s_min_f32 {d}, {s0}, {s1}", [(pz, nz), (nz, pz)])
    assert got.tolist() == [nz, nz]
    got = run_op("s_max_f32 {d}, {s0}, {s1}", [(pz, nz), (nz, pz)])
    assert got.tolist() == [pz, pz]
    got = run_op("s_min_f32 {d}, {s0}, {s1}", [(snan, one), (one, snan), (0x7FC00000, one)])
    assert got.tolist() == [0x7FE00000, 0x7FE00000, one]   # sNaN quieted (payload kept); qNaN loses


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_fmac(rng, t):
    width, ft = (32, np.float32) if t == "f32" else (16, np.float16)
    cvt = f32 if t == "f32" else f16
    spec = (F32_SPECIAL if t == "f32" else F16_SPECIAL)[:10]
    cases = [c + (spec[(i * 7) % len(spec)],) for i, c in enumerate(pairs(spec, rng, width))]
    cases += [tuple(int(x) for x in r) for r in rng.integers(0, 1 << width, (48, 3), dtype=np.uint64)]
    with np.errstate(all="ignore"):
        want = [ref_fma(cvt(a), cvt(b), cvt(c), ft) for a, b, c in cases]
    got = run_op(f"s_fmac_{t} {{d}}, {{s0}}, {{s1}}", cases, pre="s_mov_b32 {d}, {s2}")
    same(got, _bits(want, width), width)


def test_fmaak_fmamk_literals(rng):
    k = 0x3EAAAAAB  # 1/3: its product with most values is inexact, so fusion shows
    vals = [tuple(int(x) for x in r) for r in rng.integers(0x30000000, 0x50000000, (32, 2), dtype=np.uint64)]
    with np.errstate(all="ignore"):
        aak = [ref_fma(f32(a), f32(b), f32(k), np.float32) for a, b in vals]
        amk = [ref_fma(f32(a), f32(k), f32(b), np.float32) for a, b in vals]
    same(run_op(f"s_fmaak_f32 {{d}}, {{s0}}, {{s1}}, {k:#x}", vals), _bits(aak, 32))
    same(run_op(f"s_fmamk_f32 {{d}}, {{s0}}, {k:#x}, {{s1}}", vals), _bits(amk, 32))
    # a literal operand of an ordinary op, as LLVM prints it for the beta GEMM
    same(run_op("s_mul_f32 {d}, {s0}, 0x3e800000", [(0x40000000,)]), [0x3F000000])


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("c", list(CMP))
def test_compare_sets_scc(rng, t, c):
    cvt = f32 if t == "f32" else f16
    cases = pairs(F32_SPECIAL if t == "f32" else F16_SPECIAL, rng, 32 if t == "f32" else 16)[:200]
    got = run_op(f"s_cmp_{c}_{t} {{s0}}, {{s1}}", cases, post="s_cselect_b32 {d}, 1, 0")
    want = [int(bool(CMP[c](cvt(a), cvt(b)))) for a, b in cases]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("op,ref", [("ceil", np.ceil), ("floor", np.floor), ("trunc", np.trunc),
                                    ("rndne", np.rint)])
def test_rounding(rng, t, op, ref):
    width, cvt = (32, f32) if t == "f32" else (16, f16)
    ft = np.float32 if t == "f32" else np.float16
    halves = [ft(x) for x in (0.5, -0.5, 1.5, 2.5, -2.5, 3.5, -0.25, 1e-3)]
    special = (F32_SPECIAL if t == "f32" else F16_SPECIAL) + [int(_bits([h], width)[0]) for h in halves]
    vals = special + rng.integers(0, 1 << width, 32, dtype=np.uint64).tolist()
    got = run_op(f"s_{op}_{t} {{d}}, {{s0}}", [(v,) for v in vals])
    same(got, _bits([ref(cvt(v)) for v in vals], width), width)
    if op == "rndne":  # ties to even, and the sign of zero survives
        r = {v: g for v, g in zip(vals, got)}
        assert r[int(_bits([ft(2.5)], width)[0])] == _bits([ft(2)], width)[0]
        assert r[int(_bits([ft(-0.5)], width)[0])] == (0x80000000 if width == 32 else 0x8000)


def test_int_float_conversions():
    ints = [0, 1, 0x7FFFFFFF, 0x80000000, 0x80000001, 16777217, 16777219, 0xFFFFFFFF, 0xFFFFFFFE]
    got = run_op("s_cvt_f32_i32 {d}, {s0}", [(v,) for v in ints])
    assert got.tolist() == _bits([np.float32(np.int32(np.uint32(v))) for v in ints], 32).tolist()
    assert got[5] == 0x4B800000 and got[6] == 0x4B800002          # 2^24+1 -> 2^24, 2^24+3 -> 2^24+4 (RNE)
    got = run_op("s_cvt_f32_u32 {d}, {s0}", [(v,) for v in ints])
    assert got[7] == 0x4F800000                                   # 2^32-1 rounds up to 2^32
    fl = [0x3FF00000, 0xBFF00000, 0x7FC00000, 0x7F800000, 0xFF800000, 0x4F000000, 0xCF000001,
          0x80000000, 0x3F7FFFFF, 0xC0600000, 0x4F800000]
    # trunc toward zero, saturate, NaN -> 0 (RDNA3.5 §16 V_CVT_I32_F32 / V_CVT_U32_F32)
    got = run_op("s_cvt_i32_f32 {d}, {s0}", [(v,) for v in fl])
    assert got.view(np.int32).tolist() == [1, -1, 0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 0, -3, 2**31 - 1]
    got = run_op("s_cvt_u32_f32 {d}, {s0}", [(v,) for v in fl])
    assert got.tolist() == [1, 0, 0, 2**32 - 1, 0, 2**31, 0, 0, 0, 0, 2**32 - 1]


def _f16_grid():
    """Every finite f16 value, ascending, with one zero: +0.0. (-0 is left out on purpose: with
    both zeros np.unique keeps whichever its sort puts first, and that depends on the CPU's SIMD
    sort dispatch -- the reference then said -0 for +0.0 on hosts without AVX-512.)"""
    raw = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    h = raw.view(np.float16)
    h = h[np.isfinite(h) & (raw != 0x8000)]
    return np.unique(h.astype(np.float64))


def ref_f16(x: np.float32, mode: str) -> int:
    """f32 -> f16 by search over every finite f16 (independent of numpy's cast)."""
    if np.isnan(x):
        return 0x7E00
    grid = _f16_grid()
    v = float(x)
    if np.isinf(x):
        return 0x7C00 if v > 0 else 0xFC00
    lo = grid[np.searchsorted(grid, v, "right") - 1] if v >= grid[0] else None
    hi = grid[np.searchsorted(grid, v, "left")] if v <= grid[-1] else None
    if mode == "rtz":
        r = lo if v >= 0 else hi
        if r is None:
            r = grid[-1] if v > 0 else grid[0]
    else:
        if lo is None or hi is None:
            return 0xFC00 if v < 0 else 0x7C00
        if v - lo != hi - v:
            r = lo if v - lo < hi - v else hi
        else:
            r = lo if not int(np.float16(lo).view(np.uint16)) & 1 else hi
        top = 65520.0  # halfway between max f16 and 2^16: at or past it RNE overflows
        if abs(v) >= top:
            return 0xFC00 if v < 0 else 0x7C00
    if r == 0:  # IEEE 754-2019 6.3: a conversion's result has the sign of its operand, zeros too
        return 0x8000 if np.signbit(x) else 0x0000
    return int(np.float16(r).view(np.uint16))


def test_f16_conversions(rng):
    vals = F32_SPECIAL + [0x3F801000, 0x3F803000, 0x3F801001, 0xBF801000, 0x477FF000, 0x477FE000,
                          0x33800000, 0x33000000, 0x33000001, 0xC77FFFFF, 0x387FE000]
    vals += rng.integers(0x30000000, 0x48000000, 40, dtype=np.uint64).tolist()
    # RNE: 1+2^-11 is a tie -> 1.0; 1+3*2^-11 -> 1+2^-9; 65520 overflows to inf
    got = run_op("s_cvt_f16_f32 {d}, {s0}", [(v,) for v in vals])
    same(got, [ref_f16(f32(v), "rne") for v in vals], 16)
    # zeros and underflow keep the operand's sign: +0 -> +0, -0 -> -0, +-2^-25 (a tie) -> +-0
    signed = [0x00000000, 0x80000000, 0x33000000, 0xB3000000, 0x00000001]
    assert [ref_f16(f32(v), "rne") for v in signed] == [0x0000, 0x8000, 0x0000, 0x8000, 0x0000]
    assert run_op("s_cvt_f16_f32 {d}, {s0}", [(v,) for v in signed]).tolist() == [0, 0x8000, 0, 0x8000, 0]
    assert not (got >> 16).any()
    # RTZ: 65520 and above stay at 65504, -inf keeps -inf, ties go down
    pairs_ = list(zip(vals, vals[::-1]))
    got = run_op("s_cvt_pk_rtz_f16_f32 {d}, {s0}, {s1}", pairs_)
    same(got & 0xFFFF, [ref_f16(f32(a), "rtz") for a, _ in pairs_], 16)
    same(got >> 16, [ref_f16(f32(b), "rtz") for _, b in pairs_], 16)
    assert run_op("s_cvt_pk_rtz_f16_f32 {d}, {s0}, {s1}", [(0x47800000, 0xFF800000)]).tolist() == [0xFC007BFF]
    # f16 -> f32 is exact; the _hi form reads bits [31:16]
    hs = F16_SPECIAL + rng.integers(0, 1 << 16, 32, dtype=np.uint64).tolist()
    packed = [(h | (((h * 40503) & 0xFFFF) << 16)) for h in hs]
    same(run_op("s_cvt_f32_f16 {d}, {s0}", [(p,) for p in packed]), _bits([f16(h).astype(np.float32) for h in hs], 32))
    same(run_op("s_cvt_hi_f32_f16 {d}, {s0}", [(p,) for p in packed]),
         _bits([f16(p >> 16).astype(np.float32) for p in packed], 32))


def test_scc_untouched_by_arith():
    got = run_scalar(["s_cmp_eq_u32 0, 0", "s_add_f32 s60, s8, s9", "s_cselect_b32 s56, 1, 0",
                      "s_cmp_eq_u32 0, 1", "s_mul_f16 s61, s8, s9", "s_cselect_b32 s57, 1, 0"],
                     [0x3F800000, 0x3F800000], 2)
    assert got.tolist() == [1, 0]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1101"])
def test_gfx1100_refuses_salu_float(arch):
    with pytest.raises(EmulatorFault, match=rf"s_mul_f32 for {arch}: only gfx1150, gfx1151"):
        run_scalar(["s_mul_f32 s56, s8, 0x3e800000"], [0x3F800000], 1, arch=arch)
    assert run_scalar(["s_mul_f32 s56, s8, 0x3e800000"], [0x3F800000], 1, arch="gfx1150")[0] == 0x3E800000


def test_gemm_beta_on_gfx1151_uses_salu_float():
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.check import check_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.ops.gemm.schedule import Schedule
    d, p = GemmDirective("bf16", beta=0.25), GemmProblem(1, 1, 1)
    s = Schedule(block_m=16, block_n=16, block_k=16, waves_m=1, waves_n=1, load_bits=32)
    assert "s_mul_f32" in compile_gemm(d, s, "gfx1151", p).compiled.isa
    assert check_gemm(d, s, "gfx1151", p, device="emu").passed
