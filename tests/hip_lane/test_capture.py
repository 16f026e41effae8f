"""Graph capture (issue 36 item 4): under hipStreamBeginCapture on the caller's stream a
wmma_gen.torch op makes only kernel launches on that stream -- no hipMalloc, copy, sync or
module load (the HIP stand-in refuses them during a capture, as HIP's global capture mode does)
-- and replaying the graph on new data in the same tensors gives the right result. Scratch
(split-KV partials, the backward's delta) comes from a ScratchPool reserved before the capture.
Through real hip-python + HipDevice over the stand-in (kernels run on the emulator).

Keep-alive: a captured graph writes every buffer its kernels name on each replay, including ones
the op allocated and dropped (an lse nobody asked for, the forward's lse freed after backward).
The graph holds them (HipGraph.keep_alive, filled during the capture): the tests hold nothing
themselves (freed memory written on replay corrupts the heap: before the graph held them, a
process aborted later, inside unrelated code)."""
from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from wmma_gen.device.operand import capture_keep  # noqa: E402
from wmma_gen.device.select import routed  # noqa: E402
from wmma_gen.errors import DeviceError  # noqa: E402

LAUNCH_ONLY = {"hipModuleLaunchKernel", "hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing",
               "hipGraphInstantiate"}


@pytest.fixture
def stream(hip_dev):
    s = hip_dev.hip.hipStreamCreate()[1]
    yield s
    hip_dev.hip.hipStreamDestroy(s)


def _calls_during(stub, before: Counter) -> set:
    return {n for n, c in stub.calls.items() if c > before.get(n, 0)}


def test_the_stand_in_refuses_an_allocation_during_capture_and_invalidates_it(stub, hip_dev, stream):
    hip_dev.begin_capture(stream)
    assert hip_dev.is_capturing(stream)
    with pytest.raises(DeviceError, match="hipErrorStreamCaptureUnsupported"):
        hip_dev.alloc(64)
    with pytest.raises(DeviceError, match="hipErrorStreamCaptureInvalidated"):
        hip_dev.end_capture(stream)
    assert not hip_dev.is_capturing(stream) and stub.capture_errors == ["hipMalloc while a stream capture is active"]


def _decode_ref(q, kc, vc, table, lens, scale):
    """float64 attention of each sequence's single query over its first lens[b] cached keys."""
    B, _, H, D = q.shape
    bs, hkv = kc.shape[1], kc.shape[2]
    out = torch.zeros(B, 1, H, D, dtype=torch.float64)
    for b in range(B):
        L = int(lens[b])
        rows = torch.arange(L)
        blk, off = table[b].long()[rows // bs], rows % bs
        K, V = kc[blk, off].double(), vc[blk, off].double()           # (L, Hkv, D)
        for h in range(H):
            s = (K[:, h // (H // hkv)] @ q[b, 0, h].double()) * scale
            out[b, 0, h] = torch.softmax(s, 0) @ V[:, h // (H // hkv)]
    return out


def test_a_captured_decode_step_replays_on_new_data(stub, hip_dev, stream):
    import wmma_gen.torch as wt
    torch.manual_seed(0)
    B, H, HKV, D, BS = 2, 2, 1, 64, 16
    q = torch.randn(B, 1, H, D).half()
    kc, vc = torch.randn(6, BS, HKV, D).half(), torch.randn(6, BS, HKV, D).half()
    table = torch.tensor([[4, 1, 0], [2, 5, 3]], dtype=torch.int32)
    lens = torch.tensor([20, 9], dtype=torch.int32)
    pool = wt.ScratchPool()
    with routed(hip_dev), wt.launch_stream(int(stream)):
        with wt.scratch_pool(pool):                          # warm: plans, modules, scratch reserved
            eager = wt.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=table)
        reserved, before = pool.reserved, Counter(stub.calls)
        hip_dev.begin_capture(stream)
        with wt.scratch_pool(pool):        # its lse (not returned) is written on every replay: the graph keeps it
            out = wt.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=table)
        graph = hip_dev.end_capture(stream)
    assert _calls_during(stub, before) <= LAUNCH_ONLY and pool.reserved == reserved
    held = {s.data_ptr(): s.nbytes() for s in graph.keep_alive}          # storages
    pooled = {t.data_ptr() for t in pool.buffers}
    assert {out.data_ptr(), q.data_ptr(), kc.data_ptr()} <= set(held)
    lse_bytes = B * H * 4                                    # the dropped lse: (B, H, 1) float32
    assert any(n == lse_bytes and p not in pooled for p, n in held.items())
    assert capture_keep() is None                            # the list ended with the capture
    nodes = stub.graph_nodes(int(graph.exe))
    assert nodes and set(nodes) == {"kernel"}
    scale = D ** -0.5
    tol = 4 * 2 ** -11
    assert (eager.double() - _decode_ref(q, kc, vc, table, lens, scale)).abs().max() <= tol
    q.copy_(torch.randn(B, 1, H, D).half())                  # new token, longer / shorter sequences
    kc.copy_(torch.randn(6, BS, HKV, D).half())
    lens.copy_(torch.tensor([37, 3], dtype=torch.int32))
    graph.launch(stream)
    graph.close()
    assert (out.double() - _decode_ref(q, kc, vc, table, lens, scale)).abs().max() <= tol
    assert not stub.faults


def test_a_captured_training_steps_ops_replay_forward_and_backward(stub, hip_dev, stream):
    """linear and flash_attn_func forward + backward (autograd) captured and replayed."""
    import wmma_gen.torch as wt
    torch.manual_seed(1)
    x = torch.randn(24, 64).half().requires_grad_()
    w = (torch.randn(48, 64) / 8).half().requires_grad_()
    q, k, v = (torch.randn(1, 32, 2, 32).half().requires_grad_() for _ in range(3))
    gy, go = torch.randn(24, 48).half(), torch.randn(1, 32, 2, 32).half()

    def step():
        for t in (x, w, q, k, v):
            t.grad = None
        y = wt.linear(x, w)
        o = wt.flash_attn_func(q, k, v, causal=True)
        y.backward(gy)
        o.backward(go)
        return y, o, [t.grad for t in (x, w, q, k, v)]

    pool = wt.ScratchPool()
    with routed(hip_dev), wt.launch_stream(int(stream)):
        with wt.scratch_pool(pool):
            step()                                           # warm-up reserves the scratch
        reserved, before = pool.reserved, Counter(stub.calls)
        hip_dev.begin_capture(stream)
        with wt.scratch_pool(pool):                          # the forward's lse, freed after backward: kept by the graph
            y, o, grads = step()                             # recorded, not run
        graph = hip_dev.end_capture(stream)
        assert len(graph.keep_alive) > 0
        assert _calls_during(stub, before) <= LAUNCH_ONLY and pool.reserved == reserved
        assert set(stub.graph_nodes(int(graph.exe))) == {"kernel"}
        with torch.no_grad():                                # new inputs in the same tensors
            for t in (x, w, q, k, v):
                t.copy_(torch.randn_like(t) / (8 if t is w else 1))
        graph.launch(stream)
        graph.close()
    xd, wd = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    (xd @ wd.T).backward(gy.double())
    qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
    ref_o = torch.nn.functional.scaled_dot_product_attention(
        qd.transpose(1, 2), kd.transpose(1, 2), vd.transpose(1, 2), is_causal=True).transpose(1, 2)
    ref_o.backward(go.double())
    refs = [(y, (xd @ wd.T)), (o, ref_o)] + list(zip(grads, (xd.grad, wd.grad, qd.grad, kd.grad, vd.grad)))
    for got, ref in refs:
        ref = ref.detach()
        assert (got.detach().double() - ref).abs().max() <= 8 * 2 ** -11 * max(1.0, float(ref.abs().max()))
    assert not stub.faults


def test_the_c_no_op_launch_never_reaches_python(stub_library, stub, hip_dev, axpy):
    """The benchmark's baseline (bench/launch_overhead.py): with noop_launch on,
    hipModuleLaunchKernel answers hipSuccess in C -- no callback, nothing recorded or run."""
    import numpy as np
    from hip_helpers import BLOCK, GRID
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    hip_dev.function(axpy)                                   # module loaded through Python first
    before, launched = stub.calls["hipModuleLaunchKernel"], stub_library.noop_launches()
    assert stub_library.noop_launch(True) is False
    try:
        hip_dev.enqueue(axpy, GRID, BLOCK, [x.ctypes.data, y.ctypes.data, 2.0])
    finally:
        stub_library.noop_launch(False)
    assert stub_library.noop_launches() == launched + 1
    assert stub.calls["hipModuleLaunchKernel"] == before and not stub.launches and not y.any()
    hip_dev.enqueue(axpy, GRID, BLOCK, [x.ctypes.data, y.ctypes.data, 2.0])   # off again: runs
    assert stub.calls["hipModuleLaunchKernel"] == before + 1 and (y == 2.0).all()
