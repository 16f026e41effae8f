"""wmma_gen/torch/replay.py: a repeat call of a known shape key skips the front end's checks
and the core's planning -- and is right, on the caller's stream, with the new tensors'
addresses; anything that changes the key, needs autograd, or was copied on the way in takes
the full path. Through real hip-python + HipDevice over the HIP stand-in (tests/hipstub),
whose runtime runs the kernels on the emulator (host pointers are device pointers)."""
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> `import hipstub`

from wmma_gen.device.select import routed  # noqa: E402
from wmma_gen.ops import device_calls  # noqa: E402
from wmma_gen.torch import flash_attn_func, launch_stream, linear, replay  # noqa: E402
from wmma_gen.torch import gemm_ops, attention_ops  # noqa: E402


@pytest.fixture
def stub_dev(stub):
    from wmma_gen.device.hip import HipDevice
    dev = HipDevice()
    _, stream = dev.hip.hipStreamCreate()
    replay.clear()
    yield stub, dev, stream
    replay.clear()
    dev.hip.hipStreamDestroy(stream)
    dev.close()
    assert not stub.faults, "kernels faulted:\n" + "\n".join(stub.faults)


@pytest.fixture
def full_calls(monkeypatch):
    """How many times each front end took the full path (the op body below the checks)."""
    seen = {"gemm": 0, "attention": 0}
    g, a = gemm_ops.gemm_call, attention_ops.attention_call

    def gemm_call(*args, **kw):
        seen["gemm"] += 1
        return g(*args, **kw)

    def attention_call(*args, **kw):
        seen["attention"] += 1
        return a(*args, **kw)
    monkeypatch.setattr(gemm_ops, "gemm_call", gemm_call)
    monkeypatch.setattr(attention_ops, "attention_call", attention_call)
    return seen


def _ref_linear(x, w, b):
    return torch.nn.functional.gelu(x.double() @ w.double().T + (0 if b is None else b.double()))


def _close(y, ref, tol=6 * 2 ** -11):
    y, ref = y.detach(), ref.detach()
    assert (y.double() - ref).abs().max() <= tol * max(1.0, float(ref.abs().max())), (y, ref)


def test_linear_repeat_is_replayed_with_new_addresses_and_right(stub_dev, full_calls):
    runtime, dev, stream = stub_dev
    w = (torch.randn(48, 64) / 8).half()
    b = torch.randn(48)
    with routed(dev), launch_stream(int(stream)):
        xs = [torch.randn(2, 16, 64).half() for _ in range(3)]
        ys = [linear(x, w, b, activation="gelu") for x in xs]
        n = len(runtime.launches)
        again = linear(xs[0], w, b, activation="gelu")
    assert full_calls["gemm"] == 1                        # only the first call planned
    assert len(runtime.launches) == n + 1 and runtime.launches[-1].stream == int(stream)
    assert xs[0].data_ptr() in runtime.launches[-1].explicit and again.data_ptr() in runtime.launches[-1].explicit
    assert again.shape == (2, 16, 48) and again.dtype == torch.float16
    for x, y in zip(xs, ys):
        _close(y, _ref_linear(x, w, b))
    assert torch.equal(again, ys[0])


def test_linear_key_changes_take_the_full_path(stub_dev, full_calls):
    runtime, dev, stream = stub_dev
    w = (torch.randn(32, 64) / 8).half()
    with routed(dev), launch_stream(int(stream)):
        linear(torch.randn(16, 64).half(), w)
        linear(torch.randn(32, 64).half(), w)                    # another M
        linear(torch.randn(16, 64).half(), w, activation="relu")  # another epilogue
        big = torch.randn(16, 65).half()[:, 1:]                  # 2-byte offset: another alignment
        y = linear(big, w)
    assert full_calls["gemm"] == 4
    ref = big.double() @ w.double().T
    _close(y, ref)


def test_copies_are_never_replayed(stub_dev, full_calls):
    runtime, dev, stream = stub_dev
    w = (torch.randn(32, 64) / 8).half()
    xt = torch.randn(64, 8).half()
    with routed(dev), launch_stream(int(stream)):
        for _ in range(2):                      # x.T reshaped: a copy each call (new address)
            y = linear(xt.T.reshape(2, 4, 64).transpose(0, 1), w)
        assert full_calls["gemm"] == 2
        b16 = torch.randn(32).half()            # an f16 bias becomes an f32 copy each call
        for _ in range(2):
            linear(torch.ones(4, 64).half(), w, b16)
        assert full_calls["gemm"] == 4
    _close(y, xt.T.reshape(2, 4, 64).transpose(0, 1).double() @ w.double().T)


def test_autograd_calls_take_the_eager_function_and_replay_its_kernels(stub_dev, full_calls):
    """A call recording autograd runs gemm_ops.GemmFunction (not the dispatcher): its forward
    and both backward GEMMs replay from the second call on, and the gradients stay right."""
    from wmma_gen.torch.gemm_ops import GemmFunction
    runtime, dev, stream = stub_dev
    w = (torch.randn(32, 64) / 8).half().requires_grad_()
    with routed(dev), launch_stream(int(stream)):
        for i in range(3):
            x = torch.randn(8, 64).half().requires_grad_()
            y = linear(x, w)
            assert type(y.grad_fn).__name__ == "GemmFunctionBackward"
            gy = torch.randn(8, 32).half()
            w.grad = None
            y.backward(gy)
            if i == 0:
                first = full_calls["gemm"]
        assert full_calls["gemm"] == first == 3          # forward, dX, dW: each planned once
    xd, wd, gd = x.double(), w.double(), gy.double()
    _close(y, xd @ wd.T)
    _close(x.grad, gd @ wd)
    _close(w.grad, gd.T @ xd)
    assert GemmFunction is not None


def test_modes_and_tracing_see_the_custom_op(stub_dev):
    """Under a torch function mode the call goes through torch.ops.wmma_gen.gemm (what
    torch.compile and modes must see), not the eager Function."""
    from torch.overrides import TorchFunctionMode
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))
    runtime, dev, stream = stub_dev
    w = (torch.randn(32, 64) / 8).half()
    x = torch.randn(8, 64).half()
    with routed(dev), launch_stream(int(stream)), Spy():
        y = linear(x, w)
    assert any("wmma_gen.gemm" in f for f in seen), seen
    _close(y, x.double() @ w.double().T)


def test_forgotten_shapes_fall_back_to_the_full_call(stub_dev, full_calls):
    runtime, dev, stream = stub_dev
    w = (torch.randn(32, 64) / 8).half()
    x = torch.randn(16, 64).half()
    with routed(dev), launch_stream(int(stream)):
        linear(x, w)
        device_calls.forget_call_shapes()      # what record_problems does
        y = linear(x, w)
        assert full_calls["gemm"] == 2
        linear(x, w)
        assert full_calls["gemm"] == 2          # recorded again
    _close(y, x.double() @ w.double().T)


def test_flash_attn_repeat_is_replayed_and_right(stub_dev, full_calls):
    runtime, dev, stream = stub_dev
    k, v = torch.randn(1, 32, 1, 32).half(), torch.randn(1, 32, 1, 32).half()
    with routed(dev), launch_stream(int(stream)):
        q1, q2 = torch.randn(1, 32, 2, 32).half(), torch.randn(1, 32, 2, 32).half()
        o1 = flash_attn_func(q1, k, v, causal=True)
        o2, lse2, _ = flash_attn_func(q2, k, v, causal=True, return_attn_probs=True)
        assert full_calls["attention"] == 2     # return_attn_probs is keyed: only then is the lse handed out
        o2b, lse2b, _ = flash_attn_func(q2, k, v, causal=True, return_attn_probs=True)
        o1b = flash_attn_func(q1, k, v, causal=True)
        assert full_calls["attention"] == 2
        flash_attn_func(q1, k, v, causal=False)
        assert full_calls["attention"] == 3
    assert torch.equal(o1b, o1) and torch.equal(o2b, o2) and torch.equal(lse2b, lse2)
    assert lse2b.data_ptr() != lse2.data_ptr()      # a caller's lse is its own tensor
    for q, o in ((q1, o1), (q2, o2)):
        ref = torch.nn.functional.scaled_dot_product_attention(
            q.double().transpose(1, 2), k.double().transpose(1, 2).expand(1, 2, 32, 32),
            v.double().transpose(1, 2).expand(1, 2, 32, 32), is_causal=True).transpose(1, 2)
        _close(o, ref, 4 * 2 ** -11)


def test_an_unseen_lse_is_one_kept_buffer_and_a_returned_one_is_fresh(stub_dev, full_calls):
    """flash_attn_func without return_attn_probs hands out only O: its hits write the lse into the
    one buffer the entry keeps (an allocation fewer per call); with it, every call gets its own."""
    runtime, dev, stream = stub_dev
    k, v = torch.randn(1, 32, 1, 32).half(), torch.randn(1, 32, 1, 32).half()
    q = torch.randn(1, 32, 2, 32).half()
    with routed(dev), launch_stream(int(stream)):
        first = flash_attn_func(q, k, v)
        outs, launched = [], []
        for _ in range(3):
            n = len(runtime.launches)
            outs.append(flash_attn_func(q, k, v))
            launched.append(runtime.launches[n].explicit)
        _, lse_a, _ = flash_attn_func(q, k, v, return_attn_probs=True)
        _, lse_b, _ = flash_attn_func(q, k, v, return_attn_probs=True)
    assert full_calls["attention"] == 2
    kept = [o for e in replay._entries.values() if isinstance(e, tuple) for o in e[1] if isinstance(o, torch.Tensor)]
    assert len(kept) == 1 and tuple(kept[0].shape) == (1, 2, 32)          # the no-return key's lse, (B, H, Sq)
    assert all(kept[0].data_ptr() in args for args in launched)           # every hit writes it
    assert all(o.data_ptr() in args for o, args in zip(outs, launched))   # O: a new tensor per call
    assert len({o.data_ptr() for o in outs}) == 3 and all(torch.equal(o, first) for o in outs)
    assert len({lse_a.data_ptr(), lse_b.data_ptr(), kept[0].data_ptr()}) == 3 and torch.equal(lse_a, lse_b)


def test_sdpa_repeat_is_replayed_and_right_for_each_causal_alignment(stub_dev, full_calls):
    from wmma_gen.torch import scaled_dot_product_attention as sdpa
    runtime, dev, stream = stub_dev
    k, v = torch.randn(1, 2, 48, 32).half(), torch.randn(1, 2, 48, 32).half()
    with routed(dev), launch_stream(int(stream)):
        for sq in (48, 16):                       # Sq == Sk; Sq < Sk (keys sliced to a view)
            q = torch.randn(1, 2, sq, 32).half()
            first = sdpa(q, k, v, is_causal=True)
            n = full_calls["attention"]
            q.copy_(torch.randn(1, 2, sq, 32).half())      # same tensor, new values: replayed
            again = sdpa(q, k, v, is_causal=True)
            assert full_calls["attention"] == n
            ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                                   is_causal=True)
            _close(again, ref, 4 * 2 ** -11)
            assert not torch.equal(first, again)
    assert full_calls["attention"] == 2


def test_varlen_is_never_replayed(stub_dev, full_calls):
    from wmma_gen.torch import flash_attn_varlen_func
    runtime, dev, stream = stub_dev
    q, k, v = (torch.randn(24, 2, 32).half() for _ in range(3))
    with routed(dev), launch_stream(int(stream)):
        for cu in ([0, 8, 24], [0, 16, 24]):      # same shapes, other offsets: other results
            c = torch.tensor(cu, dtype=torch.int32)
            flash_attn_varlen_func(q, k, v, c, c, 16, 16)
    assert full_calls["attention"] == 2 and not replay._entries


def test_placement_reads_the_arch_variable_for_cpu_operands_only(monkeypatch):
    """A call key's placement: WMMA_GEN_ARCH picks the emulator's arch, so it keys unrouted CPU
    calls; a tensor elsewhere (meta here, a GPU on ROCm) skips the environment read."""
    monkeypatch.setenv("WMMA_GEN_ARCH", "gfx1201")
    cpu, meta = torch.zeros(2), torch.zeros(2, device="meta")
    assert device_calls.placement(cpu) == device_calls.placement() == (None, "gfx1201")
    assert device_calls.placement(meta) == (None, None)
    marker = object()
    with routed(marker):          # no arch of its own, none given: WMMA_GEN_ARCH decides
        assert device_calls.placement(cpu) == device_calls.placement(meta) == (id(marker), "gfx1201")
    with routed(marker, "gfx1151"):
        assert device_calls.placement(cpu) == (id(marker), "gfx1151")


def test_routed_blocks_with_different_archs_do_not_share_a_call_entry():
    """The same linear on the same routed device under two archs compiles and keeps one entry
    per arch (the key carried only the device, so the second block replayed the first's kernel)."""
    from wmma_gen.device.select import get_device
    emu = get_device("emu")
    x, w = torch.randn(16, 32, dtype=torch.float16), torch.randn(32, 32, dtype=torch.float16)
    replay.clear()
    with routed(emu, "gfx1100"), torch.no_grad():
        a = linear(x, w)
    with routed(emu, "gfx1201"), torch.no_grad():
        b = linear(x, w)
    archs = {key[1][1] for key in replay._entries if key[0] == "linear"}
    assert archs == {"gfx1100", "gfx1201"}
    ref = x.double() @ w.double().T
    for out in (a, b):
        assert torch.allclose(out.double(), ref, rtol=2e-2, atol=2e-2)


def test_a_gpu_tensors_stream_is_the_raw_current_stream_of_its_device(monkeypatch):
    """stream_of: a GPU tensor's call launches on torch's current stream of the tensor's own GPU,
    read as the raw handle (no torch.cuda.Stream per call); a CPU tensor's is launch_stream's."""
    from wmma_gen.torch import runtime
    asked = []
    monkeypatch.setattr(runtime, "_raw_stream", lambda index: asked.append(index) or 0xBEEF0 + index)

    class OnGpu:                  # what stream_of reads of a ROCm tensor on GPU 3
        is_cuda = True

        def get_device(self):
            return 3
    assert runtime.stream_of(OnGpu()) == 0xBEEF3 and asked == [3]
    with launch_stream(1234):
        assert runtime.stream_of(torch.zeros(1)) == 1234 and asked == [3]
