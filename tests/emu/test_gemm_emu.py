"""Every gfx11 dtype/acc x shapes x layouts: the compiled kernel, run on the emulator,
matches the numpy reference (integers exactly, floats within check.tolerance)."""
import numpy as np
import pytest

import wmma_gen
from wmma_gen import hostdata
from wmma_gen.ops.gemm import fit_schedule
from wmma_gen.ops.gemm.check import check_gemm, compare, tolerance
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

ARCH = "gfx1100"
GFX11 = [("f16", "f32"), ("bf16", "f32"), ("f16", "f16"), ("bf16", "bf16"), ("i8", "i32"), ("i4", "i32")]
# every layout on the shape with edge tiles; one tile and several workgroups on two layouts each
CASES = [((48, 40, 72), lay) for lay in ("NN", "NT", "TN", "TT")] + \
        [((16, 16, 16), "NN"), ((16, 16, 16), "TT"), ((64, 96, 128), "NT"), ((64, 96, 128), "TN")]


def _check(d: GemmDirective, p: GemmProblem, s: Schedule | None = None, seed: int = 0):
    r = check_gemm(d, s or fit_schedule(d, ARCH, p), ARCH, p, "emu", seed=seed)
    assert r.source == "emulator"
    assert r.passed, r
    if d.is_int:
        assert r.max_abs == 0.0
    return r


@pytest.mark.parametrize("dtype, acc", GFX11, ids=[f"{d}-{a}" for d, a in GFX11])
@pytest.mark.parametrize("shape, layout", CASES, ids=["x".join(map(str, s)) + "-" + lay for s, lay in CASES])
def test_every_gfx11_dtype_shape_layout(dtype, acc, shape, layout):
    _check(GemmDirective(dtype, acc=acc, layout=layout), GemmProblem(*shape))


@pytest.mark.parametrize("dtype", ["i8", "i4"])
def test_unsigned_integers(dtype):
    _check(GemmDirective(dtype, unsigned=True, layout="NT"), GemmProblem(32, 48, 64))


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_odd_shapes_and_batch(dtype):
    _check(GemmDirective(dtype, layout="TN"), GemmProblem(33, 17, 40, batch=2))


@pytest.mark.parametrize("sched", [dict(lds="ab", buffers=2), dict(lds="a", lds_pad=8, raster="col"),
                                   dict(block_m=32, block_n=32, waves_m=1, waves_n=2, raster="grouped", group_m=2)])
def test_other_schedules(sched):
    _check(GemmDirective("f16"), GemmProblem(64, 64, 96), Schedule(**sched))


@pytest.mark.parametrize("kw", [dict(out_dtype="f16", alpha=0.5, beta=-1.25, bias="n", activation="relu"),
                                dict(acc="f16", beta=2.0, bias="m"),
                                dict(activation="silu", bias="n")])
def test_fused_epilogue(kw):
    _check(GemmDirective("f16", layout="NT", **kw), GemmProblem(40, 24, 48))


def test_gelu_epilogue():
    _check(GemmDirective("f16", activation="gelu"), GemmProblem(32, 32, 32))


def test_gelu_epilogue_with_edge_tiles():
    _check(GemmDirective("f16", layout="NT", activation="gelu", alpha=0.75), GemmProblem(40, 24, 48))


def test_gate_rejects_wrong_results():
    d, p = GemmDirective("f16"), GemmProblem(16, 16, 64)
    ref = np.random.default_rng(0).uniform(-8, 8, size=(1, 16, 16))
    assert compare(d, ref + 0.01 * tolerance(d, p) * 8, ref, p)[0]    # within tol of max|ref|
    bad = ref.copy()
    bad[0, 3, 5] += 0.5
    ok, max_abs, _, _, worst = compare(d, bad, ref, p)
    assert not ok and worst == (0, 3, 5) and max_abs == pytest.approx(0.5)
    nan = ref.copy()
    nan[0, 0, 0] = np.nan
    assert not compare(d, nan, ref, p)[0]
    di = GemmDirective("i8")
    assert not compare(di, ref + 1, ref, GemmProblem(16, 16, 16))[0]


def test_gemm_api_matches_numpy():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (2, 24, 40)).astype(np.float16)   # batched A
    b = rng.uniform(-1, 1, (40, 32)).astype(np.float16)      # broadcast B
    c = wmma_gen.gemm(a, b, device="emu")
    assert c.shape == (2, 24, 32) and c.dtype == np.float32
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() <= 1e-5 * np.abs(ref).max()


def test_gemm_api_transposed_bf16_with_epilogue():
    rng = np.random.default_rng(2)
    a_t = rng.uniform(-1, 1, (32, 20)).astype(np.float32)    # stored K x M (layout T)
    b = rng.uniform(-1, 1, (32, 24)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (20, 24)).astype(np.float32)
    bias = rng.uniform(-1, 1, (20, 1)).astype(np.float32)    # per row
    out = wmma_gen.gemm(a_t, b, dtype="bf16", layout="TN", c=c0, beta=0.5, bias=bias, activation="relu",
                        device="emu")
    A, B = hostdata.rounded(a_t, "bf16").T, hostdata.rounded(b, "bf16")
    ref = np.maximum(A @ B + 0.5 * c0 + bias, 0)
    assert out.shape == (20, 24)
    assert np.abs(out - ref).max() <= 1e-5 * np.abs(ref).max()


def test_gemm_api_rounds_alpha_beta_to_f32():
    """alpha=0.1 is applied as the nearest f32 (the epilogue's precision), like a BLAS f32 scalar."""
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (16, 32)).astype(np.float16), rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    c0 = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    out = wmma_gen.gemm(a, b, c=c0, alpha=0.1, beta=-0.3, device="emu")
    al, be = float(np.float32(0.1)), float(np.float32(-0.3))
    ref = al * (a.astype(np.float64) @ b.astype(np.float64)) + be * c0
    assert np.abs(out - ref).max() <= 1e-5 * np.abs(ref).max()


def test_gemm_api_i4_and_i8():
    rng = np.random.default_rng(3)
    a, b = rng.integers(-8, 8, (16, 32)), rng.integers(-8, 8, (32, 16))
    assert np.array_equal(wmma_gen.gemm(a, b, dtype="i4", device="emu"), a @ b)
    a8, b8 = rng.integers(-128, 128, (16, 48)).astype(np.int8), rng.integers(-128, 128, (48, 16)).astype(np.int8)
    out = wmma_gen.gemm(a8, b8, device="emu")
    assert out.dtype == np.int32 and np.array_equal(out, a8.astype(np.int64) @ b8.astype(np.int64))


@pytest.mark.parametrize("call, field", [
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((9, 4), np.float16), device="emu"), "b.shape"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float32), np.zeros((8, 4), np.float32), device="emu"), "dtype"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), layout="NX"), "layout"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), bias=np.zeros(3)),
     "bias.shape"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), beta=1.0), "c"),
    (lambda: wmma_gen.gemm(np.zeros((2, 4, 8), np.float16), np.zeros((3, 8, 4), np.float16)), "batch"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), device="rocm"), "device"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), alpha=1e39), "alpha"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), beta=float("nan")), "beta"),
    (lambda: wmma_gen.gemm(np.zeros((4, 8), np.float16), np.zeros((8, 4), np.float16), alpha="2"), "alpha"),
])
def test_gemm_api_errors_name_the_field(call, field):
    with pytest.raises(ValueError) as e:
        call()
    assert e.value.field == field


def test_default_large_schedule_transposed_staging_matches_numpy():
    """The 128x256 default with two K rows per thread in the transposed LDS staging (g=2,
    packed by v_perm_b32: kernels/tiles._column) and SADDR addressing, both operands
    transposed into LDS (TN), 4 K tiles (k_unroll 2), on gfx1100."""
    from wmma_gen.ops.gemm.defaults import LARGE
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (128, 128)).astype(np.float16)      # (M, K)
    b = rng.uniform(-1, 1, (128, 256)).astype(np.float16)      # (K, N)
    out = wmma_gen.gemm(a.T.copy(), b, layout="TN", arch="gfx1100", device="emu", schedule=LARGE)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(out - ref).max() < 1e-3
