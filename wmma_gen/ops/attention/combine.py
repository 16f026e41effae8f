"""Split-KV combine kernel of dense and paged attention: O and LSE from the per-split partial
results, deterministic (the merge: kernels/split_combine.py, shared with MLA decode).
Arguments, in order:

    O_part (in, f32 (split, H, rows, D)), LSE_part (in, f32 (split, H, rows)), O (out),
    [LSE (out)], [sinks (in, f32 (H,))], heads, rows, seq_q, o_sb, o_sh, o_ss, lse_sb, lse_sh     (i32 scalars)

Row r is (b, i) = (r // seq_q, r % seq_q); varlen passes seq_q = total_q (b = 0, i = r:
the packed row) and *_sb = 0. Grid: (ceil(rows * D / 8 / 256), heads, 1), block 256. With
directive.sinks the head's sink logit is one more term of the denominator and LSE.
"""
from __future__ import annotations

from ...kernels import irb
from ...kernels.attention_blocks import iadd, imul
from ...kernels.module import gpu_module_text
from ...kernels.signature import KernelSource
from ...kernels.split_combine import Layout, combine_body, combine_function
from .combine_signature import COMBINE_SCALARS, THREADS, combine_signature  # noqa: F401  (declared there: no MLIR)

# O[b, i, h] at b o_sb + h o_sh + i o_ss, LSE[b, h, i] at b lse_sb + h lse_sh + i
LAYOUT = Layout(coords=lambda row, x: (irb.div(row, x["seq_q"]), irb.rem(row, x["seq_q"])),
                o_index=lambda bi, h, x: iadd(imul(bi[0], x["o_sb"]), iadd(imul(h, x["o_sh"]), imul(bi[1], x["o_ss"]))),
                lse_index=lambda bi, h, x: iadd(iadd(imul(bi[0], x["lse_sb"]), imul(h, x["lse_sh"])), bi[1]))


def build_attention_combine(d, s, t) -> KernelSource:
    """The combine kernel matching build_attention(d, s, t) with s.split_kv > 1."""
    from .kernel import kernel_name
    name = kernel_name(d, s) + "_combine"
    bufs = [("O_part", "f32"), ("LSE_part", "f32"), ("O", d.dtype)] + ([("LSE", "f32")] if d.return_lse else [])
    bufs += [("sinks", "f32")] if d.sinks else []

    def body(ptr, x):
        combine_body(ptr, x, splits=s.split_kv, width=d.head_dim, dtype=d.dtype, threads=THREADS, layout=LAYOUT)
    text = gpu_module_text(name, t.arch, lambda: combine_function(name, bufs, COMBINE_SCALARS, THREADS, body))
    return KernelSource(name, text, t.arch, combine_signature(d, s, name))
