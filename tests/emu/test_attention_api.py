"""wmma_gen.attention / attention_backward end to end on the emulator, against float64.

Tolerances: O within 3u*max|V| (u = unit roundoff of the input dtype; P is rounded to it
before the second WMMA, O once at the end -- see attention_fwd_helpers); gradients within
8u * max|reference gradient| + 1e-3 (inputs rounded to the dtype, P and dS rounded to it
before their WMMAs, each output rounded once; measured errors are ~5e-4 at these sizes).
"""
import numpy as np
import pytest

import wmma_gen
from wmma_gen.device.emu import EmuDevice
from wmma_gen.attention_common.reference import attention_backward, attention_forward

U = 2.0 ** -11


def _f64(x):
    return np.asarray(x, dtype=np.float64)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_forward_then_backward_of_a_tiny_attention_layer(arch):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 24, 4, 32)).astype(np.float16)
    k = rng.standard_normal((2, 40, 2, 32)).astype(np.float16)
    v = rng.standard_normal((2, 40, 2, 32)).astype(np.float16)
    o, lse = wmma_gen.attention(q, k, v, causal=True, return_lse=True, arch=arch, device="emu")
    ro, rl = attention_forward(_f64(q), _f64(k), _f64(v), causal=True)
    assert o.dtype == np.float16 and o.shape == q.shape and lse.shape == (2, 4, 24)
    assert np.abs(_f64(o) - ro).max() <= 3 * U * np.abs(_f64(v)).max()
    assert np.abs(lse - rl).max() <= 1e-5 * (1 + np.abs(rl).max())
    do = rng.standard_normal(o.shape).astype(np.float16)
    grads = wmma_gen.attention_backward(q, k, v, o, do, lse, causal=True, arch=arch, device="emu")
    refs = attention_backward(_f64(q), _f64(k), _f64(v), _f64(o), _f64(do), rl, causal=True)
    for name, g, r in zip(("dq", "dk", "dv"), grads, refs):
        assert g.shape == r.shape, name
        assert np.abs(_f64(g) - r).max() <= 8 * U * np.abs(r).max() + 1e-3, name


def test_decode_shape_splits_the_keys_and_matches():
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 3, 2, 64)).astype(np.float16)
    k = rng.standard_normal((1, 1030, 1, 64)).astype(np.float16)
    v = rng.standard_normal((1, 1030, 1, 64)).astype(np.float16)
    from wmma_gen.ops.attention.api import choose_schedule
    from wmma_gen.attention_common.inputs import forward_inputs
    inp = forward_inputs(q, k, v)
    assert choose_schedule(inp.directive, inp.problem, "gfx1100").split_kv > 1
    o = wmma_gen.attention(q, k, v, device="emu")
    ro, _ = attention_forward(_f64(q), _f64(k), _f64(v))
    assert np.abs(_f64(o) - ro).max() <= 3 * U * np.abs(_f64(v)).max()


class _Counting(EmuDevice):
    launches = 0

    def launch(self, *a, **kw):
        type(self).launches += 1
        return super().launch(*a, **kw)


@pytest.mark.parametrize("kwargs,field", [
    (dict(window=(-2, 0)), "window"),
    (dict(layout="sbhd"), "layout"),
    (dict(cu_seqlens_q=np.array([0, 5, 3], np.int32), cu_seqlens_k=np.array([0, 4, 8], np.int32)), "cu_seqlens"),
])
def test_bad_input_names_the_argument_and_launches_nothing(kwargs, field):
    q = np.zeros((1, 8, 3, 64), np.float16)
    kv = np.zeros((1, 8, 2, 64), np.float16)        # 3 heads, 2 kv heads: also invalid
    dev = _Counting()
    with pytest.raises(ValueError, match=field if field != "layout" else "layout"):
        wmma_gen.attention(q[..., :3, :] if field != "window" else q, kv, kv, device=dev, **kwargs)
    q_ok = np.zeros((1, 8, 4, 64), np.float16)
    with pytest.raises(ValueError, match="kv"):
        wmma_gen.attention(np.zeros((1, 8, 3, 64), np.float16), kv, kv, device=dev)
    with pytest.raises(ValueError, match="head_dim|64"):
        wmma_gen.attention(q_ok[..., :40], kv[..., :40], kv[..., :40], device=dev)
    assert _Counting.launches == 0
