"""The zero-copy device path from torch, through the real hip-python bindings and the real
HipDevice over the emulator-backed HIP stand-in (tests/hipstub), whose runtime treats host
pointers as device memory: torch CPU tensors' data_ptr()s are the "device" pointers
(`routed(HipDevice-over-stub)`), the caller's stream is set with launch_stream. Each repeat
call is hipModuleLaunchKernel only -- no hipMalloc/hipMemcpy*/synchronisation -- on the
caller's stream, with the tensors' own addresses as kernel arguments; results match torch."""
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> `import hipstub`

from wmma_gen.device.select import routed  # noqa: E402
from wmma_gen.torch import flash_attn_func, launch_stream, linear  # noqa: E402

FORBIDDEN = ("hipMalloc", "hipFree", "hipMemcpy", "hipMemcpyAsync", "hipMemset", "hipStreamSynchronize",
             "hipDeviceSynchronize", "hipEventCreate", "hipEventRecord", "hipEventSynchronize")


@pytest.fixture
def stub_dev(stub):
    """(runtime, HipDevice over it, a stream the caller created); `stub` is tests/conftest.py's."""
    from wmma_gen.device.hip import HipDevice
    runtime = stub
    dev = HipDevice()
    _, stream = dev.hip.hipStreamCreate()
    yield runtime, dev, stream
    dev.hip.hipStreamDestroy(stream)
    dev.close()
    assert not runtime.faults, "kernels faulted:\n" + "\n".join(runtime.faults)


def _calls(runtime, fn):
    before, n = dict(runtime.calls), len(runtime.launches)
    out = fn()
    return out, {k: v - before.get(k, 0) for k, v in runtime.calls.items() if v - before.get(k, 0)}, \
        runtime.launches[n:]


def test_linear_forward_backward_zero_copy_on_callers_stream(stub_dev):
    runtime, dev, stream = stub_dev
    x = torch.randn(32, 64).half().requires_grad_()
    w = (torch.randn(48, 64) / 8).half().requires_grad_()
    b = torch.randn(48)

    def step():
        y = linear(x, w, b, activation="relu")
        y.backward(torch.ones_like(y))
        return y
    with routed(dev), launch_stream(int(stream)):    # an int handle, as torch.cuda gives it on ROCm
        step()                                    # plans, compiles, loads the modules
        x.grad = w.grad = None
        y, calls, launches = _calls(runtime, step)
    assert calls == {"hipModuleLaunchKernel": 3}, calls          # NT forward, NN dX, TN dW
    assert all(r.stream == int(stream) for r in launches)
    assert x.data_ptr() in launches[0].explicit and w.data_ptr() in launches[0].explicit
    assert y.data_ptr() in launches[0].explicit                    # written in place, no copy back
    xr, wr = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    yr = torch.relu(xr @ wr.T + b.double())
    yr.backward(torch.ones_like(yr))
    assert (y.double() - yr).abs().max() <= 4 * 2 ** -11 * yr.abs().max()
    assert (w.grad.double() - wr.grad).abs().max() <= 4 * 2 ** -11 * wr.grad.abs().max()


def test_attention_forward_backward_zero_copy_on_callers_stream(stub_dev):
    runtime, dev, stream = stub_dev
    q = torch.randn(1, 32, 2, 32).half().requires_grad_()
    k, v = (torch.randn(1, 32, 1, 32).half().requires_grad_() for _ in range(2))

    def step():
        o = flash_attn_func(q, k, v, causal=True)
        o.backward(torch.ones_like(o))
        return o
    with routed(dev), launch_stream(int(stream)):    # an int handle, as torch.cuda gives it on ROCm
        step()
        q.grad = k.grad = v.grad = None
        o, calls, launches = _calls(runtime, step)
    assert not set(calls) & set(FORBIDDEN), calls
    assert set(calls) == {"hipModuleLaunchKernel"} and all(r.stream == int(stream) for r in launches)
    assert q.data_ptr() in launches[0].explicit and o.data_ptr() in launches[0].explicit
    with torch.no_grad():
        want = flash_attn_func(q, k, v, causal=True)                # the emulator device, same kernels
    assert torch.equal(o, want)
