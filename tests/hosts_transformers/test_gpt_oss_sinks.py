"""GPT-OSS passes attention sinks (s_aux, one logit per head) to kernels whose signature names
them; wmma_gen.torch's functions do, so a tiny GPT-OSS on "wmma_gen" matches eager's logits
(eager adds the sink to each softmax denominator), sliding window and padding included."""
import torch

import tiny_models as tm

from wmma_gen.integrations.transformers import sinks_supported


def test_gpt_oss_sinks_reach_the_kernel_and_match_eager(names):
    assert sinks_supported()
    m = tm.model("gpt_oss")
    for layer in m.model.layers:           # sinks large enough to move the softmax visibly
        torch.nn.init.normal_(layer.self_attn.sinks, std=2.0)
    ids, mask = tm.padded_batch()
    with torch.no_grad():
        want = m(input_ids=ids, attention_mask=mask).logits.float()
        m.set_attn_implementation(names[0])
        got, ops = tm.wmma_ops(lambda: m(input_ids=ids, attention_mask=mask).logits.float())
        m.set_attn_implementation("eager")
        for layer in m.model.layers:       # without the sinks the logits are visibly different: they mattered
            layer.self_attn.sinks.fill_(-1e4)
        no_sink = m(input_ids=ids, attention_mask=mask).logits.float()
    assert ops == {"wmma_gen::attention"}
    keep = mask.bool()
    torch.testing.assert_close(got[keep], want[keep], atol=2e-2, rtol=2e-2)
    assert (no_sink[keep] - want[keep]).abs().max() > 0.1
