"""The device-resident path (ops/device_calls.py) through the real hip-python bindings and the
real HipDevice over the emulator-backed HIP stand-in: operands in device memory, outputs
written in place, the caller's stream reaching hipModuleLaunchKernel, and no allocation, copy
or synchronisation on the way (issue 23, item 1)."""
import numpy as np
import pytest

from wmma_gen.device.operand import Operand
from wmma_gen.errors import DeviceError
from wmma_gen.ops.device_calls import attention_into, gemm_into
from wmma_gen.attention_common.reference import attention_forward

PER_CALL_FORBIDDEN = ("hipMalloc", "hipFree", "hipMemcpy", "hipMemcpyAsync", "hipStreamSynchronize",
                      "hipDeviceSynchronize", "hipMemset", "hipEventCreate", "hipEventRecord")


def _upload(dev, x: np.ndarray, dtype: str) -> Operand:
    """Device memory holding x (C order) as a ROCm operand (set-up, not part of a call)."""
    buf = dev.alloc(max(x.nbytes, 4))
    dev.copy_in(buf, x)
    strides = tuple(s // x.itemsize for s in x.strides)
    return Operand(buf.addr, x.shape, strides, dtype, "rocm", 0, buf, "")


def _read(dev, op: Operand, np_dtype) -> np.ndarray:
    n = int(np.prod(op.shape))
    raw = dev.copy_out(op.owner, n * np.dtype(np_dtype).itemsize)
    return np.frombuffer(raw, np_dtype).reshape(op.shape)


def _calls_during(stub, fn):
    before = dict(stub.calls)
    fn()
    return {k: v - before.get(k, 0) for k, v in stub.calls.items() if v - before.get(k, 0)}


def test_gemm_into_device_memory_caller_stream_no_alloc_copy_sync(stub, hip_dev):
    hip = hip_dev.hip
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 32)).astype(np.float16)
    w = rng.standard_normal((48, 32)).astype(np.float16)
    X, W = _upload(hip_dev, x, "f16"), _upload(hip_dev, w, "f16")
    Y = _upload(hip_dev, np.zeros((40, 48), np.float16), "f16")
    err, stream = hip.hipStreamCreate()
    handle = int(stream)
    for i in range(3):        # the first call builds the plan (compiles, loads the module); repeats patch pointers
        launches = len(stub.launches)
        calls = _calls_during(stub, lambda: gemm_into(X, W, Y, layout="NT", device=hip_dev, stream=stream))
        if i:
            assert not set(calls) & set(PER_CALL_FORBIDDEN), calls
            assert calls == {"hipModuleLaunchKernel": 1}, calls
        assert len(stub.launches) == launches + 1
        assert stub.launches[-1].stream == handle
    hip_dev.sync()
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    got = _read(hip_dev, Y, np.float16).astype(np.float64)
    assert np.abs(got - ref).max() <= 2e-3 * np.abs(ref).max() + 1e-3
    hip.hipStreamDestroy(stream)


def test_attention_into_strided_packed_qkv_on_device(stub, hip_dev):
    """q, k, v as views of one packed (B, S, 3, H, D) buffer: passed as strides, never copied."""
    rng = np.random.default_rng(2)
    B, S, H, D = 1, 32, 2, 32
    qkv = rng.standard_normal((B, S, 3, H, D)).astype(np.float16)
    P = _upload(hip_dev, qkv, "f16")
    st = P.strides
    q, k, v = (P.view((B, S, H, D), (st[0], st[1], st[3], st[4]), offset=i * st[2]) for i in range(3))
    O = _upload(hip_dev, np.zeros((B, S, H, D), np.float16), "f16")
    L = _upload(hip_dev, np.zeros((B, H, S), np.float32), "f32")
    calls = _calls_during(stub, lambda: attention_into(q, k, v, O, L, causal=True, device=hip_dev))
    assert not {"hipMalloc", "hipMemcpy", "hipMemcpyAsync"} & set(calls), calls
    hip_dev.sync()
    qv, kv, vv = (qkv[:, :, i].astype(np.float64) for i in range(3))
    ref_o, ref_lse = attention_forward(qv, kv, vv, scale=1 / np.sqrt(D), causal=True, layout="bshd")
    got = _read(hip_dev, O, np.float16).astype(np.float64)
    assert np.abs(got - ref_o).max() <= 8 * 2 ** -11 * np.abs(ref_o).max() + 1e-3
    assert np.abs(_read(hip_dev, L, np.float32) - ref_lse).max() <= 1e-3


def test_device_path_refuses_wrong_inputs_before_launch(stub, hip_dev):
    X = _upload(hip_dev, np.zeros((16, 32), np.float16), "f16")
    W = _upload(hip_dev, np.zeros((16, 32), np.float16), "f16")
    Y = _upload(hip_dev, np.zeros((16, 16), np.float32), "f32")
    n = len(stub.launches)
    with pytest.raises(DeviceError, match="inner stride"):
        gemm_into(X, W.view((32, 16), (1, 32)), Y, layout="NN", device=hip_dev)
    with pytest.raises(ValueError, match="c.dtype"):
        gemm_into(X, W, Operand(Y.ptr, Y.shape, Y.strides, "i32", "rocm", 0, Y.owner), layout="NT", device=hip_dev)
    with pytest.raises(DeviceError, match="different devices"):
        gemm_into(X, np.zeros((16, 32), np.float16), Y, layout="NT")
    assert len(stub.launches) == n
