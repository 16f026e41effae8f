"""The split-KV combine kernel's arguments (combine.py builds the kernel): declared apart from
the builder so a cached kernel's launch reads them without importing the MLIR bindings."""
from __future__ import annotations

from ...kernels.signature import KArg, Signature
from .signature import _shape, rows, sinks_arg

THREADS = 256
COMBINE_SCALARS = ("heads", "rows", "seq_q", "o_sb", "o_sh", "o_ss", "lse_sb", "lse_sh")


def combine_signature(d, s, name: str) -> Signature:
    o_shape, o_strides = _shape(d, "O")
    args = [KArg("O_part", "in", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p), d.head_dim)),
            KArg("LSE_part", "in", "f32", shape=lambda p: (s.split_kv, p["heads"], rows(p))),
            KArg("O", "out", d.dtype, shape=o_shape, strides=o_strides)]
    strided = set(o_strides)
    if d.return_lse:
        if d.varlen:
            args.append(KArg("LSE", "out", "f32", shape=lambda p: (p["heads"], p["total_q"]), strides=("lse_sh",)))
            strided.add("lse_sh")
        else:
            args.append(KArg("LSE", "out", "f32", shape=lambda p: (p["batch"], p["heads"], p["seq_q"]),
                             strides=("lse_sb", "lse_sh")))
            strided |= {"lse_sb", "lse_sh"}
    if d.sinks:
        args.append(sinks_arg())
    values = {"heads": lambda p: p["heads"], "rows": rows,
              "seq_q": lambda p: p["total_q"] if d.varlen else p["seq_q"]}
    for n in COMBINE_SCALARS:
        args.append(KArg(n, "scalar", "i32") if n in strided else
                    KArg(n, "scalar", "i32", value=values.get(n, lambda p: 0)))
    per_wg = THREADS * 8 // d.head_dim
    return Signature(name, tuple(args), grid=lambda p: (-(-rows(p) // per_wg), p["heads"], 1),
                     block=(THREADS, 1, 1))
