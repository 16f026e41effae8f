"""Split-KV combine of the MLA kernel's partials (deterministic; one thread per (row, head,
8 of the Dv values); the merge: kernels/split_combine.py, shared with attention). O (batch,
seq_q, heads, Dv) and LSE (batch, heads, seq_q) are written contiguous (FlashMLA's layouts);
row = b * seq_q + i. Arguments: signature.combine_signature.
"""
from __future__ import annotations

from ...kernels import irb
from ...kernels.attention_blocks import iadd, imul
from ...kernels.module import gpu_module_text
from ...kernels.signature import KernelSource
from ...kernels.split_combine import Layout, combine_body, combine_function
from ...targets import Target
from .signature import COMBINE_SCALARS, THREADS_COMBINE, combine_signature


def _layout(dv: int) -> Layout:
    """O[row, h] at (row * heads + h) * Dv; LSE[b, h, i] at (b * heads + h) * seq_q + i."""
    def lse_index(row, h, x):
        b, i = irb.div(row, x["seq_q"]), irb.rem(row, x["seq_q"])
        return iadd(imul(iadd(imul(b, x["heads"]), h), x["seq_q"]), i)
    return Layout(coords=lambda row, x: row, o_index=lambda row, h, x: imul(iadd(imul(row, x["heads"]), h), dv),
                  lse_index=lse_index)


def build_combine(d, s, t: Target) -> KernelSource:
    from .kernel import kernel_name
    name = kernel_name(d, s) + "_combine"
    bufs = [("O_part", "f32"), ("LSE_part", "f32"), ("O", d.dtype), ("LSE", "f32")]

    def body(ptr, x):
        combine_body(ptr, x, splits=s.split_kv, width=d.head_dim_v, dtype=d.dtype, threads=THREADS_COMBINE,
                     layout=_layout(d.head_dim_v))
    text = gpu_module_text(name, t.arch, lambda: combine_function(name, bufs, COMBINE_SCALARS, THREADS_COMBINE, body))
    return KernelSource(name, text, t.arch, combine_signature(d, s, name))
