"""The device-resident entry points (ops/device_calls.py) on the emulator with numpy operands
in host memory: results written in place equal the numpy API's, plans that need scratch
(split-KV decode, the backward's delta) get it from `alloc`, repeat calls with new buffers
reuse the plan and still write the new buffers."""
import numpy as np
import pytest

import wmma_gen
from wmma_gen.ops import device_calls
from wmma_gen.ops.attention.device import attention_backward_into, attention_into
from wmma_gen.ops.gemm.device import gemm_into

RNG = np.random.default_rng(7)


def _h(*shape):
    return RNG.standard_normal(shape).astype(np.float16)


def test_gemm_into_bias_activation_batch_broadcast_equals_numpy_api():
    a, b = _h(3, 40, 32), _h(48, 32)                     # b 2-D: broadcast over the batch (stride 0)
    bias = RNG.standard_normal(48).astype(np.float32)
    c = np.zeros((3, 40, 48), np.float16)
    gemm_into(a, b, c, layout="NT", bias=bias, activation="relu")
    ref = wmma_gen.gemm(a, b, layout="NT", bias=bias, activation="relu", out_dtype="f16")
    assert np.array_equal(c, ref)


def test_gemm_into_repeat_call_writes_the_new_output():
    a, b = _h(32, 32), _h(32, 32)
    c1, c2 = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    gemm_into(a, b, c1)
    gemm_into(2 * a, b, c2)            # same shape: the remembered plan, new pointers
    assert np.array_equal(c2, wmma_gen.gemm(2 * a, b)) and np.array_equal(c1, wmma_gen.gemm(a, b))


def test_attention_decode_split_kv_scratch_from_alloc():
    """Sq <= 16 and Sk >= 1024 split the keys: O_part/LSE_part come from alloc, then combine."""
    q, k, v = _h(1, 4, 1, 32), _h(1, 1024, 1, 32), _h(1, 1024, 1, 32)
    o, lse = np.zeros_like(q), np.zeros((1, 1, 4), np.float32)
    asked = []
    keep = []

    def alloc(shape, dtype, zero=False):
        asked.append((tuple(shape), dtype))
        return device_calls.numpy_alloc(keep)(shape, dtype, zero)
    attention_into(q, k, v, o, lse, alloc=alloc)
    assert {d for _, d in asked} == {"f32"} and len(asked) == 2
    ref_o, ref_lse = wmma_gen.attention(q, k, v, return_lse=True)
    assert np.array_equal(o, ref_o) and np.array_equal(lse, ref_lse)


def test_attention_varlen_host_offsets_and_max_seqlen_form_agree():
    cu = np.array([0, 5, 5, 21], np.int32)       # an empty sequence in the middle
    q, k, v = _h(21, 2, 32), _h(21, 1, 32), _h(21, 1, 32)
    o1, o2 = np.zeros_like(q), np.zeros_like(q)
    attention_into(q, k, v, o1, cu_seqlens_q=cu, cu_seqlens_k=cu, causal=True)
    ref = wmma_gen.attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, causal=True)
    assert np.array_equal(o1, ref)
    with pytest.raises(ValueError, match="cu_seqlens_q"):
        attention_into(q, k, v, o2, cu_seqlens_q=cu)


def test_attention_backward_into_equals_numpy_api_twice():
    q, k, v, do = _h(1, 32, 2, 32), _h(1, 32, 1, 32), _h(1, 32, 1, 32), _h(1, 32, 2, 32)
    o, lse = wmma_gen.attention(q, k, v, causal=True, return_lse=True)
    want = wmma_gen.attention_backward(q, k, v, o, do, lse, causal=True)
    for _ in range(2):               # the second call reuses the plan with fresh delta scratch
        got = [np.zeros_like(x) for x in (q, k, v)]
        attention_backward_into(q, k, v, o, do, lse, *got, causal=True)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)


def test_bad_operands_refused_before_any_launch():
    q = _h(1, 16, 2, 32)
    with pytest.raises(ValueError, match="o.shape"):
        attention_into(q, q, q, np.zeros((1, 16, 2, 16), np.float16))
    with pytest.raises(ValueError, match="k.dtype"):
        attention_into(q, q.astype(np.float32), q, np.zeros_like(q))
    with pytest.raises(ValueError, match="c.dtype"):
        gemm_into(_h(16, 16), _h(16, 16), np.zeros((16, 16), np.int32))
