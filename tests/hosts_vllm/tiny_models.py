"""Tiny random-weight checkpoints for the vLLM lane, written offline (no download): a word-level
tokenizer over "w1".."w127" and a model built with from_config, saved to a directory vLLM loads.

    llama(dir)     Llama, 2 layers, 4 query heads over 2 kv heads (GQA), head_dim 32
    mistral_sw(dir) Mistral with a sliding window of 8 on every layer (vLLM 0.32's Qwen2 refuses a window on
                   some layers only: "Sliding window for some but all layers is not supported")
"""
from __future__ import annotations

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoModelForCausalLM, LlamaConfig, MistralConfig, PreTrainedTokenizerFast

VOCAB = 128
COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, head_dim=32, max_position_embeddings=256, bos_token_id=1, eos_token_id=2)


def _save(config, path) -> str:
    vocab = {"<unk>": 0, **{f"w{i}": i for i in range(1, VOCAB)}}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="w1",
                            eos_token="w2").save_pretrained(path)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).to(torch.float16)
    with torch.no_grad():                   # larger logits: fewer near-ties between greedy candidates
        model.lm_head.weight.mul_(8.0)
    model.save_pretrained(path)
    return str(path)


def llama(path) -> str:
    return _save(LlamaConfig(**COMMON), path)


def mistral_sw(path) -> str:
    return _save(MistralConfig(**COMMON, sliding_window=8), path)


def prompts() -> list[str]:
    """Three prompts: 5, 11 and 27 tokens (the last longer than a 16-token step: chunked prefill)."""
    return [" ".join(f"w{3 + i}" for i in range(n)) for n in (5, 11, 27)]
