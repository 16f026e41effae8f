"""wmma_gen: WMMA kernel generator, emulator and autotuner for AMD RDNA GPUs.

`wmma_gen.gemm`, `wmma_gen.attention` and `wmma_gen.attention_backward` are imported on first use (PEP 562): importing a light submodule such as
wmma_gen.numerics or wmma_gen.emu does not load the MLIR bindings (~3 s).
"""
__version__ = "0.1.0"

__all__ = ["gemm", "attention", "attention_backward", "paged_attention", "mla_decode", "__version__"]


def __getattr__(name):
    if name == "gemm":
        from .ops.gemm import gemm
        return gemm
    if name == "attention":
        from .ops.attention.api import attention
        return attention
    if name == "attention_backward":
        from .ops.attention_bwd.api import attention_backward
        return attention_backward
    if name == "paged_attention":
        from .ops.paged_attention.api import paged_attention
        return paged_attention
    if name == "mla_decode":
        from .ops.mla.api import mla_decode
        return mla_decode
    raise AttributeError(f"module 'wmma_gen' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + ["gemm", "attention", "attention_backward", "paged_attention", "mla_decode"])
