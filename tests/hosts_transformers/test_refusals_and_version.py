"""What wmma_gen cannot run is refused naming the argument (never dropped), and the supported
transformers range is pinned: declared in pyproject's test extra, satisfied by the installed
transformers, and any other version refused by register()."""
import re
from pathlib import Path

import pytest
import torch

import tiny_models as tm

from wmma_gen.integrations import transformers as wt


def test_dropout_in_training_is_refused_naming_it(names):
    m = tm.model("llama", attn=names[0], attention_dropout=0.1).train()
    ids, mask = tm.padded_batch()
    with pytest.raises(NotImplementedError, match="dropout=0.1"):
        m(input_ids=ids, attention_mask=mask)


def test_output_attentions_is_refused(names):
    m = tm.model("llama", attn=names[0])
    ids, mask = tm.padded_batch()
    with pytest.raises(NotImplementedError, match="output_attentions"), torch.no_grad():
        m(input_ids=ids, attention_mask=mask, output_attentions=True)


@pytest.mark.parametrize("kw,match", [({"alibi_slopes": torch.ones(4)}, "alibi_slopes"),
                                      ({"attention_mask": torch.zeros(1, 1, 5, 5)}, "attention_mask of shape")])
def test_alibi_and_4d_masks_are_refused(kw, match, names):
    m = tm.model("llama", attn=names[0])
    q = torch.randn(1, 4, 5, 16).half()
    k = torch.randn(1, 2, 5, 16).half()
    mask = kw.pop("attention_mask", None)
    with pytest.raises(NotImplementedError, match=match):
        wt.attention_forward(m.model.layers[0].self_attn, q, k, k, mask, **kw)


def test_supported_range_is_pinned_in_pyproject_and_installed():
    import transformers
    from packaging.specifiers import SpecifierSet
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    spec = re.search(r'"transformers([^"]+)"', text).group(1)
    assert SpecifierSet(spec) == SpecifierSet(",".join(wt.SUPPORTED))
    assert transformers.__version__ in SpecifierSet(spec)


def test_an_unsupported_transformers_version_is_refused(monkeypatch):
    import transformers
    monkeypatch.setattr(transformers, "__version__", "5.40.0")
    with pytest.raises(RuntimeError, match=r"transformers 5.40.0 is not supported.*>=5.19,<5.26"):
        wt.register()


@pytest.mark.parametrize("name", ["flash_wmma", "paged|x", "org/repo", ""])
def test_names_transformers_special_cases_are_refused(name):
    with pytest.raises(ValueError, match="name="):
        wt.register(name)


def test_sinks_are_refused_naming_s_aux_when_the_kernels_lack_them(monkeypatch, names):
    """The guard for a wmma_gen.torch without s_aux (today's has it): transformers would drop the
    sinks silently for a kernel whose signature lacks them, so the integration raises instead."""
    def no_sinks(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
        raise AssertionError("must not be called")
    monkeypatch.setattr(wt, "_kernels", lambda: (no_sinks, no_sinks, no_sinks))
    m = tm.model("gpt_oss", attn=names[0])
    q, k = torch.randn(1, 4, 5, 16).half(), torch.randn(1, 2, 5, 16).half()
    with pytest.raises(NotImplementedError, match="s_aux"):
        wt.attention_forward(m.model.layers[0].self_attn, q, k, k, None, s_aux=torch.zeros(4))
