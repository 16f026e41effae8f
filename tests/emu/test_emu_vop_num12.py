"""gfx12 (RDNA4) float rows that Triton's gfx1201 objects use, on hand-written gfx1201 kernels, against
references written here from the RDNA4 ISA reference guide (not from wmma_gen/emu/isa):

  §16.7 V_MAX_NUM_F32 / V_MIN_NUM_F32 (and _F16): IEEE 754-2019 maximumNumber / minimumNumber -- a NaN
        operand, quiet or signalling, loses to a number; two NaNs give S0 quieted; +0 > -0
  §16.12 V_MAX3_NUM / V_MIN3_NUM / V_MED3_NUM / V_MINMAX_NUM / V_MAXMIN_NUM: built from those
  §7.10 pseudo-scalar V_S_EXP/LOG/RCP/RSQ/SQRT_F32/_F16: SGPR in, SGPR out, EXEC ignored, 16-bit
        results in bits [15:0] with the upper half 0; results as the VALU op (1 ULP)
  §3.5.3.4 Table 12: TTMP8[29:25] holds the wave's index in its workgroup
Cases: signed zeros, quiet/signalling NaNs of both signs, infinities, denormals, extremes, random bits."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from emu_helpers import asm_kernel, lanes_kernel
from test_emu_gfx12 import gfx, run_lanes12

from wmma_gen.emu import GlobalMemory, run_kernel
from wmma_gen.errors import EmulatorFault

F32 = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x40490FDB, 0xC0490FDB, 0x7F800000, 0xFF800000,
       0x7FC00000, 0xFFC00001, 0x7FA00000, 0xFF800123, 0x00000001, 0x80000001, 0x007FFFFF, 0x7F7FFFFF,
       0xFF7FFFFF, 0x3F800001]
F16 = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x4248, 0xC248, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7D00, 0xFC21,
       0x0001, 0x8001, 0x03FF, 0x7BFF, 0xFBFF, 0x3C01]
SPEC = {32: (np.uint32, np.float32, 22), 16: (np.uint16, np.float16, 9)}


# ---- references from the RDNA4 pseudo-code --------------------------------------------------------
def _val(bits, w):
    raw, ft, _ = SPEC[w]
    return float(raw(bits).view(ft))


def _is_nan(bits, w):
    return math.isnan(_val(bits, w))


def _quiet(bits, w):
    return bits | (1 << SPEC[w][2])


def max_num(a, b, w):
    """§16.7 V_MAX_NUM_F32, line by line."""
    if _is_nan(a, w) and _is_nan(b, w):
        return _quiet(a, w)
    if _is_nan(a, w):
        return b
    if _is_nan(b, w):
        return a
    fa, fb = _val(a, w), _val(b, w)
    sign_a, sign_b = a >> (w - 1), b >> (w - 1)
    if fa > fb or (fa == 0 and fb == 0 and not sign_a and sign_b):
        return a
    return b


def min_num(a, b, w):
    """§16.7 V_MIN_NUM_F32, line by line."""
    if _is_nan(a, w) and _is_nan(b, w):
        return _quiet(a, w)
    if _is_nan(a, w):
        return b
    if _is_nan(b, w):
        return a
    fa, fb = _val(a, w), _val(b, w)
    sign_a, sign_b = a >> (w - 1), b >> (w - 1)
    if fa < fb or (fa == 0 and fb == 0 and sign_a and not sign_b):
        return a
    return b


def med3_num(a, b, c, w):
    """The V_MED3 pseudo-code with the _NUM operations."""
    if _is_nan(a, w) or _is_nan(b, w) or _is_nan(c, w):
        return min_num(min_num(a, b, w), c, w)
    mx = _val(max_num(max_num(a, b, w), c, w), w)
    if mx == _val(a, w):
        return max_num(b, c, w)
    if mx == _val(b, w):
        return max_num(a, c, w)
    return max_num(a, b, w)


THREE = {
    "max3_num": lambda a, b, c, w: max_num(max_num(a, b, w), c, w),
    "min3_num": lambda a, b, c, w: min_num(min_num(a, b, w), c, w),
    "med3_num": med3_num,
    "minmax_num": lambda a, b, c, w: max_num(min_num(a, b, w), c, w),
    "maxmin_num": lambda a, b, c, w: min_num(max_num(a, b, w), c, w),
}


def run_lanes1151(body, inputs):
    """One wave on gfx1151 (gfx11 waits), inputs v10.., output v20."""
    prog = gfx(lanes_kernel(body, len(inputs), 1), "gfx1151")
    mem = GlobalMemory()
    src, dst = mem.alloc(128 * len(inputs)), mem.alloc(128)
    mem.write(src, np.concatenate([np.asarray(x, np.uint32) for x in inputs]))
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(dst, 128), np.uint32).copy()


def _run_chunks(body, columns, w):
    """Run `body` over the cases 32 lanes at a time; inputs v10.., outputs v20.. (low w bits kept)."""
    n, outs = len(columns[0]), []
    for s in range(0, n, 32):
        cols = [np.array((list(c[s:s + 32]) + [0] * 32)[:32], np.uint32) for c in columns]
        outs.append(run_lanes12(body, cols)[0][:min(32, n - s)])
    return np.concatenate(outs) & np.uint32((1 << w) - 1)


def _pairs(special, w, rng):
    rand = rng.integers(0, 1 << w, (64, 2)).tolist()
    return list(itertools.product(special, special)) + [tuple(r) for r in rand]


@pytest.mark.parametrize("op,form", [("max", "e32"), ("min", "e32"), ("max", "e64"), ("min", "e64")])
def test_v_max_min_num_f32_is_ieee_maximum_minimum_number(op, form):
    cases = _pairs(F32, 32, np.random.default_rng(1))
    a, b = zip(*cases)
    got = _run_chunks(f"\tv_{op}_num_f32_{form} v20, v10, v11", [a, b], 32)
    ref = [(max_num if op == "max" else min_num)(x, y, 32) for x, y in cases]
    bad = [(hex(x), hex(y), hex(int(g)), hex(r)) for (x, y), g, r in zip(cases, got, ref) if int(g) != r]
    assert not bad, bad[:5]


@pytest.mark.parametrize("op", ["max", "min"])
def test_v_max_min_num_f16_low_halves(op):
    cases = _pairs(F16, 16, np.random.default_rng(2))
    a, b = zip(*cases)
    hi = 0xABCD0000                       # garbage in the high halves of the sources must not matter
    got = _run_chunks(f"\tv_{op}_num_f16_e64 v20, v10, v11", [[x | hi for x in a], [y | hi for y in b]], 16)
    ref = [(max_num if op == "max" else min_num)(x, y, 16) for x, y in cases]
    assert [int(g) for g in got] == ref


def test_snan_loses_to_a_number_on_gfx12_but_not_in_gfx11_ieee_mode():
    """The one place maximumNumber differs from the RDNA3 IEEE-mode V_MAX_F32 the gfx11 rows implement."""
    a, b = [0x7FA00000] * 32, [0x3F800000] * 32
    assert (run_lanes12("\tv_max_num_f32_e32 v20, v10, v11", [a, b])[0] == 0x3F800000).all()
    assert (run_lanes1151("\tv_max_f32_e32 v20, v10, v11", [a, b]) == 0x7FE00000).all()


@pytest.mark.parametrize("name", sorted(THREE))
@pytest.mark.parametrize("w", [32, 16])
def test_three_operand_num_ops(name, w):
    special = F32 if w == 32 else F16
    rng = np.random.default_rng(3)
    picks = [special[i] for i in (0, 1, 2, 3, 6, 7, 8, 10, 12)]
    cases = list(itertools.product(picks, picks, picks)) + [tuple(r) for r in rng.integers(0, 1 << w, (64, 3)).tolist()]
    # a few plain numbers in every order (the median picks a different operand each time)
    nums = [0x3F800000, 0x40000000, 0xC0400000] if w == 32 else [0x3C00, 0x4000, 0xC200]
    cases += list(itertools.permutations(nums))
    a, b, c = zip(*cases)
    got = _run_chunks(f"\tv_{name}_f{w} v20, v10, v11, v12", [a, b, c], w)
    ref = [THREE[name](x, y, z, w) for x, y, z in cases]
    bad = [(hex(x), hex(y), hex(z), hex(int(g)), hex(r)) for (x, y, z), g, r in zip(cases, got, ref) if int(g) != r]
    assert not bad, bad[:5]


def test_dual_issue_max_min_num():
    a = [0x7FC00000, 0x3F800000, 0x80000000, 0x7FA00000] * 8
    b = [0x40000000, 0x7FC00000, 0x00000000, 0xBF800000] * 8
    out = run_lanes12("\tv_dual_max_num_f32 v20, v10, v11 :: v_dual_min_num_f32 v21, v10, v11", [a, b], n_out=2)
    assert out[0].tolist() == [max_num(x, y, 32) for x, y in zip(a, b)]
    assert out[1].tolist() == [min_num(x, y, 32) for x, y in zip(a, b)]


def test_num_rows_are_gfx12_only():
    with pytest.raises(EmulatorFault, match="illegal instruction v_max3_num_f32 for gfx1151"):
        run_lanes1151("\tv_max3_num_f32 v20, v10, v10, v10", [np.zeros(32)])


# ---- pseudo-scalar transcendentals -------------------------------------------------------------------
EXACT = {"rcp": lambda x: 1 / x, "sqrt": math.sqrt, "rsq": lambda x: 1 / math.sqrt(x),
         "exp": lambda x: 2.0 ** x, "log": math.log2}


def run_vs(lines: list[str], inputs: list[int], n_out: int, arch: str = "gfx1201", exec_zero: bool = False):
    """s8.. = inputs (u32, as literals), run `lines`, return s40..s40+n_out (u32)."""
    movs = "\n".join(f"\ts_mov_b32 s{8 + k}, {v:#x}" for k, v in enumerate(inputs))
    stores = "\n".join(f"\tv_mov_b32_e32 v2, s{40 + k}\n\tglobal_store_b32 v1, v2, s[4:5] offset:{4 * k}"
                       for k in range(n_out))
    body = "\n".join(f"\t{x}" for x in lines)
    if exec_zero:
        body = f"\ts_mov_b32 s60, exec_lo\n\ts_mov_b32 exec_lo, 0\n{body}\n\ts_mov_b32 exec_lo, s60"
    prog = gfx(asm_kernel(f"""\ts_load_b64 s[4:5], s[0:1], 0x0
\t{"s_wait_kmcnt 0x0" if arch.startswith("gfx12") else "s_waitcnt lgkmcnt(0)"}
{movs}
{body}
\tv_mov_b32_e32 v1, 0
{stores}
\ts_endpgm""", nargs=1), arch)
    mem = GlobalMemory()
    dst = mem.alloc(4 * n_out)
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([dst], (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(dst, 4 * n_out), np.uint32).copy()


def _ulps(got_bits, exact, w):
    """Distance in units in the last place between a w-bit float result and the exact value."""
    raw, ft, _ = SPEC[w]
    g = float(raw(got_bits).view(ft))
    mant = {32: 23, 16: 10}[w]
    if abs(exact) >= float(np.finfo(ft).max) * (1 + 2.0 ** -(mant + 1)):    # rounds to infinity
        exact = math.copysign(math.inf, exact)
    if math.isinf(exact) or exact == 0 or math.isinf(g):
        return 0 if g == exact and math.copysign(1, g) == math.copysign(1, exact) else math.inf
    tiny = float(np.finfo(ft).smallest_subnormal)
    ulp = max(float(np.spacing(ft(abs(exact)))), tiny)
    return abs(g - exact) / ulp


def _scalar_cases(w):
    specials = F32 if w == 32 else F16
    rng = np.random.default_rng(4)
    rand = rng.integers(0, 1 << (w - 1), 24).tolist()             # positive: every op is defined there
    return [int(x) for x in specials] + [int(x) for x in rand]


@pytest.mark.parametrize("op", sorted(EXACT))
@pytest.mark.parametrize("w", [32, 16])
def test_pseudo_scalar_transcendental_within_one_ulp(op, w):
    cases = _scalar_cases(w)
    got = []
    for s in range(0, len(cases), 16):
        chunk = cases[s:s + 16]
        got += run_vs([f"v_s_{op}_f{w} s{40 + k}, s{8 + k}" for k in range(len(chunk))], chunk, len(chunk)).tolist()
    for x, g in zip(cases, got):
        if w == 16:
            assert g >> 16 == 0, f"{op}({x:#x}): upper half {g:#x} not zero"
        v = _val(x, w)
        with np.errstate(all="ignore"):
            try:
                exact = EXACT[op](v)
            except (ValueError, ZeroDivisionError, OverflowError):
                exact = None
        if op == "exp" and exact is None:
            exact = math.inf
        if op in ("rcp", "rsq") and v == 0:           # 1/(+-0) and 1/sqrt(+-0) = +-inf
            exact = math.copysign(math.inf, v)
        if op == "log" and v == 0:
            exact = -math.inf
        if math.isnan(v) or exact is None or (isinstance(exact, float) and math.isnan(exact)):
            assert _is_nan(g, w), f"{op}({x:#x}) = {g:#x}, want NaN"
            continue
        assert _ulps(g, exact, w) <= 1, f"{op}({x:#x}) = {g:#x}, exact {exact!r}"


def test_pseudo_scalar_ignores_exec_reads_low_half_and_takes_source_modifiers():
    # 16-bit input with garbage above bits [15:0]; EXEC = 0 while the ops run
    got = run_vs(["v_s_rcp_f32 s40, s8", "v_s_sqrt_f16 s41, s9", "v_s_rcp_f32 s42, -s8",
                  "v_s_sqrt_f32 s43, |s10|", "v_s_exp_f32 s44, s11 clamp", "v_s_rcp_f32 s45, s8 mul:4"],
                 [0x40000000, 0xDEAD4400, 0xC0800000, 0x40400000], 6, exec_zero=True)
    assert got.tolist() == [0x3F000000, 0x00004000, 0xBF000000, 0x40000000, 0x3F800000, 0x40000000]


def test_pseudo_scalar_ops_are_gfx12_only():
    with pytest.raises(EmulatorFault, match="illegal instruction v_s_rcp_f32 for gfx1151"):
        run_vs(["v_s_rcp_f32 s40, s8"], [0x40000000], 1, arch="gfx1151")


def test_salu_num_ops_on_gfx1201_and_the_rdna35_names_on_gfx1151():
    snan, one = 0x7FA00000, 0x3F800000
    got = run_vs(["s_max_num_f32 s40, s8, s9", "s_min_num_f32 s41, s9, s8", "s_maximum_f32 s42, s8, s9",
                  "s_min_num_f16 s43, s10, s11"], [snan, one, 0x8000, 0x0000], 4)
    assert got.tolist() == [one, one, 0x7FE00000, 0x8000]
    # gfx1151 (RDNA3.5 §6.8 s_max_f32, IEEE mode): the signalling NaN comes back quieted
    assert run_vs(["s_max_f32 s40, s8, s9"], [snan, one], 1, arch="gfx1151").tolist() == [0x7FE00000]


# ---- architected wave id ----------------------------------------------------------------------------
def test_ttmp8_holds_the_wave_index_in_its_workgroup():
    body = """\ts_load_b64 s[4:5], s[0:1], 0x0
\ts_wait_kmcnt 0x0
\ts_bfe_u32 s8, ttmp8, 0x50019
\ts_bfe_u32 s9, ttmp8, 0x1001e
\ts_mul_i32 s10, ttmp9, 4
\ts_add_co_i32 s10, s10, s8
\ts_lshl_b32 s10, s10, 3
\tv_mov_b32_e32 v1, s10
\tv_mov_b32_e32 v2, s8
\tv_mov_b32_e32 v3, s9
\tglobal_store_b64 v1, v[2:3], s[4:5]
\ts_endpgm"""
    prog = gfx(asm_kernel(body, nargs=1))
    mem = GlobalMemory()
    out = mem.alloc(8 * 8)
    run_kernel(prog, mem, (2, 1, 1), (128, 1, 1), prog.pack_kernarg([out], (2, 1, 1), (128, 1, 1)))
    got = np.frombuffer(mem.read(out, 64), np.uint32).reshape(8, 2)
    assert got[:, 0].tolist() == [0, 1, 2, 3] * 2 and (got[:, 1] == 1).all()   # GridYZvalid = 1
