"""The attention sweeps' gate and GPU timing for varlen problems (packed sequences addressed
through cu_seqlens): ops/attention/check.check_attention runs dense problems only, and a
timer's random bytes are no valid offsets.

The gate packs the gate problem's batch as sequences of unequal lengths (Sq - 3b, Sk - 5b for
sequence b, at least 1) -- the varlen object with per-sequence masks -- and compares with the
float64 reference under check_attention's tolerances. GPU timing gives every sequence the
problem's full lengths (Sq, Sk): what the model estimate assumes (problem_file.AttentionRow.sizes).
"""
from __future__ import annotations

import numpy as np

from wmma_gen import hostdata
from wmma_gen.attention_common.check import UNIT, AttentionCheck, max_error


def offsets(lengths) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def check_varlen(gp: dict, d, *, window, arch: str, device, seed: int, schedule) -> AttentionCheck:
    """Forward (op attention) or forward + backward (op attention_bwd, with `schedule` the
    backward's) on packed sequences vs the float64 reference."""
    from wmma_gen.device.select import get_device
    from wmma_gen.attention_common.reference import attention_backward, attention_forward
    from wmma_gen.ops import registry      # the backward's public API, looked up (no op folder imported)
    from wmma_gen.ops.attention.api import attention
    bwd = registry.get("attention_bwd").api
    backward = d.op == "attention_bwd"
    b = gp["batch"]
    cu_q = offsets([max(1, gp["seq_q"] - 3 * i) for i in range(b)])
    cu_k = offsets([max(1, gp["seq_k"] - 5 * i) for i in range(b)])
    rng = np.random.default_rng(seed)

    def draw(n: int, heads: int) -> np.ndarray:
        x = rng.standard_normal((n, heads, d.head_dim))
        return x.astype(np.float16) if d.dtype == "f16" else hostdata.rounded(x, "bf16").astype(np.float32)

    q, k, v = draw(int(cu_q[-1]), gp["heads"]), draw(int(cu_k[-1]), gp["kv_heads"]), draw(int(cu_k[-1]), gp["kv_heads"])
    from wmma_gen.attention_common.spec_parts import GATE_SOFTCAP
    cap = GATE_SOFTCAP if d.softcap else None
    kw = dict(causal=d.causal, window=window, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, softcap=cap)
    dt = None if d.dtype == "f16" else d.dtype
    o, lse = attention(q, k, v, return_lse=True, dtype=dt, arch=arch, device=device,
                       schedule=None if backward else schedule, **kw)
    f64 = [np.asarray(x, np.float64) for x in (q, k, v)]
    ro, rl = attention_forward(*f64, **kw)
    u = UNIT[d.dtype]
    otol = 3 * u * max(np.abs(f64[2]).max(initial=0.0), 1.0)
    rows = [("o", *max_error(o, ro, otol), otol)]
    fin = np.isfinite(rl)
    same_dead = bool(np.array_equal(np.isneginf(lse), ~fin))
    ltol = 1e-5 * (1 + np.abs(rl[fin]).max(initial=0.0) + (cap or 0.0))
    rows.append(("lse", *max_error(lse[fin], rl[fin], ltol), ltol))
    if backward:
        do = draw(int(cu_q[-1]), gp["heads"])
        grads = bwd(q, k, v, o, do, lse, dtype=dt, arch=arch, device=device, schedule=schedule, **kw)
        refs = attention_backward(*f64, np.asarray(o, np.float64), np.asarray(do, np.float64), rl, **kw)
        for name, g, r in zip(("dq", "dk", "dv"), grads, refs):
            tol = 8 * u * np.abs(r).max(initial=0.0) + 1e-3
            rows.append((name, *max_error(g, r, tol), tol))
    worst = max(rows, key=lambda r: r[2])
    src = getattr(get_device(device), "source", "emulator")
    return AttentionCheck(same_dead and all(r[2] <= 1.0 for r in rows), worst[1], worst[3], worst[0], src)


def time_varlen(device, compiled, signature, problem: dict, warmup: int = 3, repeats: int = 10) -> float:
    """wmma_gen/tuner/timing.time_signature with valid offsets: batch sequences of Sq and Sk each."""
    from wmma_gen.tuner.timing import time_signature
    names = {a.name for a in signature.buffers}
    fixed = {n: offsets([problem[k]] * problem["batch"])
             for n, k in (("cu_seqlens_q", "seq_q"), ("cu_seqlens_k", "seq_k")) if n in names}
    return time_signature(device, compiled, signature, problem, warmup, repeats, arrays=fixed)
