"""The MLA decode kernels' arguments (STYLE rule 15), in kernel order.

mla (kernel.py):
    Q (in, (batch, seq_q, heads, D)), KV_cache (in, (num_blocks, block_size, 1, D)),
    block_table (in, i32 (batch, max_blocks)), seq_lens (in, i32 (batch,)), [kv_scale (in, f32 (1,))],
    O_part (out, f32 (split, heads, rows, Dv)), LSE_part (out, f32 (split, heads, rows)),
    heads, seq_q, rows, q_sb, q_ss, q_sh, c_sblk, c_ss, c_sh, bt_sb, scale (f32)      (scalars)
    rows = batch * seq_q, row = b * seq_q + i. Grid (ceil(heads * seq_q / 16) * split, 1, batch).

combine (combine.py):
    O_part, LSE_part (in), O (out, (batch, seq_q, heads, Dv) contiguous), LSE (out, f32
    (batch, heads, seq_q) contiguous), heads, rows, seq_q. Grid (ceil(rows * Dv / 8 / 256), heads, 1).

Problem keys: batch, heads, seq_q, num_blocks, max_blocks, and optionally scale (default 1/sqrt(D)).
"""
from __future__ import annotations

import math

from ...kernels.signature import KArg, Signature

SCALARS = ("heads", "seq_q", "rows", "q_sb", "q_ss", "q_sh", "c_sblk", "c_ss", "c_sh", "bt_sb", "scale")
COMBINE_SCALARS = ("heads", "rows", "seq_q")
STORAGE = {"f16": "f16", "bf16": "bf16", "fp8e4m3": "fp8", "fp8e5m2": "bf8"}   # kv_dtype -> KArg dtype
THREADS_COMBINE = 256


def rows(p) -> int:
    return p["batch"] * p["seq_q"]


def buffer_names(d) -> list[tuple[str, str]]:
    out = [("Q", d.dtype), ("KV_cache", STORAGE[d.kv_dtype]), ("block_table", "i32"), ("seq_lens", "i32")]
    if d.fp8:
        out.append(("kv_scale", "f32"))
    return out + [("O_part", "f32"), ("LSE_part", "f32")]


def mla_signature(d, s, name: str) -> Signature:
    D, Dv = d.head_dim, d.head_dim_v
    args = [KArg("Q", "in", d.dtype, shape=lambda p: (p["batch"], p["seq_q"], p["heads"], D),
                 strides=("q_sb", "q_ss", "q_sh")),
            KArg("KV_cache", "in", STORAGE[d.kv_dtype], shape=lambda p: (p["num_blocks"], d.block_size, 1, D),
                 strides=("c_sblk", "c_ss", "c_sh")),
            KArg("block_table", "in", "i32", shape=lambda p: (p["batch"], p["max_blocks"]), strides=("bt_sb",)),
            KArg("seq_lens", "in", "i32", shape=lambda p: (p["batch"],))]
    if d.fp8:
        args.append(KArg("kv_scale", "in", "f32", shape=lambda p: (1,)))
    args += [KArg("O_part", "out", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p), Dv)),
             KArg("LSE_part", "out", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p)))]
    strided = {n for a in args for n in a.strides}
    values = {"heads": lambda p: p["heads"], "seq_q": lambda p: p["seq_q"], "rows": rows,
              "scale": lambda p: p["scale"] if p.get("scale") is not None else 1.0 / math.sqrt(D)}
    for n in SCALARS:
        args.append(KArg(n, "scalar", "i32") if n in strided else
                    KArg(n, "scalar", "f32" if n == "scale" else "i32", value=values[n]))
    split = s.split_kv
    return Signature(name, tuple(args), grid=lambda p: (-(-p["heads"] * p["seq_q"] // 16) * split, 1, p["batch"]),
                     block=(s.threads, 1, 1))


def combine_signature(d, s, name: str) -> Signature:
    Dv = d.head_dim_v
    args = (KArg("O_part", "in", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p), Dv)),
            KArg("LSE_part", "in", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p))),
            KArg("O", "out", d.dtype, shape=lambda p: (p["batch"], p["seq_q"], p["heads"], Dv)),
            KArg("LSE", "out", "f32", shape=lambda p: (p["batch"], p["heads"], p["seq_q"])),
            KArg("heads", "scalar", "i32", value=lambda p: p["heads"]),
            KArg("rows", "scalar", "i32", value=rows),
            KArg("seq_q", "scalar", "i32", value=lambda p: p["seq_q"]))
    per_wg = THREADS_COMBINE * 8 // Dv
    return Signature(name, args, grid=lambda p: (-(-rows(p) // per_wg), p["heads"], 1), block=(THREADS_COMBINE, 1, 1))
