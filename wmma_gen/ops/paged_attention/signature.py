"""The paged decode kernel's arguments (STYLE rule 15), in kernel order:

    Q (in), K_cache, V_cache (in), block_table, seq_lens (in, i32), [kv_scales (in, f32)],
    O_part, LSE_part (out, f32),
    heads, kv_group, seq_q, rows, q_sb, q_ss, q_sh, k_sblk, k_ss, k_sh, v_sblk, v_ss, v_sh,
    bt_sb, scale (f32), softcap (f32), window_left, window_right        (scalars, i32 unless noted)

Shapes: Q (batch, seq_q, heads, D), varlen (total_q, heads, D) with cu_seqlens_q (batch + 1,)
after seq_lens (seq_q is then the longest chunk: grid size only); K_cache / V_cache
(num_blocks, block_size, kv_heads, D); block_table (batch, max_blocks); seq_lens (batch,);
kv_scales (2, kv_heads): row 0 scales K, row 1 scales V (fp8 caches only); O_part (split,
heads, rows, D), LSE_part (split, heads, rows) with rows = batch * seq_q and row = b * seq_q + i
(varlen: total_q and cu_seqlens_q[b] + i) -- exactly the dense forward's split-KV partials
(attention/signature.py), so its combine kernel (attention/combine.py) finishes.
Grid: (ceil(group * seq_q / BLOCK_M) * split_kv, kv_heads, batch); block (32 * waves, 1, 1).
Problem keys: batch, heads, kv_heads, seq_q, num_blocks, max_blocks, and optionally scale
(default 1/sqrt(D)), softcap (0 = off), window_left / window_right (-1: unbounded).
"""
from __future__ import annotations

import math

from ...kernels.signature import KArg, Signature

SCALARS = ("heads", "kv_group", "seq_q", "rows", "q_sb", "q_ss", "q_sh", "k_sblk", "k_ss", "k_sh",
           "v_sblk", "v_ss", "v_sh", "bt_sb", "scale", "softcap", "window_left", "window_right")
F32_SCALARS = ("scale", "softcap")
STORAGE = {"f16": "f16", "bf16": "bf16", "fp8e4m3": "fp8", "fp8e5m2": "bf8"}   # kv_dtype -> KArg dtype


def buffer_names(d) -> list[tuple[str, str]]:
    out = [("Q", STORAGE[d.q_dtype]), ("K_cache", STORAGE[d.kv_dtype]), ("V_cache", STORAGE[d.kv_dtype]),
           ("block_table", "i32"), ("seq_lens", "i32")]
    if d.varlen:
        out.append(("cu_seqlens_q", "i32"))
    if d.fp8:
        out.append(("kv_scales", "f32"))
    return out + [("O_part", "f32"), ("LSE_part", "f32")]


def rows(p) -> int:
    """query rows of the partial buffers: total_q (varlen) or batch * seq_q"""
    return p["total_q"] if "total_q" in p else p["batch"] * p["seq_q"]


def group_rows(p) -> int:
    """packed query rows per (sequence, kv head): the group's heads times the query tokens"""
    return p["heads"] // p["kv_heads"] * p["seq_q"]


def paged_signature(d, s, name: str) -> Signature:
    D = d.head_dim
    cache = lambda p: (p["num_blocks"], d.block_size, p["kv_heads"], D)
    qt = STORAGE[d.q_dtype]
    q = (KArg("Q", "in", qt, shape=lambda p: (p["total_q"], p["heads"], D), strides=("q_ss", "q_sh"))
         if d.varlen else KArg("Q", "in", qt, shape=lambda p: (p["batch"], p["seq_q"], p["heads"], D),
                               strides=("q_sb", "q_ss", "q_sh")))
    args = [q,
            KArg("K_cache", "in", STORAGE[d.kv_dtype], shape=cache, strides=("k_sblk", "k_ss", "k_sh")),
            KArg("V_cache", "in", STORAGE[d.kv_dtype], shape=cache, strides=("v_sblk", "v_ss", "v_sh")),
            KArg("block_table", "in", "i32", shape=lambda p: (p["batch"], p["max_blocks"]), strides=("bt_sb",)),
            KArg("seq_lens", "in", "i32", shape=lambda p: (p["batch"],))]
    if d.varlen:
        args.append(KArg("cu_seqlens_q", "in", "i32", shape=lambda p: (p["batch"] + 1,)))
    if d.fp8:
        args.append(KArg("kv_scales", "in", "f32", shape=lambda p: (2, p["kv_heads"])))
    args += [KArg("O_part", "out", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p), D)),
             KArg("LSE_part", "out", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p)))]
    strided = {n for a in args for n in a.strides}
    values = {
        "heads": lambda p: p["heads"],
        "kv_group": lambda p: p["heads"] // p["kv_heads"],
        "seq_q": lambda p: p["seq_q"],
        "rows": rows,
        "scale": lambda p: p["scale"] if p.get("scale") is not None else 1.0 / math.sqrt(D),
        "softcap": lambda p: p.get("softcap") or 0.0,
        "window_left": lambda p: p.get("window_left", -1),
        "window_right": lambda p: p.get("window_right", -1),
        "q_sb": lambda p: 0,
    }
    for n in SCALARS:
        dt = "f32" if n in F32_SCALARS else "i32"
        args.append(KArg(n, "scalar", "i32") if n in strided else KArg(n, "scalar", dt, value=values[n]))
    bm, split = s.block_m, s.split_kv
    return Signature(name, tuple(args),
                     grid=lambda p: (-(-group_rows(p) // bm) * split, p["kv_heads"], p["batch"]),
                     block=(s.threads, 1, 1))
