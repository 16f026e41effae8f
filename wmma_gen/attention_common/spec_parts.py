"""The OpSpec fields both dense attention ops share (ops/attention/spec.py, ops/attention_bwd/spec.py):
problem axes, the sizes mapping, the specialization key (None: every size is a kernel argument),
the correctness check, FLOPs, the lookup bucket, the gate's problems and `wmma-gen selftest`'s rows."""
from __future__ import annotations

from dataclasses import asdict

from ..ops.contract import I32_MAX, Axis
from .problem import AttentionProblem, as_problem

GATE_SOFTCAP = 2.0   # the gate's cap for softcap directives: standard normal q, k give |scale q.k| up to
#                      ~4, so tanh is well into its curved range (a cap of 10 would be nearly linear)

def gate_sinks(heads: int):
    """The gate's sink logits for sinks directives: spread around a typical row's LSE (standard
    normal q, k: ~log Sk), so the sink takes a large share of some rows and little of others."""
    import numpy as np
    return np.linspace(-1.0, 4.0, heads).astype(np.float32)


# Axis(name, type, flag, default, sweep, help, bounds, compile_flag): sizes are kernel arguments only
AXES = (Axis("batch", int, "--batch", 1, (1,), "batch", (1, I32_MAX), False),
        Axis("heads", int, "--heads", 2, (16,), "query heads", (1, I32_MAX), False),
        Axis("kv_heads", int, "--kv-heads", 1, (16,), "key/value heads (divides heads)", (1, I32_MAX), False),
        Axis("seq_q", int, "--seq-q", 40, (1024, 4096), "query length", (0, I32_MAX), False),
        Axis("seq_k", int, "--seq-k", 72, (1024, 4096), "key length", (0, I32_MAX), False))


def sizes(d, p) -> dict:
    """The plain mapping kernels, models and the check read (head_dim from the directive; the
    gate's cap for a softcap directive, so timing and models can fill its kernel argument)."""
    out = asdict(as_problem(p))
    if not d.window:
        out.pop("window_left"), out.pop("window_right")
    if d.softcap:
        out["softcap"] = GATE_SOFTCAP
    return {**out, "head_dim": d.head_dim}


def key_of(d, s, p):
    return None


def window_of(d, p):
    p = as_problem(p)
    return p.window if d.window else None


def check(cs, d, p, device=None, seed: int = 0, *, backward: bool = False):
    """The set's kernels on p's random inputs vs the float64 reference (check.check_attention)."""
    from .check import check_attention
    return check_attention(sizes(d, p), dtype=d.dtype, layout=d.layout, causal=d.causal, window=window_of(d, p),
                           backward=backward, arch=cs.arch, device=device, seed=seed, schedule=cs.schedule,
                           kernels=cs, softcap=GATE_SOFTCAP if d.softcap else None,
                           s_aux=gate_sinks(as_problem(p).heads) if getattr(d, "sinks", False) else None)


def flops_of(d, p, backward: bool) -> int:
    from .reference import attention_flops
    p = as_problem(p)
    return attention_flops(p.batch, p.heads, p.seq_q, p.seq_k, d.head_dim, d.causal, window_of(d, p),
                           backward=backward)


def bucket(p) -> dict:
    """What lookup.py matches: seq = Sk; seq_q when Sq != Sk."""
    p = as_problem(p)
    return {"seq": p.seq_k} if p.seq_q == p.seq_k else {"seq": p.seq_k, "seq_q": p.seq_q}


def gate_problems(d, s, key=None) -> list[AttentionProblem]:
    """Edges inside tiles on both axes, Sq != Sk both ways, GQA: one code object serves all."""
    bm, bn = s.block_m, getattr(s, "block_n", 16)
    return [AttentionProblem(batch=2, heads=4, kv_heads=2, seq_q=bm + 7, seq_k=2 * bn + 5),
            AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=2 * bn + 3, seq_k=bm - 9 if bm > 9 else 5)]


SELFTEST_DTYPES = ("f16", "bf16")
SELFTEST_PROBLEM = AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=20, seq_k=36)   # GQA, Sq != Sk
SELFTEST_HEAD_DIM = 32


def selftest_of(op: str):
    """`wmma-gen selftest`'s rows for `op` (attention or attention_bwd): bshd, not causal, on a
    tiny GQA problem whose Sq and Sk end inside tiles."""
    def rows(arch: str) -> list:
        from .directive import AttentionDirective
        return [(AttentionDirective(dt, SELFTEST_HEAD_DIM, op=op), SELFTEST_PROBLEM) for dt in SELFTEST_DTYPES]
    return rows
