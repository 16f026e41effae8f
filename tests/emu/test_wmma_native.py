"""The compiled f32-accumulate WMMA kernel (emu/native) against the numpy paths it replaces,
bit for bit: whole WMMAs on gfx11 and gfx12 over wave counts that do not fill its blocks
(8 waves in these tests, 32 by default), operands in every layout the binder passes, inf/NaN in a late wave (the waves before
it finish natively, the rest through the reference path, D written over C in place), the
gfx11 replication fault (raised before the failing block is written, naming the lanes even
when D overwrote A in earlier blocks), and the build: a missing compiler or
WMMA_GEN_EMU_NATIVE=0 leaves the numpy path with the same results."""
import contextlib

import numpy as np
import pytest

from emu_helpers import run_lanes
from test_wmma_f32acc import FAMILIES, _operands, _reference
from wmma_gen.emu import native
from wmma_gen.emu.isa import wmma11, wmma12, wmma_f32acc, wmma_native
from wmma_gen.emu.isa.wmma_regs import NotReplicated
from wmma_gen.errors import EmulatorFault

pytestmark = pytest.mark.skipif(native.library() is None, reason="no C compiler: " + native.status())


@pytest.fixture(autouse=True)
def blocks_of_8(monkeypatch):
    """8-wave blocks (the default is 32) so that a dozen waves reach the later-block paths."""
    monkeypatch.setattr(wmma_native, "BLOCK_WAVES", 8)


def _both(fn):
    """fn() with the compiled kernel and again without it."""
    with_native = fn()
    with native.disabled():
        assert native.library() is None
        without = fn()
    assert native.library() is not None
    return with_native, without


def test_every_layout_in_use_has_the_row_form_the_kernel_reads():
    for mod in (wmma11, wmma12):
        assert wmma_native.available(*wmma_f32acc._layouts(mod._PLANS))
    for bits in (8, 4):
        assert wmma_native.available(*wmma11._int_layouts(bits)) and wmma_native.available(*wmma12._int_layouts(bits, 16))
    assert wmma12._int_layouts(4, 32) is None                 # 16x16x32 iu4: the numpy path
    # and a layout that is not of that form is refused (the numpy path runs it)
    idx = np.arange(256).reshape(16, 16)
    assert wmma_native.rows((idx % 32).T, (idx // 32).T, 2, False) is None   # rows cross lanes with a stride


@pytest.mark.parametrize("waves, block", [(1, 32), (13, 8), (64, 32), (70, 32), (5, 1)])
@pytest.mark.parametrize("kind", ["normal", "wide"])
@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_native_equals_numpy_and_reference(family, t, kind, waves, block, monkeypatch):
    monkeypatch.setattr(wmma_native, "BLOCK_WAVES", block)
    mod, table, _, _ = FAMILIES[family]
    a, b, c = _operands(family, t, kind, w=waves, seed=waves)
    want = _reference(family, a, b, c, t)
    got, numpy_path = _both(lambda: wmma_f32acc.fused_f32_acc(a, b, c, t, mod._PLANS, replicated=family == "gfx11"))
    assert got.dtype == np.uint32 and np.array_equal(got, want)
    assert np.array_equal(numpy_path, want)


def _pack(family, am, bm, cm):
    """16x16 matrices (W, 16, 16) of f16 A, B and f32 C -> register operands (W, 32, R)."""
    mod, _, n, _ = FAMILIES[family]
    pa, pb, pc = mod._PLANS
    w, lanes = am.shape[0], 32 if family == "gfx12" else 16
    a, b = (p.from_matrix(x.view(np.uint16), np.zeros((n, w, 2 * lanes), np.uint16)).view(np.uint32).transpose(1, 2, 0)
            for p, x in ((pa, am), (pb, bm)))
    if family == "gfx11":
        a, b = (np.concatenate([x, x], axis=1) for x in (a, b))
    return a, b, pc.from_matrix(cm.view(np.uint32), np.zeros((8, w, 32), np.uint32)).transpose(1, 2, 0)


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_sum_order_is_k_ascending_from_zero_then_c(family):
    """Products 2^-48, 2^30, -2^30 at k = 0, 1, 2 (f16 subnormal squared and 2^15 squared): in
    float64, (2^-48 + 2^30) - 2^30 = 0 while any order that adds 2^30 - 2^30 first keeps 2^-48
    (an f32 normal). All three paths give 0 + C: k is summed in order, then C added."""
    am = np.zeros((2, 16, 16), np.float16)
    bm = np.zeros((2, 16, 16), np.float16)
    am[:, :, 0], bm[:, 0, :] = np.float16(2.0 ** -24), np.float16(2.0 ** -24)
    am[:, :, 1], bm[:, 1, :] = np.float16(2.0 ** 15), np.float16(2.0 ** 15)
    am[:, :, 2], bm[:, 2, :] = np.float16(-(2.0 ** 15)), np.float16(2.0 ** 15)
    cm = np.zeros((2, 16, 16), np.float32)
    cm[1] = 0.75
    a, b, c = _pack(family, am, bm, cm)
    mod = FAMILIES[family][0]
    got, numpy_path = _both(lambda: wmma_f32acc.fused_f32_acc(a, b, c, "f16", mod._PLANS))
    want = _reference(family, a, b, c, "f16")
    d = mod._PLANS[2].to_matrix(np.ascontiguousarray(got.transpose(2, 0, 1))).view(np.float32)
    assert (d[0] == 0).all() and (d[1] == 0.75).all()
    assert np.array_equal(got, want) and np.array_equal(numpy_path, want)


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_operand_layouts(family):
    """Register-file views (written in place, D = C), a strided wave axis, and C as the binder
    builds an inline constant: a (W, 32, 8) array whose lanes are not contiguous."""
    mod, table, n, _ = FAMILIES[family]
    a, b, c = _operands(family, "f16", "normal", w=11, seed=7)
    fn = table["v_wmma_f32_16x16x16_f16"].fn
    want = _reference(family, a, b, c, "f16")
    v = np.ascontiguousarray(np.concatenate([a, b, c], axis=2).transpose(2, 0, 1))
    fn(v[:n].transpose(1, 2, 0), v[n:2 * n].transpose(1, 2, 0), v[2 * n:].transpose(1, 2, 0), out=v[2 * n:])
    assert np.array_equal(v[2 * n:].transpose(1, 2, 0), want)
    big = np.zeros((8, 22, 32), np.uint32)
    fn(a, b, c, out=big[:, ::2])
    assert np.array_equal(big[:, ::2].transpose(1, 2, 0), want) and not big[:, 1::2].any()
    const = np.full((11, 32, 8), np.float32(0.5).view(np.uint32), np.uint32)
    assert np.array_equal(fn(a, b, const), _reference(family, a, b, const, "f16"))


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_inf_nan_in_a_late_wave(family, t):
    """inf in A of wave 10 and NaN in C of wave 12 (of 14): the first block's D comes from the
    kernel, waves 8.. from the reference path; D lands over C in place and equals the reference
    on every wave, as it does without the kernel."""
    mod, table, n, _ = FAMILIES[family]
    a, b, c = (np.array(x) for x in _operands(family, t, "normal", w=14, seed=9))
    inf16 = 0x7C00 if t == "f16" else 0x7F80
    a[10, 3, 1] = (a[10, 3, 1] & 0xFFFF0000) | inf16
    if family == "gfx11":
        a[:, 16:] = a[:, :16]
    c[12, 5, 2] = 0x7FC00000
    want = _reference(family, a, b, c, t)
    assert not np.isfinite(want.view(np.float32)[10]).all() and np.isnan(want.view(np.float32)[12]).any()

    def run():
        v = np.ascontiguousarray(np.concatenate([a, b, c], axis=2).transpose(2, 0, 1))
        table[f"v_wmma_f32_16x16x16_{t}"].fn(v[:n].transpose(1, 2, 0), v[n:2 * n].transpose(1, 2, 0),
                                             v[2 * n:].transpose(1, 2, 0), out=v[2 * n:])
        return v[2 * n:].transpose(1, 2, 0).copy()
    got, numpy_path = _both(run)
    assert np.array_equal(got, want) and np.array_equal(numpy_path, want)
    # without a fallback nothing is written and the caller is told (None)
    assert wmma_f32acc.fused_f32_acc(a, b, c, t, mod._PLANS, out=np.zeros((8, 14, 32), np.uint32)) is None


def test_not_replicated_names_the_first_block_and_writes_nothing_from_it():
    a, b, c = (np.array(x) for x in _operands("gfx11", "f16", "normal", w=20, seed=4))
    a[17, 21, 3] ^= 1                          # wave 17: lane 21 differs from lane 5
    out = np.zeros((8, 20, 32), np.uint32)
    with pytest.raises(NotReplicated) as e:
        wmma_f32acc.fused_f32_acc(a, b, c, "f16", wmma11._PLANS, out, replicated=True,
                                  fallback=lambda *x: pytest.fail("no fallback on a fault"))
    assert e.value.first_wave == 16            # blocks of 8 waves: 0-7 and 8-15 are done
    assert out[:, :16].any() and not out[:, 16:].any()


# ---- through the binder: hand-written gfx11 kernels run by the emulator -------------------------
def _body(d: str) -> str:
    """A in v[30:37] (every VGPR = input word 0), B in v[40:47] (word 1), C in v[50:57] (word 2),
    one WMMA into `d`, and D's 8 VGPRs to the outputs."""
    first = int(d[2:].split(":")[0])
    lines = ([f"\tv_mov_b32 v{30 + r}, v10" for r in range(8)] + [f"\tv_mov_b32 v{40 + r}, v11" for r in range(8)]
             + [f"\tv_mov_b32 v{50 + r}, v12" for r in range(8)]
             + [f"\tv_wmma_f32_16x16x16_f16 {d}, v[30:37], v[40:47], v[50:57]"]
             + [f"\tv_mov_b32 v{20 + r}, v{first + r}" for r in range(8)])
    return "\n".join(lines)


def _lanes(waves, seed):
    """u32 inputs per lane: A and B words replicated across half-waves, C as f32."""
    rng = np.random.default_rng(seed)
    half = lambda: rng.standard_normal((waves, 16, 2)).astype(np.float16).view(np.uint32)[..., 0]
    a, b = (np.concatenate([x, x], axis=1).reshape(-1) for x in (half(), half()))
    c = rng.standard_normal(32 * waves).astype(np.float32).view(np.uint32)
    return [a, b, c]


def test_kernel_results_match_with_and_without_the_compiled_kernel():
    inputs = _lanes(12, 1)
    got, numpy_path = _both(lambda: run_lanes(_body("v[50:57]"), inputs, n_out=8, waves=12))
    assert all(np.array_equal(x, y) for x, y in zip(got, numpy_path))
    # the value: every VGPR of A holds the same word per lane, so A[m, 2r + h] = word(m) half h
    a = inputs[0].reshape(12, 32)[:, :16].view(np.float16).reshape(12, 16, 2).astype(np.float64)
    b = inputs[1].reshape(12, 32)[:, :16].view(np.float16).reshape(12, 16, 2).astype(np.float64)
    am = np.tile(a, (1, 1, 8))                              # (W, m, k): k = 2r + h
    bm = np.tile(b, (1, 1, 8)).transpose(0, 2, 1)           # (W, k, n)
    c = inputs[2].reshape(12, 32).view(np.float32)           # the same C word in every C VGPR
    d0 = np.asarray(got[0]).reshape(12, 32).view(np.float32)  # D VGPR 0: rows 0 (lanes 0-15), 1 (16-31)
    want = np.stack([(am @ bm)[:, 0, :] + c[:, :16], (am @ bm)[:, 1, :] + c[:, 16:]], axis=1)
    np.testing.assert_allclose(d0.reshape(12, 2, 16), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("d", ["v[50:57]", "v[30:37]"])
def test_replication_fault_names_wave_and_lanes(d):
    """Wave 9 of 12 breaks the replication rule in lane 20 of A. The fault names wave 9 and
    lanes 20/4, with and without the kernel -- also when D is A's registers, so that the waves
    of the first block have A overwritten (with D, whose half-waves differ) before the fault."""
    inputs = _lanes(12, 2)
    inputs[0] = inputs[0].copy()
    inputs[0][9 * 32 + 20] ^= 0x00010000
    messages = []
    for path in (contextlib.nullcontext(), native.disabled()):
        with path, pytest.raises(EmulatorFault) as e:
            run_lanes(_body(d), inputs, n_out=8, waves=12)
        messages.append(str(e.value))
    for m in messages:
        assert "not replicated across half-waves" in m and "lanes [20] differ from lanes [4]" in m
        assert "wave 9" in m or "wave=9" in m
    assert messages[0] == messages[1]


# ---- build ------------------------------------------------------------------------------------------
def test_missing_compiler_warns_once_and_the_numpy_path_runs(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(native, "_state", {})
    assert native.library() is None and native.library() is None
    err = capsys.readouterr().err
    assert err.count("warning: emulator native WMMA kernel not built") == 1 and "no-such-cc" in err
    assert native.status().startswith("numpy (not built")
    a, b, c = _operands("gfx12", "bf16", "wide", w=5, seed=3)
    assert np.array_equal(wmma_f32acc.fused_f32_acc(a, b, c, "bf16", wmma12._PLANS), _reference("gfx12", a, b, c, "bf16"))


def test_disabled_by_environment(monkeypatch, capsys):
    monkeypatch.setenv("WMMA_GEN_EMU_NATIVE", "0")
    monkeypatch.setattr(native, "_state", {})
    assert native.library() is None and "WMMA_GEN_EMU_NATIVE=0" in native.status()
    assert capsys.readouterr().err == ""


def test_build_is_cached_per_source_and_compiler(monkeypatch, tmp_path):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path))
    first = native._build()
    assert first.parent == tmp_path / "native" and first.exists()
    stamp = first.stat().st_mtime_ns
    assert native._build() == first and first.stat().st_mtime_ns == stamp      # not rebuilt
    assert list((tmp_path / "native").iterdir()) == [first]                     # no temp files left


def test_a_library_of_another_abi_is_refused(monkeypatch, capsys):
    """The parameter block's layout is versioned: Python glue and a library built from a source
    with another layout (edited under a running process) must not meet."""
    monkeypatch.setattr(native, "ABI", native.ABI + 1)
    monkeypatch.setattr(native, "_state", {})
    assert native.library() is None
    assert f"library ABI {native.ABI - 1} != {native.ABI}" in capsys.readouterr().err
    assert native.status().startswith("numpy (not built (library ABI")


@pytest.mark.parametrize("block", [0, 33])
def test_block_size_outside_the_kernel_buffers_is_refused(monkeypatch, block):
    monkeypatch.setattr(wmma_native, "BLOCK_WAVES", block)
    a, b, c = _operands("gfx12", "f16", "normal", w=4, seed=1)
    with pytest.raises(RuntimeError, match=f"BLOCK_WAVES={block} outside 1..32"):
        wmma_f32acc.fused_f32_acc(a, b, c, "f16", wmma12._PLANS)


def test_fault_after_a_fallback_names_the_right_wave():
    """inf in A of wave 10 sends waves 8.. to the reference path after the kernel wrote D (over
    A) for waves 0-7; wave 17 then breaks the replication rule. The fault names wave 17, not a
    wave whose A registers now hold D."""
    inputs = _lanes(24, 3)
    inputs[0] = inputs[0].copy()
    for lane in (3, 19):
        inputs[0][10 * 32 + lane] = (inputs[0][10 * 32 + lane] & 0xFFFF0000) | 0x7C00   # f16 +inf
    inputs[0][17 * 32 + 20] ^= 0x00010000
    messages = []
    for path in (contextlib.nullcontext(), native.disabled()):
        with path, pytest.raises(EmulatorFault) as e:
            run_lanes(_body("v[30:37]"), inputs, n_out=8, waves=24)
        messages.append(str(e.value))
    assert "lanes [20] differ from lanes [4]" in messages[0] and messages[0] == messages[1]
    assert "wave 17" in messages[0] or "wave=17" in messages[0]


@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_portable_build_without_f16c_gives_the_same_bits(monkeypatch, tmp_path, family):
    """A CPU without F16C/AVX (baseline x86-64) compiles the shift decode instead of vcvtph2ps:
    the same bits on every f16/bf16 pattern class (subnormals, wide exponents)."""
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86-64 only: -march=x86-64")
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "FLAGS", ("-O2", "-march=x86-64", "-fPIC", "-shared", "-fno-fast-math"))
    monkeypatch.setattr(native, "_state", {})
    assert native.library() is not None and str(tmp_path) in native.status()
    mod = FAMILIES[family][0]
    for t in ("f16", "bf16"):
        for kind in ("normal", "wide"):
            a, b, c = _operands(family, t, kind, w=20, seed=11)
            got = wmma_f32acc.fused_f32_acc(a, b, c, t, mod._PLANS, replicated=family == "gfx11")
            assert np.array_equal(got, _reference(family, a, b, c, t)), (t, kind)


@pytest.mark.parametrize("clamp", [False, True])
@pytest.mark.parametrize("signs", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("family", ["gfx11", "gfx12"])
def test_integer_rows_native_equals_numpy(family, bits, signs, clamp):
    """v_wmma_i32_16x16x16_iu{8,4}: every bit pattern of A and B, C near both int32 limits (so
    that the sum wraps, or saturates with clamp), A/B signed per NEG[0]/NEG[1]; the kernel
    (through the binder's in-place form) and the numpy path give the same registers."""
    mod, table = (wmma11, wmma11.WMMA_OPS) if family == "gfx11" else (wmma12, wmma12.WMMA12_OPS)
    op = table[f"v_wmma_i32_16x16x16_iu{bits}"]
    rng = np.random.default_rng(bits + 2 * signs[0] + 4 * signs[1])
    w = 21
    a = rng.integers(0, 2 ** 32, (w, 32, op.a_regs), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2 ** 32, (w, 32, op.b_regs), dtype=np.uint64).astype(np.uint32)
    if family == "gfx11":
        a[:, 16:], b[:, 16:] = a[:, :16], b[:, :16]
    c = rng.integers(-2 ** 31, 2 ** 31, (w, 32, 8), dtype=np.int64)
    c[::3] = np.where(c[::3] > 0, 2 ** 31 - 1 - rng.integers(0, 1000, c[::3].shape), -2 ** 31 + rng.integers(0, 1000, c[::3].shape))
    c = c.astype(np.int32).view(np.uint32)
    kw = {"neg_lo": (signs[0], signs[1], 0), "clamp": clamp}

    def run():
        v = np.ascontiguousarray(np.concatenate([a, b, c], axis=2).transpose(2, 0, 1))
        na, nb = op.a_regs, op.b_regs
        op.fn(v[:na].transpose(1, 2, 0), v[na:na + nb].transpose(1, 2, 0), v[na + nb:].transpose(1, 2, 0),
              out=v[na + nb:], **kw)
        return v[na + nb:].copy()
    got, numpy_path = _both(run)
    assert np.array_equal(got, numpy_path)
    d = got.view(np.int32)
    if clamp:                     # the limits were reached (below zero only with a signed operand)
        assert (d == 2 ** 31 - 1).any() and ((d == -2 ** 31).any() or signs == (0, 0))
    assert not np.array_equal(got, c.transpose(2, 0, 1))             # D is not just C


def test_integer_row_replication_fault_through_the_kernel():
    a = np.random.default_rng(5).integers(0, 2 ** 32, (10, 32, 4), dtype=np.uint64).astype(np.uint32)
    a[:, 16:] = a[:, :16]
    b = a.copy()
    a[9, 31, 2] ^= 1 << 7
    with pytest.raises(NotReplicated) as e:
        wmma11.WMMA_OPS["v_wmma_i32_16x16x16_iu8"].fn(a, b, np.zeros((10, 32, 8), np.uint32), replicated=True)
    assert e.value.first_wave == 8
