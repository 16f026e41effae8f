"""The device-resident calls (ops/device_calls.py) on the drawn views of
tests/props/test_strided_operands.py, numpy operands in host memory, on the emulator.

A call either writes exactly what the numpy API computes from contiguous copies -- into an
output that may itself be a view (a column window of a bigger C, every other row, a transposed
dim order, ...), leaving the rest of that output's buffer untouched -- or raises DeviceError
naming an argument the kernel cannot address, and writes nothing into it. The device path never
copies, so it refuses exactly the views `addressable` rejects: a negative stride, an inner
stride other than 1, or a stride 0 on an output (elements would overlap). Never a wrong number.

Two contract gaps found while writing this (a refused later step after an earlier one ran; read-only
outputs written) are fixed and tested at the end."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1] / "props"))
from test_strided_operands import (FILL, SETTINGS, attention_cases, embed, gemm_cases,  # noqa: E402
                                   operands, views)

import wmma_gen  # noqa: E402
from wmma_gen.errors import DeviceError  # noqa: E402
from wmma_gen.ops.attention.device import attention_backward_into, attention_into  # noqa: E402
from wmma_gen.ops.gemm.device import gemm_into  # noqa: E402

ARCH = "gfx1100"
C = np.ascontiguousarray


def addressable(x: np.ndarray, output: bool = False) -> bool:
    """The device path's rule (device/launcher.layout_problem), restated on numpy strides."""
    st_ = [s // x.itemsize if n > 1 else 0 for n, s in zip(x.shape, x.strides)]
    if any(s < 0 for s in st_) or (x.ndim and x.shape[-1] > 1 and st_[-1] != 1):
        return False
    return not (output and any(n > 1 and s == 0 for n, s in zip(x.shape, st_)))


@st.composite
def outputs(draw, shape, dtype: str, label: str, tame_odds: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(a zeroed output view drawn like the inputs -- rarely with a stride-0 dim --, its buffer
    filled with FILL around it)."""
    v = draw(views(len(shape), broadcast=draw(st.integers(0, 3)) == 0, tame_odds=tame_odds), label=f"{label} view")
    return embed(np.zeros(shape, {"f16": np.float16, "f32": np.float32, "i32": np.int32}[dtype]), v)


def _untouched(buf: np.ndarray) -> bool:
    fill = FILL[buf.dtype]
    return bool(np.isnan(buf).all()) if fill != fill else bool((buf == fill).all())


def call_or_refusal(call, inputs: dict, outs: dict, want: dict) -> None:
    """Run `call`; it must refuse iff some operand is not addressable (naming one of them and
    leaving the refused outputs unwritten), else write `want` into `outs` and nothing around it."""
    refused = [n for n, x in inputs.items() if x is not None and not addressable(x)]
    refused += [n for n, (x, _) in outs.items() if not addressable(x, output=True)]
    event("refused" if refused else "ran")
    if refused:
        with pytest.raises(DeviceError) as e:
            call()
        assert re.search(rf"argument ({'|'.join(refused)})\b", str(e.value), re.I), (refused, str(e.value))
        for n in refused:
            if n in outs:
                assert (outs[n][0] == 0).all(), f"refused output {n} was written"
        return
    call()
    for n, (x, buf) in outs.items():
        assert np.array_equal(x, want[n]), f"{n} differs from the numpy API on contiguous copies"
        x[...] = FILL[x.dtype]
        assert _untouched(buf), f"{n}: elements outside the view were written"


# ---- GEMM ------------------------------------------------------------------------------------
@settings(max_examples=15, **SETTINGS)
@given(case=gemm_cases(), data=st.data())
def test_gemm_into_views_equal_the_contiguous_call_or_are_refused(case, data):
    shape = ((case.batch,) if case.batched else ()) + (case.m, case.n)
    is_int = case.dtype != "f16"
    out = "i32" if is_int else ("f32" if case.c is not None else data.draw(st.sampled_from(["f32", "f16"])))
    bias = data.draw(operands((case.n,), "f32"), label="bias") if not is_int and data.draw(st.booleans()) else None
    c = data.draw(outputs(shape, out, "c"))
    kw = dict(layout=case.layout, unsigned=case.dtype == "u8")
    if case.c is not None:
        kw["beta"] = 0.5
    want = wmma_gen.gemm(C(case.a), C(case.b), **kw, c=None if case.c is None else C(case.c),
                         bias=None if bias is None else C(bias), out_dtype=None if is_int else out,
                         arch=ARCH, device="emu")
    call_or_refusal(lambda: gemm_into(case.a, case.b, c[0], c0=case.c, bias=bias, arch=ARCH, **kw),
                    {"a": case.a, "b": case.b, "c0": case.c, "bias": bias}, {"c": c}, {"c": want})


@pytest.mark.parametrize("which,make", [
    ("a", lambda a, b: (a[::-1], b)), ("b", lambda a, b: (a, b[:, ::-1])),
    ("b", lambda a, b: (a, np.asfortranarray(b))), ("a", lambda a, b: (np.repeat(a, 2, 1)[:, ::2], b))])
def test_issue24_views_numpy_api_exact_device_path_refuses(which, make):
    """The four silent-wrong cases of issue 24: the numpy API now equals the contiguous call;
    gemm_into refuses them by name and leaves C (a column window of a bigger array) alone."""
    rng = np.random.default_rng(24)
    a, b = rng.standard_normal((40, 24)).astype(np.float16), rng.standard_normal((24, 36)).astype(np.float16)
    x, y = make(a, b)
    want = wmma_gen.gemm(C(x), C(y), device="emu", arch=ARCH)
    assert np.array_equal(wmma_gen.gemm(x, y, device="emu", arch=ARCH), want)
    big = np.full((40, 50), 7, np.float32)
    with pytest.raises(DeviceError, match=rf"argument {which.upper()}\b"):
        gemm_into(x, y, big[:, 8:44], arch=ARCH)
    assert (big == 7).all()
    gemm_into(C(x), C(y), big[:, 8:44], arch=ARCH)
    assert np.array_equal(big[:, 8:44], want) and (big[:, :8] == 7).all() and (big[:, 44:] == 7).all()


# ---- attention ---------------------------------------------------------------------------------
def _lse_shape(case) -> tuple[int, int, int]:
    b, h, s = (case.q.shape[0], case.q.shape[2], case.q.shape[1]) if case.layout == "bshd" else case.q.shape[:3]
    return b, h, s


@settings(max_examples=12, **SETTINGS)
@given(case=attention_cases(), data=st.data())
def test_attention_into_views_equal_the_contiguous_call_or_are_refused(case, data):
    o = data.draw(outputs(case.q.shape, "f16", "o"))
    outs = {"o": o}
    if data.draw(st.booleans()):
        outs["lse"] = data.draw(outputs(_lse_shape(case), "f32", "lse"))
    wo, wl = wmma_gen.attention(C(case.q), C(case.k), C(case.v), return_lse=True, arch=ARCH, device="emu",
                                **case.kwargs())
    lse = outs["lse"][0] if "lse" in outs else None
    call_or_refusal(lambda: attention_into(case.q, case.k, case.v, o[0], lse, arch=ARCH, **case.kwargs()),
                    {"q": case.q, "k": case.k, "v": case.v}, outs, {"o": wo, "lse": wl})


@settings(max_examples=12, **SETTINGS)
@given(case=attention_cases(tame_odds=3), data=st.data())
def test_attention_backward_into_views_equal_the_contiguous_call_or_are_refused(case, data):
    q, k, v = C(case.q), C(case.k), C(case.v)
    o, lse = wmma_gen.attention(q, k, v, return_lse=True, arch=ARCH, device="emu", **case.kwargs())
    do = data.draw(operands(o.shape, "f16", tame_odds=3), label="do")
    dt = data.draw(st.sampled_from(["f16", "f32"]))
    want = wmma_gen.attention_backward(q, k, v, o, C(do), lse, out_dtype="f32" if dt == "f32" else "same",
                                       arch=ARCH, device="emu", **case.kwargs())
    ov = embed(o, data.draw(views(4, broadcast=False, tame_odds=3), label="o view"))[0]
    lv = embed(lse, data.draw(views(3, broadcast=False, tame_odds=3), label="lse view"))[0]
    outs = {n: data.draw(outputs(x.shape, dt, n, tame_odds=3)) for n, x in zip(("dq", "dk", "dv"), (q, k, v))}
    call_or_refusal(lambda: attention_backward_into(case.q, case.k, case.v, ov, do, lv, *(x for x, _ in outs.values()),
                                                    arch=ARCH, **case.kwargs()),
                    {"q": case.q, "k": case.k, "v": case.v, "o": ov, "do": do, "lse": lv}, outs,
                    dict(zip(("dq", "dk", "dv"), want)))


# ---- contract gaps found by these tests, fixed ------------------------------------------------------
def test_backward_refusal_writes_nothing():
    rng = np.random.default_rng(3)
    q, do = (rng.standard_normal((1, 20, 2, 32)).astype(np.float16) for _ in range(2))
    k, v = (rng.standard_normal((1, 24, 1, 32)).astype(np.float16) for _ in range(2))
    o, lse = wmma_gen.attention(q, k, v, return_lse=True, arch=ARCH, device="emu")
    dq, dk, dv = np.zeros((1, 20, 2, 32), np.float16)[:, ::-1], np.zeros_like(k), np.zeros_like(v)
    with pytest.raises(DeviceError, match=r"argument dq\b"):
        attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, arch=ARCH)
    assert not dk.any() and not dv.any(), "dk/dv written by a call that was refused"


def test_read_only_output_is_refused():
    a = np.ones((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    c.flags.writeable = False
    try:
        with pytest.raises(DeviceError, match=r"argument C\b"):
            gemm_into(a, a, c, arch=ARCH)
    finally:
        assert not c.any(), "a read-only output was written"
