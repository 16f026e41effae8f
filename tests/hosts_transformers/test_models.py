"""Logits, gradients and generated tokens of tiny Llama / Qwen2 (sliding window) / Gemma2
(softcap + window) models on attn_implementation="wmma_gen" against the same weights on eager,
with the profiler showing wmma_gen's ops ran: padded batches (unpad -> varlen), packed sequences
(position_ids restarting -> varlen), generate with dynamic and static caches, one training step."""
import pytest
import torch

import tiny_models as tm

FAMILIES = ["llama", "qwen2", "gemma2"]
TOL = dict(atol=2e-2, rtol=2e-2)           # f16 logits of a model whose eager path also rounds to f16


def _logits(m, **kw):
    with torch.no_grad():
        return m(**kw).logits.float()


@pytest.mark.parametrize("family", FAMILIES)
def test_padded_batch_logits_match_eager(family, names):
    m = tm.model(family)
    ids, mask = tm.padded_batch()
    want = _logits(m, input_ids=ids, attention_mask=mask)
    m.set_attn_implementation(names[0])
    got, ops = tm.wmma_ops(lambda: _logits(m, input_ids=ids, attention_mask=mask))
    assert ops == {"wmma_gen::attention"}
    keep = mask.bool()                      # padded positions' outputs are don't-care in both
    torch.testing.assert_close(got[keep], want[keep], **TOL)


def test_packed_sequences_match_separate_eager_runs(names):
    """Two sequences (5 and 6 tokens) packed in one row with position_ids restarting: each must
    see only itself, as when run alone on eager."""
    m = tm.model("qwen2")
    a, b = torch.randint(3, 64, (1, 5)), torch.randint(3, 64, (1, 6))
    want = torch.cat([_logits(m, input_ids=a), _logits(m, input_ids=b)], 1)
    m.set_attn_implementation(names[0])
    pos = torch.cat([torch.arange(5), torch.arange(6)])[None]
    got, ops = tm.wmma_ops(lambda: _logits(m, input_ids=torch.cat([a, b], 1), position_ids=pos))
    assert ops == {"wmma_gen::attention"}
    torch.testing.assert_close(got, want, **TOL)


@pytest.mark.parametrize("family,cache", [("llama", "dynamic"), ("gemma2", "static"), ("qwen2", "dynamic"),
                                          ("gpt_oss", "dynamic")])
def test_padded_generate_matches_eager_tokens(family, cache, names):
    from transformers import GenerationConfig
    m = tm.model(family)
    ids, mask = tm.padded_batch()
    gc = GenerationConfig(max_new_tokens=4, do_sample=False, pad_token_id=0, eos_token_id=None,
                          cache_implementation=None if cache == "dynamic" else "static")
    want = m.generate(input_ids=ids, attention_mask=mask, generation_config=gc)
    m.set_attn_implementation(names[0])
    got, ops = tm.wmma_ops(lambda: m.generate(input_ids=ids, attention_mask=mask, generation_config=gc))
    assert "wmma_gen::attention" in ops
    assert torch.equal(got, want)


@pytest.mark.parametrize("family", ["llama", "gemma2"])
def test_training_step_gradients_match_eager(family, names):
    """Forward + backward of a padded batch (Gemma2: softcap + sliding window in the backward
    too): the loss and every attention weight's gradient within f16 rounding of eager, the
    backward on wmma_gen::attention_backward."""
    grads = {}
    for attn in ("eager", names[0]):
        m = tm.model(family, attn=attn).train()
        ids, mask = tm.padded_batch()
        labels = ids.masked_fill(mask == 0, -100)
        labels[1, 3] = -100                 # predicted from a pad position's (don't-care) logits

        def step():
            loss = m(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            return loss
        loss, ops = tm.wmma_ops(step)
        grads[attn] = loss.detach().float(), {n: p.grad.float() for n, p in m.named_parameters() if "self_attn" in n}
        if attn != "eager":
            assert ops == {"wmma_gen::attention", "wmma_gen::attention_backward"}
    (l0, g0), (l1, g1) = grads["eager"], grads[names[0]]
    torch.testing.assert_close(l1, l0, **TOL)
    for n in g0:
        torch.testing.assert_close(g1[n], g0[n], atol=5e-2, rtol=5e-2, msg=n)


def test_generate_batch_continuous_batching_matches_eager(names):
    """generate_batch (continuous batching: the prompts packed into varlen calls over a paged
    cache) on the flash-named alias gives eager generate's greedy tokens per prompt."""
    from transformers import ContinuousBatchingConfig, GenerationConfig
    m = tm.model("llama")
    prompts = [[5, 6, 7, 8, 9, 10, 11], [12, 13, 14]]
    gc = GenerationConfig(max_new_tokens=3, do_sample=False, eos_token_id=1, pad_token_id=0)
    want = [m.generate(torch.tensor([p]), generation_config=gc)[0, len(p):].tolist() for p in prompts]
    m.set_attn_implementation(names[1])
    cb = ContinuousBatchingConfig(page_size=16, num_blocks=8, max_batch_tokens=32, max_requests_per_batch=2)
    from wmma_gen.torch import record_problems
    with record_problems() as rec:          # generate_batch runs the model in its own thread, where the
        out = m.generate_batch(inputs=prompts, generation_config=gc,      # profiler does not look
                               continuous_batching_config=cb, warmup=False)
    assert any(p["op"] == "attention" and p["varlen"] for p in rec.problems), rec.problems
    got = sorted(out.values(), key=lambda r: r.request_id)
    assert [r.generated_tokens for r in got] == want
