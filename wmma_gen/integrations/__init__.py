"""Host integrations: transformers (transformers.py), vLLM (vllm/). Each module imports its host lazily."""
