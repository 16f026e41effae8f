"""transformers' stock attn_implementation="sdpa" under wmma_gen.torch.sdpa.enabled(cpu=True):
an unpadded batch (transformers passes is_causal and no mask) runs on wmma_gen and matches
eager; a padded batch carries an attn_mask, so it stays on torch's kernel (exactly torch's result)."""
import torch

import tiny_models as tm

from wmma_gen.torch import sdpa


def test_stock_sdpa_runs_on_wmma_gen_without_padding_and_falls_back_with_it():
    m = tm.model("llama")
    ids, mask = tm.padded_batch()
    with torch.no_grad():
        want = m(input_ids=ids).logits.float()
        m.set_attn_implementation("sdpa")
        torch_padded = m(input_ids=ids, attention_mask=mask).logits
        with sdpa.enabled(cpu=True):
            got, ops = tm.wmma_ops(lambda: m(input_ids=ids).logits.float())
            padded, padded_ops = tm.wmma_ops(lambda: m(input_ids=ids, attention_mask=mask).logits)
    assert ops == {"wmma_gen::attention"} and padded_ops == set()
    torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)
    assert torch.equal(padded, torch_padded)
