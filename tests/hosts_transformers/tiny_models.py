"""Tiny random-weight causal LMs (hidden 64, 4 query heads over 2 kv heads of 16, vocab 64) for
the families whose attention differs: Llama (full causal), Qwen2 (sliding window), Gemma2
(softcap + sliding window + query_pre_attn_scalar), GPT-OSS (sinks + sliding window)."""
import torch
from torch.profiler import profile

COMMON = dict(vocab_size=64, hidden_size=64, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
              head_dim=16, max_position_embeddings=64, pad_token_id=0, bos_token_id=2, eos_token_id=1,
              attention_dropout=0.0)


def config(family: str, layers: int = 1):
    import transformers as tf
    if family == "llama":
        return tf.LlamaConfig(num_hidden_layers=layers, **COMMON)
    if family == "qwen2":
        return tf.Qwen2Config(num_hidden_layers=layers, use_sliding_window=True, sliding_window=4,
                              max_window_layers=0, layer_types=["sliding_attention"] * layers, **COMMON)
    if family == "gemma2":
        return tf.Gemma2Config(num_hidden_layers=layers, sliding_window=4, attn_logit_softcapping=1.0,
                               query_pre_attn_scalar=16, layer_types=["sliding_attention"] * layers, **COMMON)
    if family == "gpt_oss":
        return tf.GptOssConfig(num_hidden_layers=layers, num_local_experts=2, num_experts_per_tok=1, sliding_window=4,
                               layer_types=["sliding_attention"] * layers, **COMMON)
    raise ValueError(family)


def model(family: str, attn: str = "eager", dtype=torch.float16, layers: int = 1, **overrides):
    from transformers import AutoModelForCausalLM
    cfg = config(family, layers)
    for k, v in overrides.items():
        setattr(cfg, k, v)
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn, dtype=dtype)
    for p in m.parameters():           # random init is tiny for some families; widen it so attention matters
        torch.nn.init.normal_(p, std=0.3) if p.dim() > 1 else None
    return m.eval()


def padded_batch():
    """Two rows, the second left-padded by 3 (what generate does with a pad token)."""
    ids = torch.randint(3, 64, (2, 9))
    mask = torch.ones(2, 9, dtype=torch.long)
    mask[1, :3] = 0
    ids[1, :3] = 0
    return ids, mask


def wmma_ops(fn):
    """(fn's result, the wmma_gen:: ops the profiler saw while it ran)."""
    with profile() as prof:
        out = fn()
    return out, {e.name for e in prof.events() if e.name.startswith("wmma_gen::")}
