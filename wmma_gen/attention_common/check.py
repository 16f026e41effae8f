"""Correctness gate of the attention ops: run the kernels on seeded random inputs, compare
with the float64 reference (reference.py).

Inputs: standard normal, rounded to the dtype. Tolerances (absolute, u = unit roundoff of
the input dtype: f16 2^-11, bf16 2^-8):
  forward O      3u * max|V|       P is rounded to the dtype before the second WMMA and O once
                                   at the end; with softmax weights summing to 1 each adds
                                   <= u*max|V|; f32 accumulation terms are ~D*2^-24, negligible
  forward LSE    1e-5 * (1 + max|LSE| + softcap)   f32 scores of exactly representable inputs
                                   (the cap multiplies tanh's few-ulp f32 error by softcap)
  dq, dk, dv     8u * max|ref| + 1e-3    P and dS are rounded to the dtype before their WMMAs
                                   and each gradient once at the end; measured ~5e-4 here
Rows that see no key must give O = 0 and LSE = -inf exactly (checked through the reference).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .. import hostdata
from .reference import attention_backward, attention_forward, sink_gradient

UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}


@dataclass(frozen=True)
class AttentionCheck:
    passed: bool
    max_abs: float
    tol: float
    worst: str          # which output had the largest error relative to its tolerance
    source: str         # where the kernels ran: "emulator" | "hip"

    def to_dict(self) -> dict:
        return asdict(self)


def random_qkv(problem: dict, dtype: str, layout: str, seed: int):
    """q, k, v stored in dtype (float16, or bf16 as float32 values already rounded)."""
    rng = np.random.default_rng(seed)
    b, h, hk, sq, sk, dim = (problem[x] for x in ("batch", "heads", "kv_heads", "seq_q", "seq_k", "head_dim"))
    shapes = ([(b, sq, h, dim), (b, sk, hk, dim)] if layout == "bshd" else [(b, h, sq, dim), (b, hk, sk, dim)])
    out = []
    for shape in (shapes[0], shapes[1], shapes[1]):
        x = rng.standard_normal(shape)
        out.append(x.astype(np.float16) if dtype == "f16" else hostdata.rounded(x, "bf16").astype(np.float32))
    return out


def _packed_lse(lse):
    """(B, H, Sq) -> (H, B * Sq)."""
    return lse.transpose(1, 0, 2).reshape(lse.shape[1], -1)


def _packed_abs_rowsum(do, layout: str):
    """sum_d |dO| as (B * Sq, H)."""
    a = np.abs(do).sum(-1)
    a = a if layout == "bshd" else a.transpose(0, 2, 1)
    return a.reshape(-1, a.shape[-1])


def max_error(out, ref, tol: float) -> tuple[float, float]:
    """(max |out - ref|, that over tol): one row of an attention check."""
    e = float(np.abs(np.asarray(out, np.float64) - ref).max(initial=0.0))
    return e, e / tol if tol else (0.0 if e == 0 else np.inf)


def check_attention(problem: dict, *, dtype="f16", layout="bshd", causal=False, window=None, scale=None,
                    backward=False, arch="gfx1100", device=None, seed=0, schedule=None,
                    kernels=None, softcap=None, s_aux=None) -> AttentionCheck:
    """Forward (and, with backward=True, the backward) on a dense problem vs the reference.
    `schedule`: the forward's, or with backward=True the backward's (the forward then uses its
    default). `kernels`: a CompiledSet (ops/compile_op.py) -- the forward's, or with
    backward=True the backward's -- launched as given, so a gate certifies the object it holds.
    s_aux: (heads,) sink logits (directive.sinks) or None; with backward=True d s_aux is checked
    too, within 3u max|V| sum exp(s - LSE) sum|dO| (D_i comes from the kernel's stored O)."""
    from ..ops import registry      # the two ops' public APIs, looked up (no op folder imported)
    attention, bwd = registry.get("attention").api, registry.get("attention_bwd").api
    q, k, v = random_qkv(problem, dtype, layout, seed)
    kw = dict(causal=causal, window=window, scale=scale, layout=layout, softcap=softcap)
    dt = None if dtype == "f16" else dtype
    sk = {} if s_aux is None else {"s_aux": np.asarray(s_aux, np.float32)}
    if kernels is not None and not backward:
        from .run_set import forward
        o, lse = forward(kernels, problem, q, k, v, dtype=dt, device=device, **kw, **sk)
    else:
        o, lse = attention(q, k, v, return_lse=True, dtype=dt, arch=arch, device=device,
                           schedule=None if backward else schedule, **kw, **sk)
    f64 = [np.asarray(x, np.float64) for x in (q, k, v)]
    ro, rl = attention_forward(*f64, **kw, **sk)
    u = UNIT[dtype]
    otol = 3 * u * max(np.abs(f64[2]).max(initial=0.0), 1.0)       # Sk = 0 leaves v empty
    rows = [("o", *max_error(o, ro, otol), otol)]
    fin = np.isfinite(rl)
    same_dead = lse is None or bool(np.array_equal(np.isneginf(lse), ~fin))   # None: a kernel without LSE
    ltol = 1e-5 * (1 + np.abs(rl[fin]).max(initial=0.0) + (softcap or 0.0))
    if lse is not None:
        rows.append(("lse", *max_error(lse[fin], rl[fin], ltol), ltol))
    if backward:
        do = np.random.default_rng(seed + 1).standard_normal(o.shape).astype(np.float16 if dtype == "f16" else np.float32)
        if dtype == "bf16":
            do = hostdata.rounded(do, "bf16").astype(np.float32)
        if kernels is not None:
            from .run_set import backward as run_backward
            grads = run_backward(kernels, problem, q, k, v, o, do, lse, dtype=dt, device=device, **kw)
        else:
            grads = bwd(q, k, v, o, do, lse, dtype=dt, arch=arch, device=device, schedule=schedule, **kw, **sk)
        refs = attention_backward(*f64, np.asarray(o, np.float64), np.asarray(do, np.float64), rl, **kw)
        for name, g, r in zip(("dq", "dk", "dv"), grads, refs):
            tol = 8 * u * np.abs(r).max(initial=0.0) + 1e-3
            rows.append((name, *max_error(g, r, tol), tol))
        if s_aux is not None and len(grads) == 4:
            dof = np.asarray(do, np.float64)
            rds = sink_gradient(ro, dof, rl, sk["s_aux"], layout=layout, k=f64[1])
            w = np.exp(sk["s_aux"].astype(np.float64)[:, None] - _packed_lse(rl)) * _packed_abs_rowsum(dof, layout).T
            tol = float(otol * w.sum(axis=1).max(initial=0.0)) + 1e-5 * np.abs(rds).max(initial=0.0)
            rows.append(("ds_aux", *max_error(grads[3], rds, tol), tol))
    worst = max(rows, key=lambda r: r[2])
    from ..device.select import get_device
    # a HipDevice knows whether it is a GPU or the emulator-backed stand-in (device/hip.py)
    src = getattr(get_device(device), "source", "emulator")
    return AttentionCheck(same_dead and all(r[2] <= 1.0 for r in rows), worst[1], worst[3], worst[0], src)
