"""A head dim above 256 through transformers' integration: a tiny Llama with head_dim 512 (4 query
heads over 2 kv heads, padded batch -> varlen) on attn_implementation="wmma_gen" gives eager's
logits with wmma_gen's forward running (the d_split kernel, ops/attention/defaults.py)."""
import torch

import tiny_models as tm


def test_llama_head_dim_512_logits_match_eager(names):
    m = tm.model("llama", head_dim=512)
    ids, mask = tm.padded_batch()
    with torch.no_grad():
        want = m(input_ids=ids, attention_mask=mask).logits.float()
    m.set_attn_implementation(names[0])
    with torch.no_grad():
        got, ops = tm.wmma_ops(lambda: m(input_ids=ids, attention_mask=mask).logits.float())
    assert ops == {"wmma_gen::attention"}
    keep = mask.bool()
    torch.testing.assert_close(got[keep], want[keep], atol=2e-2, rtol=2e-2)
