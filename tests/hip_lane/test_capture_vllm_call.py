"""The exact call wmma_gen's vLLM backend makes per layer (wmma_gen/integrations/vllm/impl.py):
flash_attn_varlen_func on a paged cache with cu_seqlens_q, seqused_k, block_table and out=,
captured under hipStreamBeginCapture on a decode batch (what the backend's
UNIFORM_SINGLE_TOKEN_DECODE lets vLLM capture) makes only kernel launches, and the graph
replayed on new queries, cache contents and sequence lengths in the same tensors writes the right
O into the same output buffer. Through real hip-python + HipDevice over the HIP stand-in (kernels
run on the emulator); float64 reference written from the math."""
from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from wmma_gen.device.select import routed  # noqa: E402

LAUNCH_ONLY = {"hipModuleLaunchKernel", "hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing",
               "hipGraphInstantiate"}


def _ref(q, kc, vc, table, lens, scale, window_left):
    """q (B, H, D): one decode query per sequence at position lens[b] - 1 -> (B, H, D) float64."""
    B, H, D = q.shape
    bs, hkv = kc.shape[1], kc.shape[2]
    out = torch.zeros(B, H, D, dtype=torch.float64)
    for b in range(B):
        L = int(lens[b])
        rows = torch.arange(L)
        rows = rows[rows >= L - 1 - window_left] if window_left >= 0 else rows
        blk, off = table[b].long()[rows // bs], rows % bs
        K, V = kc[blk, off].double(), vc[blk, off].double()
        for h in range(H):
            s = (K[:, h // (H // hkv)] @ q[b, h].double()) * scale
            out[b, h] = torch.softmax(s, 0) @ V[:, h // (H // hkv)]
    return out


def test_captured_vllm_decode_call_replays_into_the_same_output(stub, hip_dev):
    import wmma_gen.torch as wt
    stream = hip_dev.hip.hipStreamCreate()[1]
    torch.manual_seed(0)
    B, H, HKV, D, BS, W = 3, 4, 2, 32, 16, 12
    q = torch.randn(B, H, D).half()
    kv = torch.randn(7, BS, HKV, 2 * D).half()                 # vLLM's token-major block: K and V side by side
    kc, vc = kv[..., :D], kv[..., D:]                          # strided views, as the backend passes them
    table = torch.tensor([[4, 1, 0], [2, 5, 3], [6, 0, 0]], dtype=torch.int32)
    lens = torch.tensor([20, 9, 16], dtype=torch.int32)
    cu_q = torch.arange(B + 1, dtype=torch.int32)             # one query token per sequence
    out = torch.empty(B + 2, H, D, dtype=torch.float16)        # vLLM's padded output buffer
    scale = D ** -0.5

    def call():
        return wt.flash_attn_varlen_func(q, kc, vc, cu_q, None, 1, 48, softmax_scale=scale, causal=True,
                                         window_size=(W - 1, 0), block_table=table, seqused_k=lens, out=out[:B],
                                         return_attn_probs=True)

    pool = wt.ScratchPool()
    try:
        with routed(hip_dev), wt.launch_stream(int(stream)):
            with wt.scratch_pool(pool):
                call()                                          # warm: plan, module, scratch reserved
            assert (out[:B].double() - _ref(q, kc, vc, table, lens, scale, W - 1)).abs().max() <= 4 * 2 ** -11
            reserved, before = pool.reserved, Counter(stub.calls)
            hip_dev.begin_capture(stream)
            with wt.scratch_pool(pool):
                kept = call()           # KEEP_ALIVE (test_capture.py): the lse the graph writes on replay
            graph = hip_dev.end_capture(stream)
        assert {n for n, c in stub.calls.items() if c > before.get(n, 0)} <= LAUNCH_ONLY
        assert pool.reserved == reserved and set(stub.graph_nodes(int(graph.exe))) == {"kernel"}
        q.copy_(torch.randn(B, H, D).half())                    # the next step: new tokens, longer / shorter
        kv.copy_(torch.randn_like(kv))
        lens.copy_(torch.tensor([33, 2, 41], dtype=torch.int32))
        out.fill_(float("nan"))
        graph.launch(stream)
        graph.close()
        assert (out[:B].double() - _ref(q, kc, vc, table, lens, scale, W - 1)).abs().max() <= 4 * 2 ** -11
        assert out[B:].isnan().all() and not stub.faults
    finally:
        hip_dev.hip.hipStreamDestroy(stream)
