"""Property suite (issue 24 item 1): operands given as arbitrary numpy views compute the same
math as the float64 references.

Views drawn (`views` / `embed`): any memory order of the dims (transposes), Fortran order,
steps, reversed axes, a window of a bigger buffer at an offset, stride-0 broadcasts (batch,
rows, heads, ...), and packed QKV (q, k, v slices of one (B, S, 3, H, D) or (B, S, H + 2Hkv, D)
array). The numpy API hands a view to the kernel as strides when it can and copies it once to
C order when it cannot (device/launcher.py); either way the result must match the reference
computed from the view's own values. Every view is written into a bigger buffer filled with
NaN (floats) or a sentinel (ints), so a kernel that reads outside the view, or a copy freed
before its upload, shows up as NaN or a wrong integer.

Tolerances are the existing suites': GEMM ops/gemm/check.tolerance through wmma_gen.compare
(integers exact); attention O <= 3u * max(max|V|, 1), LSE 1e-5 relative, dead rows exactly 0 /
-inf (tests/props/test_attention_properties.py); gradients <= 8u * max|ref| + 1e-3
(tests/emu/test_attention_api.py); u = 2**-11 (f16).

Cost: M, N, K <= 48, S <= 32, head_dim 32, fixed seed (derandomize); each kernel key compiles
once (disk cache), each emulator run takes ~0.1-1 s. tests/emu/test_device_calls_views.py
drives the same views through the device-resident path."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wmma_gen
from wmma_gen.compare import compare
from wmma_gen.attention_common.reference import attention_backward, attention_forward
from wmma_gen.ops.gemm.check import tolerance
from wmma_gen.ops.gemm.directive import LAYOUTS, GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.reference import gemm_reference

SETTINGS = dict(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
U = 2.0 ** -11
D = 32
NUMPY = {"f16": np.float16, "i8": np.int8, "u8": np.uint8, "f32": np.float32, "i32": np.int32}
FILL = {np.dtype(np.float16): np.nan, np.dtype(np.float32): np.nan, np.dtype(np.int8): 127,
        np.dtype(np.uint8): 255, np.dtype(np.int32): 2 ** 31 - 1}


# ---- views ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """Where an array of some shape lives: `order` lists the logical dims outermost first in
    memory, each dim takes every `steps[i]`-th element after `pads[i][0]` skipped ones (and
    `pads[i][1]` spare at the end), `flips` reverses dims, `broadcast` dims are stored once
    (stride 0), `fortran` allocates the buffer in Fortran order."""
    order: tuple[int, ...]
    steps: tuple[int, ...]
    flips: tuple[bool, ...]
    pads: tuple[tuple[int, int], ...]
    broadcast: tuple[bool, ...]
    fortran: bool


@st.composite
def views(draw, ndim: int, broadcast: bool = True, lead_broadcast: bool = False, tame_odds: int = 1) -> View:
    """Any View of an ndim array. tame_odds in tame_odds + 1 of them (default: half) are `tame`
    -- last dim innermost, unit step, no flips: the kernels take them as strides, no copy --;
    the rest may need the launcher's copy.
    `broadcast` allows stride-0 dims (rarely; the first dim often when `lead_broadcast`: a
    batch shared by every matrix)."""
    tame = draw(st.integers(0, tame_odds)) > 0
    last = ndim - 1

    def bcast(i):
        if not broadcast or (tame and i == last):
            return st.just(False)
        return st.sampled_from([False, True] if i == 0 and lead_broadcast else [False] * 5 + [True])
    order = tuple(draw(st.permutations(range(ndim))))
    return View(order=tuple(i for i in order if i != last) + (last,) if tame else order,
                steps=tuple(1 if tame and i == last else draw(st.sampled_from([1, 1, 2, 3])) for i in range(ndim)),
                flips=tuple(False if tame else draw(st.booleans()) for _ in range(ndim)),
                pads=tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(ndim)),
                broadcast=tuple(draw(bcast(i)) for i in range(ndim)),
                fortran=not tame and draw(st.booleans()))


def embed(values: np.ndarray, v: View) -> tuple[np.ndarray, np.ndarray]:
    """(a view equal to `values` laid out as `v`, the buffer it lives in). Values must be
    constant along v's broadcast dims (only their first entry is stored)."""
    src = values[tuple(slice(0, 1) if b else slice(None) for b in v.broadcast)]
    sizes = [lo + (n - 1) * s + 1 + hi for n, s, (lo, hi) in zip(src.shape, v.steps, v.pads)]
    buf = np.full([sizes[i] for i in v.order], FILL[values.dtype], values.dtype, order="F" if v.fortran else "C")
    x = buf.transpose(np.argsort(v.order))
    x = x[tuple(slice(lo, lo + (n - 1) * s + 1, s) for n, s, (lo, _) in zip(src.shape, v.steps, v.pads))]
    x = x[tuple(slice(None, None, -1) if f else slice(None) for f in v.flips)]
    x[...] = src
    strides = tuple(0 if b else s for b, s in zip(v.broadcast, x.strides))
    return np.lib.stride_tricks.as_strided(x, values.shape, strides), buf


def random_values(seed: int, shape, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "f16":
        return rng.standard_normal(shape).astype(np.float16)
    if dtype == "f32":
        return rng.standard_normal(shape).astype(np.float32)
    lo, hi = (-128, 127) if dtype == "i8" else (0, 255)
    return rng.integers(lo, hi + 1, shape).astype(NUMPY[dtype])


@st.composite
def operands(draw, shape, dtype: str, broadcast: bool = True, lead_broadcast: bool = False,
             tame_odds: int = 1) -> np.ndarray:
    """Random values of `shape` (constant along the drawn broadcast dims) as a drawn view."""
    v = draw(views(len(shape), broadcast, lead_broadcast, tame_odds))
    stored = tuple(1 if b else n for b, n in zip(v.broadcast, shape))
    values = np.broadcast_to(random_values(draw(st.integers(0, 2 ** 32 - 1)), stored, dtype), shape)
    return embed(values, v)[0]


# ---- GEMM ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GemmCase:
    dtype: str
    layout: str
    m: int
    n: int
    k: int
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray | None = None          # C0 for beta = 0.5 (f16 only)

    @property
    def batch(self) -> int:
        return max([x.shape[0] for x in (self.a, self.b, self.c) if x is not None and x.ndim == 3], default=1)

    @property
    def batched(self) -> bool:
        return any(x is not None and x.ndim == 3 for x in (self.a, self.b, self.c))

    def kwargs(self) -> dict:
        kw = dict(layout=self.layout, unsigned=self.dtype == "u8")
        if self.c is not None:
            kw.update(c=self.c, beta=0.5)
        return kw


def stored_shapes(layout: str, m: int, n: int, k: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((k, m) if layout[0] == "T" else (m, k)), ((n, k) if layout[1] == "T" else (k, n))


@st.composite
def gemm_cases(draw, dtypes=("f16", "i8", "u8")) -> GemmCase:
    dtype, layout = draw(st.sampled_from(dtypes)), draw(st.sampled_from(LAYOUTS))
    m, n, k = draw(st.integers(1, 48)), draw(st.integers(1, 48)), draw(st.integers(1, 48))
    batch = draw(st.integers(1, 3))
    form = draw(st.sampled_from(["2d", "3d", "a3d", "b3d"]))      # which operands carry the batch
    sa, sb = stored_shapes(layout, m, n, k)
    a3, b3 = form in ("3d", "a3d"), form in ("3d", "b3d")
    a = draw(operands((batch,) * a3 + sa, dtype, lead_broadcast=a3), label="a")
    b = draw(operands((batch,) * b3 + sb, dtype, lead_broadcast=b3), label="b")
    c = None
    if dtype == "f16" and draw(st.integers(0, 3)) == 0:
        c = draw(operands(((batch,) if form != "2d" else ()) + (m, n), "f32"), label="c")
    return GemmCase(dtype, layout, m, n, k, a, b, c)


def _exact(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64 if x.dtype.kind == "f" else np.int64)


def check_gemm_views(case: GemmCase, arch: str) -> None:
    before = [np.array(x) for x in (case.a, case.b)]
    out = wmma_gen.gemm(case.a, case.b, arch=arch, device="emu", **case.kwargs())
    d = GemmDirective("i8" if case.dtype == "u8" else case.dtype, layout=case.layout,
                      unsigned=case.dtype == "u8", beta=0.5 if case.c is not None else 0.0)
    p = GemmProblem(case.m, case.n, case.k, case.batch)
    ref = gemm_reference(d, _exact(case.a), _exact(case.b), None if case.c is None else _exact(case.c))
    shape = (case.batch, case.m, case.n)
    assert out.shape == (shape if case.batched else shape[1:])
    got = compare(out.reshape(shape), np.broadcast_to(ref, shape), tol=tolerance(d, p), exact=d.is_int,
                  out_dtype=d.out_dtype)
    strides = {n: x.strides for n, x in (("a", case.a), ("b", case.b), ("c", case.c)) if x is not None}
    assert got.passed, f"{arch} {d} {p}: max_rel={got.max_rel} tol={got.tol} worst={got.worst} strides={strides}"
    assert all(np.array_equal(x, y) for x, y in zip(before, (case.a, case.b))), "an input was written"


@settings(max_examples=15, **SETTINGS)
@given(case=gemm_cases())
def test_gemm_of_views_matches_float64(case):
    check_gemm_views(case, "gfx1100")


# ---- attention ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionCase:
    layout: str
    causal: bool
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    packed: bool

    def kwargs(self) -> dict:
        return dict(causal=self.causal, layout=self.layout)


def dense_shape(layout: str, batch: int, seq: int, heads: int) -> tuple[int, int, int, int]:
    return (batch, seq, heads, D) if layout == "bshd" else (batch, heads, seq, D)


@st.composite
def attention_cases(draw, tame_odds: int = 1) -> AttentionCase:
    """bshd or bhsd, GQA (heads = group * kv_heads), causal or not; q, k, v drawn views or
    slices of one packed QKV array (itself a drawn view)."""
    layout, causal = draw(st.sampled_from(["bshd", "bhsd"])), draw(st.booleans())
    batch, kv = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    heads = kv * draw(st.sampled_from([1, 2]))
    sq = draw(st.integers(1, 32))
    packed = draw(st.booleans())
    if packed:           # q, k, v as slices of one array: (B, S, 3, H, D) or, for GQA, (B, S, H + 2Hkv, D)
        shape = (batch, sq, 3, heads, D) if heads == kv else (batch, sq, heads + 2 * kv, D)
        qkv = draw(operands(shape, "f16", lead_broadcast=True, tame_odds=tame_odds), label="qkv")
        if heads == kv:
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        else:
            q, k, v = qkv[:, :, :heads], qkv[:, :, heads:heads + kv], qkv[:, :, heads + kv:]
        if layout == "bhsd":
            q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    else:
        sk = draw(st.integers(1, 32))
        q = draw(operands(dense_shape(layout, batch, sq, heads), "f16", lead_broadcast=True, tame_odds=tame_odds),
                  label="q")
        k = draw(operands(dense_shape(layout, batch, sk, kv), "f16", lead_broadcast=True, tame_odds=tame_odds),
                  label="k")
        v = draw(operands(dense_shape(layout, batch, sk, kv), "f16", lead_broadcast=True, tame_odds=tame_odds),
                  label="v")
    return AttentionCase(layout, causal, q, k, v, packed)


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _dead_rows(rl: np.ndarray, layout: str, shape) -> np.ndarray:
    """Mask shaped like q of the query rows that see no key (reference LSE -inf)."""
    dead = ~np.isfinite(rl)                                  # (B, H, Sq)
    dead = dead if layout == "bhsd" else dead.transpose(0, 2, 1)
    return np.broadcast_to(dead[..., None], shape)


def check_attention_views(case: AttentionCase, arch: str, data=None) -> None:
    """Forward on the views against float64; then the backward with o, do, lse as drawn views
    (`data` draws them; None: contiguous)."""
    o, lse = wmma_gen.attention(case.q, case.k, case.v, return_lse=True, arch=arch, device="emu", **case.kwargs())
    qf, kf, vf = _f64(case.q), _f64(case.k), _f64(case.v)
    ro, rl = attention_forward(qf, kf, vf, **case.kwargs())
    where = f"{arch} {case.layout} causal={case.causal} q{case.q.strides} k{case.k.strides} v{case.v.strides}"
    err, tol = np.abs(_f64(o) - ro).max(initial=0.0), 3 * U * max(np.abs(vf).max(initial=0.0), 1.0)
    assert not np.isnan(_f64(o)).any() and err <= tol, f"O error {err} > {tol}: {where}"
    assert np.all(_f64(o)[_dead_rows(rl, case.layout, o.shape)] == 0), f"rows without keys not 0: {where}"
    seen = np.isfinite(rl)
    assert np.array_equal(np.isneginf(lse), ~seen), f"LSE -inf rows differ: {where}"
    rel = np.abs(lse[seen] - rl[seen]) / (1 + np.abs(rl[seen]))
    assert rel.max(initial=0.0) <= 1e-5, f"LSE relative error {rel.max()}: {where}"

    do = random_values(1, o.shape, "f16")
    if data is not None:       # o, do, lse handed back as views too
        o = embed(o, data.draw(views(4, broadcast=False), label="o view"))[0]
        do = data.draw(operands(o.shape, "f16"), label="do")
        lse = embed(lse, data.draw(views(3, broadcast=False), label="lse view"))[0]
    grads = wmma_gen.attention_backward(case.q, case.k, case.v, o, do, lse, arch=arch, device="emu",
                                        **case.kwargs())
    refs = attention_backward(qf, kf, vf, _f64(o), _f64(do), rl, **case.kwargs())
    for name, g, r in zip(("dq", "dk", "dv"), grads, refs):
        assert g.shape == r.shape, name
        err, tol = np.abs(_f64(g) - r).max(initial=0.0), 8 * U * np.abs(r).max(initial=0.0) + 1e-3
        assert err <= tol, f"{name} error {err} > {tol}: {where} o{o.strides} do{do.strides} lse{lse.strides}"


@settings(max_examples=12, **SETTINGS)
@given(case=attention_cases(), data=st.data())
def test_attention_and_backward_of_views_match_float64(case, data):
    check_attention_views(case, "gfx1100", data)


# ---- gfx1201: one fixed case of each --------------------------------------------------------------
def test_gfx1201_reversed_fortran_stepped_views():
    rng = np.random.default_rng(12)
    a, _ = embed(rng.standard_normal((2, 40, 24)).astype(np.float16),
                 View((2, 1, 0), (1, 2, 1), (True, False, True), ((1, 0), (0, 2), (2, 1)), (False,) * 3, True))
    b = np.broadcast_to(rng.standard_normal((1, 33, 24)).astype(np.float16)[:, ::-1], (2, 33, 24))   # NT
    check_gemm_views(GemmCase("f16", "NT", 40, 33, 24, a, b), "gfx1201")
    ai = np.asfortranarray(rng.integers(-128, 128, (17, 29)).astype(np.int8))[:, ::-1]
    bi = rng.integers(-128, 128, (29, 70)).astype(np.int8)[:, 1:70:3]
    check_gemm_views(GemmCase("i8", "NN", 17, 23, 29, ai, bi), "gfx1201")
    qkv = rng.standard_normal((1, 24, 3, 2, 40)).astype(np.float16)[..., 4:36]     # packed, head_dim window
    q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3)[:, ::-1] for i in range(3))     # bhsd, heads reversed
    check_attention_views(AttentionCase("bhsd", True, q, k, v, True), "gfx1201")


@pytest.mark.parametrize("ndim", [1, 3, 5])
def test_embed_builds_the_view_it_describes(ndim):
    """The generator itself: values survive, and every drawn feature reaches the strides."""
    shape = (2, 3, 4, 2, 3)[:ndim]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    v = View(tuple(reversed(range(ndim))), (2,) * ndim, (True,) + (False,) * (ndim - 1), ((1, 1),) * ndim,
             (False,) * ndim, False)
    got, buf = embed(x, v)
    assert np.array_equal(got, x) and got.strides[0] < 0 and not got.flags.c_contiguous
    assert np.isnan(buf).sum() == buf.size - x.size
    bx = np.broadcast_to(x[:1], shape)
    got, _ = embed(bx, View(tuple(range(ndim)), (1,) * ndim, (False,) * ndim, ((0, 0),) * ndim,
                            (True,) + (False,) * (ndim - 1), False))
    assert np.array_equal(got, bx) and got.strides[0] == 0
