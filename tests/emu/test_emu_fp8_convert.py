"""gfx12's fp8/bf8 conversions decode from machine code and run on the emulator (emu/isa/fp8_convert.py).

Each case is one instruction's bytes as `llvm-mc-22 -mcpu=gfx1201 -show-encoding` writes them for the
text beside it (test_encodings_are_llvms re-checks them when llvm-mc-22 is installed), placed in a
gfx1201 kernel that loads v10 (src0), v11 (src1 / seed), v12 (the old destination) and stores v20
(and v21). References are written here from the format definitions (OCP E4M3 "FN": bias 7, no inf,
NaN S.1111.111; E5M2: bias 15, IEEE-like) in float64, independent of wmma_gen.numerics; ml_dtypes is
not installed here."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from emu_helpers import lanes_kernel

from wmma_gen.codeobj import decode
from wmma_gen.emu import GlobalMemory, Program, run_kernel

u32 = np.uint32
CASES = {   # LLVM's text -> its encoding (llvm-mc-22 -mcpu=gfx1201)
    "v_cvt_f32_fp8_e32 v20, v10": "0a d9 28 7e",
    "v_cvt_f32_fp8_e64 v20, v10 byte_sel:1": "14 10 ec d5 0a 01 00 00",
    "v_cvt_f32_fp8_e64 v20, v10 byte_sel:2": "14 08 ec d5 0a 01 00 00",
    "v_cvt_f32_fp8_e64 v20, v10 byte_sel:3": "14 18 ec d5 0a 01 00 00",
    "v_cvt_f32_bf8_e32 v20, v10": "0a db 28 7e",
    "v_cvt_f32_bf8_e64 v20, v10 byte_sel:1": "14 10 ed d5 0a 01 00 00",
    "v_cvt_f32_bf8_e64 v20, v10 byte_sel:2": "14 08 ed d5 0a 01 00 00",
    "v_cvt_f32_bf8_e64 v20, v10 byte_sel:3": "14 18 ed d5 0a 01 00 00",
    "v_cvt_pk_f32_fp8_e32 v[20:21], v10": "0a dd 28 7e",
    "v_cvt_pk_f32_fp8_e64 v[20:21], v10 op_sel:[1,0]": "14 08 ee d5 0a 01 00 00",
    "v_cvt_pk_f32_bf8_e32 v[20:21], v10": "0a df 28 7e",
    "v_cvt_pk_f32_bf8_e64 v[20:21], v10 op_sel:[1,0]": "14 08 ef d5 0a 01 00 00",
    "v_cvt_pk_fp8_f32 v20, v10, v11": "14 00 69 d7 0a 17 02 00",
    "v_cvt_pk_fp8_f32 v20, v10, v11 op_sel:[0,0,1]": "14 40 69 d7 0a 17 02 00",
    "v_cvt_pk_bf8_f32 v20, v10, v11": "14 00 6a d7 0a 17 02 00",
    "v_cvt_pk_bf8_f32 v20, v10, v11 op_sel:[0,0,1]": "14 40 6a d7 0a 17 02 00",
    "v_cvt_pk_bf8_f32 v20, -v10, |v11|": "14 02 6a d7 0a 17 02 20",
    "v_cvt_sr_fp8_f32 v20, v10, v11": "14 00 6b d7 0a 17 02 00",
    "v_cvt_sr_fp8_f32 v20, v10, v11 byte_sel:1": "14 20 6b d7 0a 17 02 00",
    "v_cvt_sr_fp8_f32 v20, v10, v11 byte_sel:2": "14 40 6b d7 0a 17 02 00",
    "v_cvt_sr_fp8_f32 v20, v10, v11 byte_sel:3": "14 60 6b d7 0a 17 02 00",
    "v_cvt_sr_bf8_f32 v20, v10, v11": "14 00 6c d7 0a 17 02 00",
    "v_cvt_sr_bf8_f32 v20, v10, v11 byte_sel:1": "14 20 6c d7 0a 17 02 00",
    "v_cvt_sr_bf8_f32 v20, v10, v11 byte_sel:2": "14 40 6c d7 0a 17 02 00",
    "v_cvt_sr_bf8_f32 v20, v10, v11 byte_sel:3": "14 60 6c d7 0a 17 02 00",
    "v_cvt_f32_fp8_dpp v20, v10 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf": "fa d8 28 7e 0a b1 00 ff",
    "v_cvt_f32_bf8_e64_dpp v20, v10 byte_sel:2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf":
        "14 08 ed d5 fa 00 00 00 0a b1 00 ff",
    "v_cvt_pk_fp8_f32_e64_dpp v20, v10, v11 op_sel:[0,0,1] quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf":
        "14 40 69 d7 fa 16 02 00 0a b1 00 ff",
    "v_cvt_sr_fp8_f32_e64_dpp v20, v10, v11 byte_sel:3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf":
        "14 60 6b d7 fa 16 02 00 0a b1 00 ff",
}
SWAP_PAIRS = np.arange(32) ^ 1          # quad_perm:[1,0,3,2]: lane l reads lane l ^ 1


def _case(prefix: str, sel: str = "") -> str:
    (text,) = [t for t in CASES if t.startswith(prefix + " ") and (sel in t if sel else "_sel" not in t)]
    return text


def run(text: str, src0, src1=None, old=None, waves: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(v20, v21) per lane after the instruction `text` (decoded from its bytes) ran on gfx1201;
    more than 32 waves run as several workgroups' worth of launches (the kernel's lane id is 10 bits)."""
    if waves > 32:
        parts = [run(text, *(None if x is None else np.asarray(x)[k:k + 1024] for x in (src0, src1, old)),
                     waves=min(32, waves - k // 32)) for k in range(0, 32 * waves, 1024)]
        return tuple(np.concatenate([p[i] for p in parts]) for i in (0, 1))
    n = 32 * waves
    zero = np.zeros(n, u32)
    ins = [np.asarray(x).view(u32) if np.asarray(x).dtype == np.float32 else np.asarray(x, u32)
           for x in (src0, zero if src1 is None else src1, zero if old is None else old)]
    body = "\tv_mov_b32_e32 v20, v12\n\tv_mov_b32_e32 v21, v12\n\ts_nop 0"
    asm = lanes_kernel(body, 3, 2, waves).replace("--gfx1100", "--gfx1201")
    asm = asm.replace("s_waitcnt lgkmcnt(0)", "s_wait_kmcnt 0x0")
    asm = asm.replace("s_waitcnt vmcnt(0)", "s_wait_loadcnt 0x0")
    prog = Program.from_isa(asm)        # gfx12 split s_waitcnt (RDNA4 ISA guide, S_WAIT_*CNT)
    (at,) = [i for i, x in enumerate(prog.instrs) if x.mnemonic == "s_nop"]
    (decoded,), _ = decode(bytes.fromhex(CASES[text]), "gfx12")
    assert decoded.text == text                      # the listing prints what LLVM prints
    prog.instrs[at] = decoded
    mem = GlobalMemory()
    src, dst = mem.alloc(4 * 3 * n), mem.alloc(4 * 2 * n)
    mem.write(src, np.concatenate(ins))
    run_kernel(prog, mem, (1, 1, 1), (n, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (n, 1, 1)))
    out = np.frombuffer(mem.read(dst, 4 * 2 * n), u32).reshape(2, n)
    return out[0].copy(), out[1].copy()


# ---- independent references (float64, from the format definitions) --------------------------
FMT = {"fp8": (4, 3, 7), "bf8": (5, 2, 15)}           # exponent bits, mantissa bits, bias


def widen_ref(code: int, fmt: str) -> float:
    ebits, mbits, bias = FMT[fmt]
    s, e, m = code >> 7, (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if fmt == "fp8" and e == 15 and m == 7:
        return float("nan")
    if fmt == "bf8" and e == 31:
        return float("nan") if m else (-1) ** s * float("inf")
    mag = m * 2.0 ** (1 - bias - mbits) if e == 0 else (1 + m / 2 ** mbits) * 2.0 ** (e - bias)
    return -mag if s else mag


def _grid(fmt: str):
    """Non-negative finite codes and values, plus the first step past max finite (fp8 0x7F,
    bf8 0x7C: the code an overflow writes, NaN resp. inf)."""
    codes = [c for c in range(0x80) if np.isfinite(widen_ref(c, fmt))]
    values = [widen_ref(c, fmt) for c in codes]
    over = 0x7F if fmt == "fp8" else 0x7C
    step = values[-1] - values[-2]
    return np.array(codes + [over]), np.array(values + [values[-1] + step])


def narrow_rne_ref(x: float, fmt: str) -> int:
    """Nearest grid value, ties to the even code; past the last step: the overflow code."""
    if np.isnan(x):
        return 0xFF if fmt == "fp8" else 0xFE
    codes, values = _grid(fmt)
    a = min(abs(x), values[-1])
    d = np.abs(values - a)
    best = np.flatnonzero(d == d.min())
    code = int(codes[best[0]] if len(best) == 1 else [c for c in codes[best] if c % 2 == 0][0])
    return code | (0x80 if np.signbit(x) else 0)


def narrow_sr_ref(x: float, seed: int, fmt: str) -> int:
    """Truncate to the grid, then step up iff the dropped fraction's top D bits (D = 23 - mantissa
    bits; bits below the format's subnormal step are gone) plus the seed's top D bits carry."""
    if np.isnan(x):
        return 0xFF if fmt == "fp8" else 0xFE
    _, mbits, bias = FMT[fmt]
    codes, values = _grid(fmt)
    a, D = abs(x), 23 - mbits
    if a >= values[-1]:
        k = len(values) - 1
    else:
        k = int(np.flatnonzero(values <= a)[-1])
        q = values[k + 1] - values[k]
        frac = np.floor((a - values[k]) / q * 2 ** D)
        k += int(frac + (seed >> (32 - D)) >= 2 ** D)
    return int(codes[k]) | (0x80 if np.signbit(x) else 0)


def edge_values(fmt: str) -> np.ndarray:
    """Ties between neighbours (subnormal ones included), max finite and the overflow boundary,
    subnormals, f32 denormals, zeros, inf, NaN, and both signs of all."""
    _, values = _grid(fmt)
    mids = (values[1:] + values[:-1]) / 2
    top, last = values[-2], values[-1]
    f32 = np.float32
    special = [0.0, top, (top + last) / 2, np.nextafter(f32((top + last) / 2), f32(0)),
               np.nextafter(f32((top + last) / 2), f32(np.inf)), last, 1e30, np.inf, np.nan,
               values[1] / 2, np.nextafter(f32(values[1] / 2), f32(1)), values[1] / 4, 1e-40, 3e-45]
    near = np.concatenate([np.nextafter(mids.astype(f32), f32(0)),
                           np.nextafter(mids.astype(f32), f32(np.inf))])
    v = np.concatenate([mids, near, values[:-1], special]).astype(np.float32)
    v = np.concatenate([v, -v])
    return np.concatenate([v, np.zeros(-len(v) % 32, np.float32)])


def _bytes_of(word, k):
    return (np.asarray(word, u32) >> u32(8 * k)) & u32(0xFF)


def _same_f32(got: np.ndarray, want: np.ndarray):
    got = got.view(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok].view(u32), want[ok].astype(np.float32).view(u32))   # -0 kept


# ---- widening: every code of both formats, every byte / word select --------------------------
@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
@pytest.mark.parametrize("byte", [0, 1, 2, 3])
def test_widen_every_code_from_the_selected_byte(fmt, byte):
    codes = np.arange(256, dtype=u32)
    other = np.random.default_rng(byte).integers(0, 1 << 32, 256, dtype=np.uint64).astype(u32)
    word = (other & ~(u32(0xFF) << u32(8 * byte))) | (codes << u32(8 * byte))   # other bytes: noise
    text = _case(f"v_cvt_f32_{fmt}_e32") if byte == 0 else _case(f"v_cvt_f32_{fmt}_e64", f"byte_sel:{byte}")
    got, _ = run(text, word, waves=8)
    _same_f32(got, np.array([widen_ref(int(c), fmt) for c in codes]))


@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
@pytest.mark.parametrize("word", [0, 1])
def test_widen_pair_reads_the_selected_word(fmt, word):
    rng = np.random.default_rng(word)
    lo = np.arange(256, dtype=u32)
    hi = rng.permutation(256).astype(u32)
    noise = rng.integers(0, 1 << 16, 256, dtype=np.uint64).astype(u32)
    pair = lo | (hi << u32(8))
    src = (pair << u32(16 * word)) | (noise << u32(16 * (1 - word)))
    text = _case(f"v_cvt_pk_f32_{fmt}_e64", "op_sel") if word else _case(f"v_cvt_pk_f32_{fmt}_e32")
    d0, d1 = run(text, src, waves=8)
    _same_f32(d0, np.array([widen_ref(int(c), fmt) for c in lo]))
    _same_f32(d1, np.array([widen_ref(int(c), fmt) for c in hi]))


# ---- narrowing with round-to-nearest-even ------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
@pytest.mark.parametrize("word", [0, 1])
def test_pack_rounds_to_nearest_even_into_the_selected_word(fmt, word):
    a = edge_values(fmt)
    b = a[::-1].copy()
    waves = len(a) // 32
    old = np.random.default_rng(7).integers(0, 1 << 32, len(a), dtype=np.uint64).astype(u32)
    text = f"v_cvt_pk_{fmt}_f32 v20, v10, v11" + (" op_sel:[0,0,1]" if word else "")
    got, _ = run(text, a, b, old, waves=waves)
    want_lo = np.array([narrow_rne_ref(float(x), fmt) for x in a], u32)
    want_hi = np.array([narrow_rne_ref(float(x), fmt) for x in b], u32)
    np.testing.assert_array_equal(_bytes_of(got, 2 * word), want_lo)
    np.testing.assert_array_equal(_bytes_of(got, 2 * word + 1), want_hi)
    kept = u32(0xFFFF) << u32(16 * (1 - word))
    np.testing.assert_array_equal(got & kept, old & kept)       # the other word keeps its value


def test_pack_applies_neg_and_abs_to_the_sources():
    x = np.array([1.5, -3.0, 0.0, -0.0, 57344.0, -1e-6] * 6, np.float32)[:32]
    y = -x[::-1].copy()
    got, _ = run("v_cvt_pk_bf8_f32 v20, -v10, |v11|", x, y)
    np.testing.assert_array_equal(_bytes_of(got, 0), [narrow_rne_ref(-float(v), "bf8") for v in x])
    np.testing.assert_array_equal(_bytes_of(got, 1), [narrow_rne_ref(abs(float(v)), "bf8") for v in y])


# ---- narrowing with stochastic rounding --------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
@pytest.mark.parametrize("byte", [0, 1, 2, 3])
def test_stochastic_rounding_by_the_seed_into_the_selected_byte(fmt, byte):
    rng = np.random.default_rng(10 + byte)
    x = edge_values(fmt)
    scaled = rng.standard_normal(len(x)) * 2.0 ** rng.integers(-12, 12, len(x))
    x = np.concatenate([x, scaled.astype(np.float32)])
    n = len(x) - len(x) % 32
    x = x[:n]
    seed = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
    seed[:32] = 0                       # seed 0 truncates toward zero
    seed[32:64] = 0xFFFFFFFF            # all ones: up whenever any kept dropped bit is set
    old = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
    text = _case(f"v_cvt_sr_{fmt}_f32", f"byte_sel:{byte}") if byte else _case(f"v_cvt_sr_{fmt}_f32")
    got, _ = run(text, x, seed, old, waves=n // 32)
    want = np.array([narrow_sr_ref(float(v), int(s), fmt) for v, s in zip(x, seed)], u32)
    np.testing.assert_array_equal(_bytes_of(got, byte), want)
    kept = ~(u32(0xFF) << u32(8 * byte))
    np.testing.assert_array_equal(got & kept, old & kept)       # the other bytes keep their value


def test_stochastic_rounding_is_unbiased_between_two_grid_points():
    """1 + 5/64 lies 5/8 of the way from 1 to 1.125 (E4M3 step 1/8): over uniform seeds it rounds
    up 5/8 of the time, so the mean of the rounded values is the input (to sampling error)."""
    n = 32 * 16
    x = np.full(n, 1 + 5 / 64, np.float32)
    seed = np.random.default_rng(3).integers(0, 1 << 32, n, dtype=np.uint64).astype(u32)
    got, _ = run("v_cvt_sr_fp8_f32 v20, v10, v11", x, seed, waves=16)
    ups = np.mean(_bytes_of(got, 0) == 0x39)                      # 1.125 = S.0111.001
    assert set(np.unique(_bytes_of(got, 0))) <= {0x38, 0x39}
    assert abs(ups - 5 / 8) < 4 * np.sqrt(5 / 8 * 3 / 8 / n)


# ---- DPP forms: src0 comes from the lane quad_perm names ---------------------------------------
def test_dpp_forms_read_src0_from_the_permuted_lane():
    rng = np.random.default_rng(5)
    word = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(u32)
    got, _ = run(_case("v_cvt_f32_fp8_dpp"), word)
    _same_f32(got, np.array([widen_ref(int(c), "fp8") for c in _bytes_of(word, 0)[SWAP_PAIRS]]))
    got, _ = run(_case("v_cvt_f32_bf8_e64_dpp", "byte_sel:2"), word)
    _same_f32(got, np.array([widen_ref(int(c), "bf8") for c in _bytes_of(word, 2)[SWAP_PAIRS]]))
    a, b = (rng.standard_normal(32).astype(np.float32) * 100 for _ in range(2))
    got, _ = run(_case("v_cvt_pk_fp8_f32_e64_dpp", "op_sel"), a, b, word)
    np.testing.assert_array_equal(_bytes_of(got, 2), [narrow_rne_ref(float(v), "fp8") for v in a[SWAP_PAIRS]])
    np.testing.assert_array_equal(_bytes_of(got, 3), [narrow_rne_ref(float(v), "fp8") for v in b])
    np.testing.assert_array_equal(got & u32(0xFFFF), word & u32(0xFFFF))
    seed = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(u32)
    got, _ = run(_case("v_cvt_sr_fp8_f32_e64_dpp", "byte_sel:3"), a, seed, word)
    np.testing.assert_array_equal(_bytes_of(got, 3), [narrow_sr_ref(float(v), int(s), "fp8")
                                                      for v, s in zip(a[SWAP_PAIRS], seed)])


# ---- the encodings above are LLVM's ------------------------------------------------------------
def test_encodings_are_llvms():
    mc = shutil.which("llvm-mc-22")
    if mc is None:
        pytest.skip("llvm-mc-22 is not installed (the CASES bytes were taken from it)")
    out = subprocess.run([mc, "-arch=amdgcn", "-mcpu=gfx1201", "-show-encoding"], input="\n".join(CASES),
                         capture_output=True, text=True, timeout=60).stdout
    got = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S.*?)\s*; encoding: \[(.*)\]", line)
        if m:
            got[m.group(1)] = " ".join(b[2:] for b in m.group(2).split(","))
    assert got == CASES


# ---- end to end: MLIR -> gfx1201 code object -> emulator ----------------------------------------
# The ROCDL ops the fp8 attention tiles build (ops/paged_attention/fp8_tiles.to_e4m3): two
# v_cvt_pk_fp8_f32 fill both words of one i32 (lane values 0-3 in bytes 0-3), four
# v_cvt_f32_fp8 (byte_sel 0-3) widen it back.
ROUND_TRIP = """
gpu.func @fp8_round_trip(%X: memref<128xf32>, %Y: memref<128xf32>)
    kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
  %t = gpu.thread_id x
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %i0 = arith.muli %t, %c4 : index
  %i1 = arith.addi %i0, %c1 : index
  %i2 = arith.addi %i1, %c1 : index
  %i3 = arith.addi %i2, %c1 : index
  %x0 = memref.load %X[%i0] : memref<128xf32>
  %x1 = memref.load %X[%i1] : memref<128xf32>
  %x2 = memref.load %X[%i2] : memref<128xf32>
  %x3 = memref.load %X[%i3] : memref<128xf32>
  %p = llvm.mlir.poison : i32
  %lo = rocdl.cvt.pk.fp8.f32 %x0, %x1 -> %p[false] : i32
  %w = rocdl.cvt.pk.fp8.f32 %x2, %x3 -> %lo[true] : i32
  %f0 = rocdl.cvt.f32.fp8 %w[0] : f32
  %f1 = rocdl.cvt.f32.fp8 %w[1] : f32
  %f2 = rocdl.cvt.f32.fp8 %w[2] : f32
  %f3 = rocdl.cvt.f32.fp8 %w[3] : f32
  memref.store %f0, %Y[%i0] : memref<128xf32>
  memref.store %f1, %Y[%i1] : memref<128xf32>
  memref.store %f2, %Y[%i2] : memref<128xf32>
  memref.store %f3, %Y[%i3] : memref<128xf32>
  gpu.return
}
"""
# The AMDGPU dialect's stochastic rounding into byte 2 (bf8) and the pair widening of word 1.
STOCHASTIC = """
gpu.func @bf8_stochastic(%X: memref<32xf32>, %S: memref<32xi32>, %Y: memref<64xf32>)
    kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
  %t = gpu.thread_id x
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.load %X[%t] : memref<32xf32>
  %s = memref.load %S[%t] : memref<32xi32>
  %w = amdgpu.packed_stoch_round_fp8 %a + %s into undef[2] : f32 to vector<4xf8E5M2>
  %p = amdgpu.ext_packed_fp8 %w[2] : vector<4xf8E5M2> to vector<2xf32>
  %p0 = vector.extract %p[0] : f32 from vector<2xf32>
  %o = arith.muli %t, %c2 : index
  memref.store %p0, %Y[%o] : memref<64xf32>
  gpu.return
}
"""


def _compiled(body: str):
    from mlir_helper import wrap
    from wmma_gen.compiler import compile_mlir
    try:
        return compile_mlir(wrap(body, "gfx1201"), "gfx1201")
    except Exception as e:  # noqa: BLE001 - the reason is reported in the skip message
        pytest.skip(f"cannot build a gfx1201 code object here ({type(e).__name__}: {e})")


def _launch(kernel, inputs: list[np.ndarray], n_out: int) -> np.ndarray:
    prog = Program.from_code_object(kernel.hsaco)      # the machine code, not the ISA text
    mem = GlobalMemory()
    ptrs = [mem.alloc(4 * len(x)) for x in inputs] + [mem.alloc(4 * n_out)]
    for p, x in zip(ptrs, inputs):
        mem.write(p, np.asarray(x).view(u32))
    run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg(ptrs, (1, 1, 1), (32, 1, 1)))
    return np.frombuffer(mem.read(ptrs[-1], 4 * n_out), u32).copy()


def test_mlir_fp8_round_trip_on_gfx1201():
    kernel = _compiled(ROUND_TRIP)
    for text in ("v_cvt_pk_fp8_f32 ", "op_sel:[0,0,1]", "v_cvt_f32_fp8_e32 ", "byte_sel:3"):
        assert text in kernel.isa, text
    x = np.random.default_rng(11).choice(edge_values("fp8"), 128, replace=False).astype(np.float32)
    x[:4] = [np.nan, -np.inf, 464.0, -464.5]
    got = _launch(kernel, [x], 128)
    _same_f32(got, np.array([widen_ref(narrow_rne_ref(float(v), "fp8"), "fp8") for v in x]))


def test_mlir_bf8_stochastic_rounding_on_gfx1201():
    kernel = _compiled(STOCHASTIC)
    for text in ("v_cvt_sr_bf8_f32 ", "byte_sel:2", "v_cvt_pk_f32_bf8_e64 ", "op_sel:[1,0]"):
        assert text in kernel.isa, text
    rng = np.random.default_rng(12)
    x = (rng.standard_normal(32) * 100).astype(np.float32)
    seed = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(u32)
    got = _launch(kernel, [x, seed], 64)[0::2]
    want = [widen_ref(narrow_sr_ref(float(v), int(s), "bf8"), "bf8") for v, s in zip(x, seed)]
    _same_f32(got, np.array(want))


def test_gfx11_has_no_fp8_conversions():
    """The rows are gated to GFX12 (table.GFX12): a gfx1100 program faults naming the instruction
    and the targets that have it (llvm-mc-22 -mcpu=gfx1100 / gfx1151: "instruction not supported on
    this GPU"; LLVM PR #78414 adds FeatureFP8Insts to FeatureISAVersion12 only)."""
    from wmma_gen.errors import EmulatorFault
    prog = Program.from_isa(lanes_kernel("\tv_cvt_pk_fp8_f32 v20, v10, v11", 2, 1))
    mem = GlobalMemory()
    src, dst = mem.alloc(256), mem.alloc(128)
    with pytest.raises(EmulatorFault, match=r"v_cvt_pk_fp8_f32.*gfx1100.*gfx1200, gfx1201"):
        run_kernel(prog, mem, (1, 1, 1), (32, 1, 1), prog.pack_kernarg([src, dst], (1, 1, 1), (32, 1, 1)))
