"""The native launch helper (issue 36 item 2: wmma_gen/device/_fastlaunch.c) and its pure-Python
twins (device/native.py), each run both ways: a repeat call of wmma_gen.torch.linear and of
flash_attn_with_kvcache through the call-site cache gives float64-reference results with the
new tensors' addresses and the caller's stream, through real hip-python + HipDevice over the HIP
stand-in (kernels run on the emulator); the C Launcher reports a failed launch as HipDevice does
and refuses a wrong pointer count; the C and Python key / mode functions agree. The "c" cases
skip when the extension is not built (`pip install -e .` builds it)."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from wmma_gen.device import native  # noqa: E402
from wmma_gen.device.select import routed  # noqa: E402
from wmma_gen.errors import DeviceError  # noqa: E402
from wmma_gen.torch import flash_attn_with_kvcache, launch_stream, linear, replay, runtime  # noqa: E402

TWINS = ("fire", "shape_key", "lookup", "run", "eager_mode")


@pytest.fixture(params=["c", "python"])
def impl(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setenv("WMMA_GEN_NATIVE_LAUNCH", "0")      # HipDevice.prepack: the Python closure
        for name in TWINS:
            monkeypatch.setattr(native, name, getattr(native, name + "_python"))
        monkeypatch.setattr(runtime, "_native_mode", native.bind_mode(runtime._CHECKS, runtime._grad_on, runtime.PLAIN))
    elif native.launcher_module() is None:
        pytest.skip("wmma_gen.device._fastlaunch is not built here (pip install -e . builds it)")
    replay.clear()
    yield request.param
    replay.clear()


@pytest.fixture
def stream(hip_dev):
    s = hip_dev.hip.hipStreamCreate()[1]
    yield s
    hip_dev.hip.hipStreamDestroy(s)


def _launcher_kind(token) -> str:
    launch = token[0].launches[0][0]
    return "c" if type(launch).__module__ == "wmma_gen.device._fastlaunch" else "python"


def test_linear_repeat_calls_are_right_with_new_addresses(impl, stub, hip_dev, stream):
    w = (torch.randn(40, 72) / 8).half()          # N, K not multiples of a tile
    b = torch.randn(40)
    xs = [torch.randn(3, 7, 72).half() for _ in range(3)]
    with routed(hip_dev), launch_stream(int(stream)), torch.no_grad():
        first = linear(xs[0], w, b, activation="relu")
        n = len(stub.launches)
        ys = [linear(x, w, b, activation="relu") for x in xs[1:]]
    entry = next(e for e in replay._entries.values() if isinstance(e, tuple))
    assert _launcher_kind(entry) == impl
    assert len(stub.launches) == n + 2 and all(r.stream == int(stream) for r in stub.launches[n:])
    for x, y, rec in zip(xs[1:], ys, stub.launches[n:]):
        assert x.data_ptr() in rec.explicit and y.data_ptr() in rec.explicit
    for x, y in zip(xs, [first, *ys]):
        ref = torch.relu(x.double() @ w.double().T + b.double())
        assert y.shape == (3, 7, 40) and (y.double() - ref).abs().max() <= 4 * 2 ** -11 * max(1.0, ref.abs().max())
    assert not stub.faults, stub.faults


def _decode_ref(q, kc, vc, lens):
    """float64 softmax(q k^T / sqrt(D)) v over each sequence's first lens[b] keys (contiguous cache)."""
    B, _, H, D = q.shape
    out = torch.zeros(B, 1, H, D, dtype=torch.float64)
    group = H // kc.shape[2]
    for b in range(B):
        L = int(lens[b])
        for h in range(H):
            K, V = kc[b, :L, h // group].double(), vc[b, :L, h // group].double()
            p = torch.softmax(q[b, 0, h].double() @ K.T / math.sqrt(D), dim=-1)
            out[b, 0, h] = p @ V
    return out


def test_kvcache_decode_steps_append_and_attend(impl, stub, hip_dev, stream):
    B, S, H, Hkv, D = 2, 48, 4, 2, 64
    kc, vc = torch.randn(B, S, Hkv, D).half(), torch.randn(B, S, Hkv, D).half()
    lens = torch.tensor([5, 30], dtype=torch.int32)
    with routed(hip_dev), launch_stream(int(stream)), torch.no_grad():
        for step in range(3):
            q, k, v = torch.randn(B, 1, H, D).half(), torch.randn(B, 1, Hkv, D).half(), torch.randn(B, 1, Hkv, D).half()
            n = len(stub.launches)
            out = flash_attn_with_kvcache(q, kc, vc, k, v, cache_seqlens=lens)
            for b in range(B):
                assert torch.equal(kc[b, int(lens[b])], k[b, 0]) and torch.equal(vc[b, int(lens[b])], v[b, 0])
            lens = lens + 1
            ref = _decode_ref(q, kc, vc, lens)
            assert (out.double() - ref).abs().max() <= 3 * 2 ** -11 * vc.abs().max().item()
            assert all(r.stream == int(stream) for r in stub.launches[n:]) and q.data_ptr() in stub.launches[n].explicit
    entries = [e for e in replay._entries.values() if isinstance(e, tuple) and len(e) == 5]   # keyed and replayed
    assert entries and all(isinstance(e[1][-1], torch.Tensor) for e in entries)   # the unseen lse: one kept buffer
    assert not stub.faults, stub.faults


def test_a_failed_launch_names_the_call(impl, stub, hip_dev):
    from wmma_gen.ops.gemm.device import gemm_into
    a, b, c = torch.randn(16, 32).half(), torch.randn(32, 16).half(), torch.empty(16, 16).half()
    token = gemm_into(a, b, c, device=hip_dev)
    launch, names = token.launches[0]
    assert (type(launch).__module__ == "wmma_gen.device._fastlaunch") == (impl == "c")
    stub.fail("hipModuleLaunchKernel", "hipErrorInvalidValue")
    with pytest.raises(DeviceError, match=r"hipModuleLaunchKernel\(.*hipErrorInvalidValue"):
        launch(tuple(0 for _ in names))
    if impl == "c":
        with pytest.raises(ValueError, match="pointers has 1 addresses"):
            launch((0,))


def test_keys_and_modes_agree_between_c_and_python():
    mod = native.launcher_module()
    if mod is None:
        pytest.skip("wmma_gen.device._fastlaunch is not built here")
    x = torch.zeros(4, 8).half()
    same, other = torch.zeros(4, 8).half(), torch.zeros(8, 4).half().T          # same layout / other strides
    head = ("op", None, 1.0)
    for key in (mod.shape_key, native.shape_key_python):
        assert key(head, (x, None)) == key(head, (same, None))
        assert key(head, (x, None)) != key(head, (other, None)) != key(head, (x.float(), None))
        buf = torch.zeros(48).half()                # same shape and strides, 2 bytes off a 16-byte boundary
        assert key(head, (buf[:32].view(4, 8),)) != key(head, (buf[1:33].view(4, 8),))
        assert key(head, (x, None)) != key(head, (None, x)) and key(head, (x,)) != key(("op", None, 2.0), (x,))
    p, g = torch.nn.Parameter(torch.zeros(3)), torch.zeros(3, requires_grad=True)

    class Sub(torch.Tensor):
        pass
    cases = [(x,), (x, None, p), (g,), (x, torch.zeros(2).as_subclass(Sub))]
    for fn in (mod.eager_mode, native.eager_mode_python):
        got = [fn(runtime._CHECKS, runtime._grad_on, runtime.PLAIN, *ts) for ts in cases]
        assert got == [runtime.STRAIGHT, runtime.AUTOGRAD, runtime.AUTOGRAD, runtime.DISPATCH], got
        with torch.no_grad():
            assert fn(runtime._CHECKS, runtime._grad_on, runtime.PLAIN, g) == runtime.STRAIGHT


def test_a_hit_allocates_with_the_fast_allocator_only_on_the_recorded_device():
    """run's outputs: (shape, strides, dtype, fast, index) takes fast(shape, strides, dtype) when its
    tensor is on device `index` (torch's _empty_strided_cuda allocates on the current GPU); another
    device, or an error, falls back to torch.empty_strided on the call's device; a tensor entry
    (a kept buffer) is handed out as it is."""
    mod = native.launcher_module()
    if mod is None:
        pytest.skip("wmma_gen.device._fastlaunch is not built here")

    class Token:
        gen, scratch = 0, ()
    env = ([0], [0], torch.empty_strided, lambda *t: None)
    made = torch.empty(2, 3, dtype=torch.float16)
    kept = torch.empty(5)

    def fast(shape, strides, dtype):
        return made

    def broken(shape, strides, dtype):
        raise RuntimeError("no such allocator here")
    outs = ((2, 3), (3, 1), torch.float16)
    entry = (Token(), (outs + (fast, -1), outs + (fast, 0), outs + (broken, -1), kept), (), ())
    got = mod.run(entry, (), torch.device("cpu"), None, env)
    assert got[0] is made and got[3] is kept
    for t in got[1:3]:
        assert t is not made and t.shape == (2, 3) and t.stride() == (3, 1) and t.dtype == torch.float16
