"""The forward kernel's arguments (STYLE rule 15), in kernel order:

    Q, K, V (in), O (out), [LSE (out, f32)], [cu_seqlens_q, cu_seqlens_k (in, i32)],
    heads, kv_group, seq_q, seq_k, rows,
    q_sb, q_sh, q_ss, k_sb, k_sh, k_ss, v_sb, v_sh, v_ss, o_sb, o_sh, o_ss, lse_sb, lse_sh,
    scale (f32), window_left, window_right, [softcap (f32)]      (scalars, i32 unless noted)
    [sinks (in, f32 (H,))]                                       (directive.sinks: tail_buffers)

Problem keys: batch, heads, kv_heads, seq_q, seq_k, and optionally scale (default
1/sqrt(head_dim)), window_left / window_right (default -1: unbounded), softcap (the cap, only
with directive.softcap: kernels without it keep their argument list); varlen adds total_q,
total_k (packed rows) and uses seq_q / seq_k as the longest sequence (grid size only; each
sequence's lengths come from cu_seqlens). Strides are element strides taken from the arrays
as passed (layout bshd / bhsd is only a choice of strides); *_sb is 0 for varlen.

Shapes:
    dense bshd   Q/O (B, Sq, H, D)   K/V (B, Sk, Hkv, D)   LSE (B, H, Sq)
    dense bhsd   Q/O (B, H, Sq, D)   K/V (B, Hkv, Sk, D)   LSE (B, H, Sq)
    varlen       Q/O (total_q, H, D) K/V (total_k, Hkv, D) LSE (H, total_q)
Grid: (ceil(seq_q / BLOCK_M) * split_kv, heads, batch); block: (32 * waves, 1, 1).

split_kv > 1 (decode shapes): O and LSE are replaced by O_part (split, H, rows, D) and
LSE_part (split, H, rows), f32 outputs, with rows = total_q (varlen) or batch * seq_q and
row = q_start + i (varlen) or b * seq_q + i; each split's O is already divided by its own
l and its LSE is -inf when it saw no key. combine.py's kernel merges them into O and LSE.
With directive.sinks the sink vector is an argument of the kernel that finishes a row: the
forward itself (split_kv = 1) or the combine (split_kv > 1; the partials stay sink-free).
"""
from __future__ import annotations

import math

from ...kernels.signature import KArg, Signature

SCALARS = ("heads", "kv_group", "seq_q", "seq_k", "rows",
           "q_sb", "q_sh", "q_ss", "k_sb", "k_sh", "k_ss", "v_sb", "v_sh", "v_ss",
           "o_sb", "o_sh", "o_ss", "lse_sb", "lse_sh", "scale", "window_left", "window_right")
F32_SCALARS = ("scale", "softcap")


def scalar_names(d) -> tuple[str, ...]:
    """The scalar arguments of directive d's kernel, in order (softcap only when it is on)."""
    return SCALARS + (("softcap",) if d.softcap else ())


def buffer_names(d, s) -> list[tuple[str, str]]:
    """(name, storage dtype) of the buffer arguments, in order."""
    out = [("Q", d.dtype), ("K", d.dtype), ("V", d.dtype)]
    if s.split_kv > 1:
        out += [("O_part", "f32"), ("LSE_part", "f32")]
    else:
        out.append(("O", d.dtype))
        if d.return_lse:
            out.append(("LSE", "f32"))
    if d.varlen:
        out += [("cu_seqlens_q", "i32"), ("cu_seqlens_k", "i32")]
    return out


def tail_buffers(d, s) -> list[tuple[str, str]]:
    """Buffers after the scalars: the sink vector (directive.sinks, split_kv = 1). Last, so the
    other arguments keep their kernarg offsets: placed among the buffers it shifted the scalars'
    s_load grouping and LLVM's schedule of gfx1201 bf16 hd128 grew 173 -> 243 VGPRs (measured)."""
    return [("sinks", "f32")] if d.sinks and s.split_kv == 1 else []


def sinks_arg() -> KArg:
    """The per-head f32 sink logits (directive.sinks), read by the kernel that finishes a row."""
    return KArg("sinks", "in", "f32", shape=lambda p: (p["heads"],))


def _shape(d, which: str):
    """Shape function and the names of the stride scalars of its dims 0..n-2."""
    p0 = "q" if which in ("Q", "O") else "k"
    heads = "heads" if p0 == "q" else "kv_heads"
    x = which.lower()
    if d.varlen:
        return (lambda p: (p[f"total_{p0}"], p[heads], d.head_dim)), (f"{x}_ss", f"{x}_sh")
    seq = f"seq_{p0}"
    if d.layout == "bhsd":
        return (lambda p: (p["batch"], p[heads], p[seq], d.head_dim)), (f"{x}_sb", f"{x}_sh", f"{x}_ss")
    return (lambda p: (p["batch"], p[seq], p[heads], d.head_dim)), (f"{x}_sb", f"{x}_ss", f"{x}_sh")


def rows(p) -> int:
    """Query rows of the packed partial buffers: total_q (varlen) or batch * seq_q."""
    return p["total_q"] if "total_q" in p else p["batch"] * p["seq_q"]


def attention_signature(d, s, name: str) -> Signature:
    args = []
    strided = set()
    for n, dt in buffer_names(d, s):
        if n in ("Q", "K", "V", "O"):
            shape, strides = _shape(d, n)
            strided |= set(strides)
            args.append(KArg(n, "out" if n == "O" else "in", dt, shape=shape, strides=strides))
        elif n == "LSE":
            if d.varlen:
                args.append(KArg(n, "out", "f32", shape=lambda p: (p["heads"], p["total_q"]), strides=("lse_sh",)))
                strided.add("lse_sh")
            else:
                args.append(KArg(n, "out", "f32", shape=lambda p: (p["batch"], p["heads"], p["seq_q"]),
                                 strides=("lse_sb", "lse_sh")))
                strided |= {"lse_sb", "lse_sh"}
        elif n.startswith("cu_"):
            args.append(KArg(n, "in", "i32", shape=lambda p: (p["batch"] + 1,)))
        elif n == "O_part":
            args.append(KArg(n, "out", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p), d.head_dim)))
        elif n == "LSE_part":
            args.append(KArg(n, "out", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p))))
    values = {
        "heads": lambda p: p["heads"],
        "kv_group": lambda p: p["heads"] // p["kv_heads"],
        "seq_q": lambda p: p["seq_q"],
        "seq_k": lambda p: p["seq_k"],
        "rows": rows,
        "scale": lambda p: p.get("scale") if p.get("scale") is not None else 1.0 / math.sqrt(d.head_dim),
        "window_left": lambda p: p.get("window_left", -1),
        "window_right": lambda p: p.get("window_right", -1),
        "softcap": lambda p: float(p["softcap"]),
    }
    for n in scalar_names(d):
        if n in strided:
            args.append(KArg(n, "scalar", "i32"))
        else:
            args.append(KArg(n, "scalar", "f32" if n in F32_SCALARS else "i32", value=values.get(n, lambda p: 0)))
    args += [sinks_arg() for _ in tail_buffers(d, s)]
    bm, split = s.block_m, s.split_kv
    return Signature(name, tuple(args),
                     grid=lambda p: (-(-p["seq_q"] // bm) * split, p["heads"], p["batch"]),
                     block=(s.threads, 1, 1))
