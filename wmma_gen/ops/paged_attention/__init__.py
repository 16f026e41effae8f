"""Paged-KV decode attention (vLLM block tables): see directive.py and kernel.py."""
