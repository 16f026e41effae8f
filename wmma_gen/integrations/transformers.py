"""wmma_gen as a Hugging Face transformers attention implementation.

    from wmma_gen.integrations.transformers import register
    register()                                            # once per process
    model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="wmma_gen")
    # continuous batching (generate_batch) only accepts names containing "flash":
    model.set_attn_implementation("wmma_gen_flash_attention_2")

Both names run transformers' own flash-attention wrapper (integrations/flash_attention.py ->
modeling_flash_attention_utils._flash_attention_forward) on wmma_gen.torch's flash-attn 2 calls:
padded batches are unpadded to `flash_attn_varlen_func`, packed sequences (position_ids
restarting, or cu_seq_lens kwargs) go to `flash_attn_varlen_func`, paged continuous-batching
decode to `flash_attn_with_kvcache`, the rest to `flash_attn_func`; sliding window, softcap, GQA,
scale and dynamic/static caches are transformers' flash semantics. Padding masks reach the kernel
because the names are also registered in AttentionMaskInterface with transformers' 2-D
`flash_attention_mask` (public API: AttentionInterface.register / AttentionMaskInterface.register).

The shim (the only private hook): transformers resolves a flash name's kernels in the private
`modeling_flash_attention_utils._lazy_imports` (flash_attn packages or a Hub kernel repo), with no
public way to name local functions. `register()` wraps it so that our names return wmma_gen's
functions and every other name is passed through unchanged. It checks the transformers version
(SUPPORTED) and `_lazy_imports`' signature first and raises on anything else.

Never dropped: transformers passes a keyword to the kernel only when the kernel's signature
names it; what wmma_gen cannot do is refused here with NotImplementedError naming it: dropout > 0,
alibi slopes, output_attentions, a 4-D (non-padding) attention mask, and attention sinks (`s_aux`)
while wmma_gen.torch's functions do not accept `s_aux` (checked with inspect.signature; once they
do, transformers passes the sinks through itself).

Name choice: "flash" in a name makes transformers treat it as flash everywhere; continuous
batching refuses names without it, and its block-table decode fast path wants ".*flash.*[23]"
on CUDA (ROCm) -- hence "wmma_gen_flash_attention_2". Models that list
`_compatible_flash_implementations` (GPT-OSS, Granite-SWA, ...) swap any other "flash" name for a
Hub kernel, so use "wmma_gen" for them.
"""
from __future__ import annotations

import inspect

SUPPORTED = (">=5.19", "<5.26")           # transformers versions whose flash internals this was checked on
FLASH_SUFFIX = "_flash_attention_2"
_REFUSED_KWARGS = ("alibi_slopes", "alibi")
_names: set[str] = set()
_original_lazy_imports = None


def _check_version():
    import transformers
    from packaging.version import Version
    from packaging.specifiers import SpecifierSet

    have = Version(transformers.__version__)
    if have not in SpecifierSet(",".join(SUPPORTED)):
        raise RuntimeError(f"transformers {transformers.__version__} is not supported by "
                           f"wmma_gen.integrations.transformers: it needs transformers{','.join(SUPPORTED)} (the "
                           "versions whose private _lazy_imports hook was checked); pin transformers or update "
                           "wmma_gen")


def _kernels():
    from ..torch import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache
    return flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache


def sinks_supported() -> bool:
    """True when all three wmma_gen.torch functions accept `s_aux` (attention sinks)."""
    return all("s_aux" in inspect.signature(f).parameters for f in _kernels())


def _install_lazy_imports_hook() -> None:
    global _original_lazy_imports
    from transformers import modeling_flash_attention_utils as mfau

    if _original_lazy_imports is not None:
        return
    original = mfau._lazy_imports
    params = list(inspect.signature(original).parameters)
    if params[:3] != ["implementation", "attention_wrapper", "allow_all_kernels"]:
        raise RuntimeError(f"transformers.modeling_flash_attention_utils._lazy_imports{inspect.signature(original)} "
                           "is not the signature wmma_gen's hook was written for (implementation, "
                           "attention_wrapper, allow_all_kernels)")

    def lazy_imports(implementation, attention_wrapper=None, allow_all_kernels=False):
        if implementation in _names:
            return (*_kernels(), mfau._pad_input, mfau._unpad_input)
        return original(implementation, attention_wrapper, allow_all_kernels)

    mfau._lazy_imports = lazy_imports
    _original_lazy_imports = original


def attention_forward(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
                      sliding_window=None, softcap=None, is_causal=None, s_aux=None, **kwargs):
    """The AttentionInterface function: refuse what wmma_gen cannot run, then transformers' flash
    wrapper (which calls the kernels `_lazy_imports` resolves for our name)."""
    from transformers.integrations.flash_attention import flash_attention_forward

    if dropout:
        raise NotImplementedError(f"dropout={dropout} is not supported by wmma_gen attention (only 0.0): set the "
                                  "model's attention_dropout to 0.0 for training")
    for name in _REFUSED_KWARGS:
        if kwargs.get(name) is not None:
            raise NotImplementedError(f"{name} is not supported by wmma_gen attention")
    if kwargs.get("output_attentions"):
        raise NotImplementedError("output_attentions=True is not supported by wmma_gen attention (flash kernels "
                                  "never form the probabilities): use attn_implementation='eager' for them")
    if attention_mask is not None and attention_mask.dim() != 2:
        raise NotImplementedError(f"attention_mask of shape {tuple(attention_mask.shape)} is not supported by "
                                  "wmma_gen attention: only 2-D padding masks (causal, sliding window and softcap "
                                  "are arguments)")
    if s_aux is not None and not sinks_supported():
        raise NotImplementedError("s_aux (attention sinks) is not supported by this wmma_gen's flash_attn_func / "
                                  "flash_attn_varlen_func / flash_attn_with_kvcache")
    return flash_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                   sliding_window=sliding_window, softcap=softcap, is_causal=is_causal, s_aux=s_aux,
                                   **kwargs)


def register(name: str = "wmma_gen") -> tuple[str, str]:
    """Register `name` and `name + "_flash_attention_2"` (the one continuous batching accepts) as
    transformers attention implementations on wmma_gen, with transformers' flash padding mask.
    Returns both names. Idempotent. Raises RuntimeError on an unsupported transformers version."""
    if not isinstance(name, str) or not name or "flash" in name or "|" in name or "/" in name:
        raise ValueError(f"name={name!r} is not allowed: a non-empty str without 'flash', '|' or '/' (flash names "
                         "and Hub-kernel paths are special-cased by transformers; the flash alias is derived)")
    _check_version()
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask

    _install_lazy_imports_hook()
    names = (name, name + FLASH_SUFFIX)
    for n in names:
        _names.add(n)
        AttentionInterface.register(n, attention_forward)
        AttentionMaskInterface.register(n, flash_attention_mask)
    return names
