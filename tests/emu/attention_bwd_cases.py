"""Shared helpers of the attention-backward emulator tests: random problems, the float64
reference (attention_common/reference.py) and the error measure.

Inputs are drawn in float64, rounded to the kernel dtype once, and the reference runs on the
rounded values (so it sees exactly what the device sees); o comes from the reference forward
(rounded to the dtype as a forward kernel would store it), lse is float32 as the forward
returns it.

Tolerance: err = max|x - ref| / max|ref| per output. The kernels round P and dS to the input
dtype before their WMMAs (unit roundoff u = 2^-11 for f16, 2^-8 for bf16) and round the
outputs once more; accumulation is f32 (u = 2^-24, negligible at these sizes). Observed
errors are ~1u (f16 4e-4..6e-4, bf16 3e-3..4e-3); the bounds allow 8u (f16) and 6u (bf16).
"""
from __future__ import annotations

import numpy as np

from wmma_gen import hostdata
from wmma_gen.attention_common.reference import attention_backward, attention_forward
from wmma_gen.ops.attention_bwd import run_backward

TOL = {"f16": 8 * 2.0 ** -11, "bf16": 6 * 2.0 ** -8}


def make_problem(rng, *, batch=1, heads=1, kv_heads=1, sq=32, sk=32, d=64, dtype="f16", layout="bshd",
                 causal=False, window=None, seqlens=None, scale=None):
    """Rounded float64 inputs plus the keywords of the reference and of run_backward."""
    def draw(rows, h):
        if seqlens is not None:
            shape = (rows, h, d)
        else:
            shape = (batch, rows, h, d) if layout == "bshd" else (batch, h, rows, d)
        return hostdata.decode(hostdata.encode(rng.standard_normal(shape), dtype), dtype)
    kw = dict(scale=scale, causal=causal, window=window, layout=layout)
    if seqlens is not None:
        lq, lk = zip(*seqlens, strict=True)
        kw["cu_seqlens_q"] = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
        kw["cu_seqlens_k"] = np.concatenate([[0], np.cumsum(lk)]).astype(np.int32)
        sq, sk = sum(lq), sum(lk)
    q, k, v, do = draw(sq, heads), draw(sk, kv_heads), draw(sk, kv_heads), draw(sq, heads)
    o, lse = attention_forward(q, k, v, **kw)
    o = hostdata.decode(hostdata.encode(o, dtype), dtype)
    return dict(q=q, k=k, v=v, o=o, do=do, lse=lse.astype(np.float32)), kw


def run_case(arch, arrays, kw, dtype="f16", out_dtype="same", schedule=None, device=None, floor=1e-30):
    """(errors {dq, dk, dv}, outputs as float64) of the kernels against the reference."""
    ref = attention_backward(*(arrays[n] for n in ("q", "k", "v", "o", "do")),
                             arrays["lse"].astype(np.float64), **kw)
    feed = [arrays[n] for n in ("q", "k", "v", "o", "do")]
    if dtype == "f16":
        feed = [x.astype(np.float16) for x in feed]
    outs = run_backward(*feed, arrays["lse"], dtype=dtype, out_dtype=out_dtype, arch=arch,
                        schedule=schedule, device=device, **kw)
    dec = [x.astype(np.float64) if out_dtype == "f32" else hostdata.decode(x, dtype) for x in outs]
    errs = {}
    for name, a, r in zip(("dq", "dk", "dv"), dec, ref, strict=True):
        assert a.shape == r.shape, (name, a.shape, r.shape)
        errs[name] = float(np.abs(a - r).max() / max(np.abs(r).max(), floor)) if a.size else 0.0
    return errs, dec


def check(arch, rng, dtype="f16", floor=1e-30, schedule=None, out_dtype="same", **problem):
    """Run one problem; `floor` bounds the error denominator from below (for problems whose
    exact dQ/dK vanish: a row seeing a single key has dS = P (dP - Di) = 0)."""
    arrays, kw = make_problem(rng, dtype=dtype, **problem)
    errs, _ = run_case(arch, arrays, kw, dtype=dtype, out_dtype=out_dtype, schedule=schedule, floor=floor)
    bad = {k: e for k, e in errs.items() if not e <= TOL[dtype]}
    assert not bad, f"{arch} {dtype} {problem}: errors {errs} exceed {TOL[dtype]:.2e}"
    return errs
