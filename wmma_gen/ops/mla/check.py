"""Correctness gate of MLA decode: seeded random paged latent caches (shuffled block tables),
the kernel vs the float64 reference (reference.py). Tolerances (absolute; u = unit roundoff
of the query dtype, f16 2^-11, bf16 2^-8), as paged decode's: O within 3u * max|V| (P rounded
to the dtype before the second WMMA, O once at the end; fp8: V = kv_scale * the decoded
bytes); LSE within 1e-5 * (1 + max|LSE|). Rows that see no key must give O = 0 and LSE = -inf.
fp8_wmma schedules (gfx12: Q and P quantised to E4M3 in the kernel, fp8_native.py) are checked
against the reference of Q as the kernel quantises it (numerics.e4m3_rows) with O within
(2^-4 + n 2^-18 + 3u) * max|V| for n = the longest sequence (P's E4M3 rounding: each weight
P * 2^8 keeps 3 mantissa bits, relative error <= 2^-4, absolute <= 2^-18 below E4M3's normals,
while l sums the unquantised P), LSE as above (a tight check of Q's quantisation).
Problem keys: batch, heads, seq_q, head_dim, head_dim_v, and optionally seq_lens (a list),
block_size, kv_dtype, kv_scale.
"""
from __future__ import annotations

import numpy as np

from ... import hostdata
from ...attention_common.check import UNIT, AttentionCheck
from ...attention_common.paged_check import FP8_STORAGE, random_pages, random_table, verdict
from ...numerics import e4m3_rows
from .reference import mla_decode_reference


def random_latent(problem: dict, dtype: str, seed: int):
    """(q stored, cache stored, cache values (decoded, unscaled), block_table, seq_lens)."""
    rng = np.random.default_rng(seed)
    B, H, Sq, D = (problem[x] for x in ("batch", "heads", "seq_q", "head_dim"))
    table, lens, nb = random_table(rng, problem, problem.get("block_size", 64))
    q = hostdata.rounded(rng.standard_normal((B, Sq, H, D)), dtype)
    stored, values = random_pages(rng, (nb, problem.get("block_size", 64), 1, D), dtype, problem.get("kv_dtype"))
    return q, stored, values, table, lens


def check_mla(problem: dict, *, dtype="f16", causal=False, scale=None, kv_dtype=None, kv_scale=None, arch="gfx1100",
              device=None, seed=0, schedule=None, kernels=None) -> AttentionCheck:
    """`kernels` ({"mla": (src, ck), "combine": (src, ck)}) makes the check run those objects."""
    from ...knobs import as_schedule
    from .api import mla_decode
    from .inputs import mla_inputs
    from .lookup import choose_schedule
    from .schedule import MLASchedule
    kvd = kv_dtype or problem.get("kv_dtype")
    q, stored, c64, table, lens = random_latent({**problem, "kv_dtype": kvd}, dtype, seed)
    ks = (kv_scale if kv_scale is not None else 0.25) if kvd in FP8_STORAGE else None
    dv = problem.get("head_dim_v", 512)
    call = dict(head_dim_v=dv, softmax_scale=scale, causal=causal, kv_dtype=kvd, kv_scale=ks, dtype=dtype)
    s = as_schedule(MLASchedule, schedule)
    if s is None:                       # what the call will run: its numerics decide the tolerance
        inp = mla_inputs(q, stored, table, lens, **call)
        s = choose_schedule(inp.directive, inp.problem, arch)
    o, lse = mla_decode(q, stored, table, lens, **call, arch=arch, device=device, schedule=s, _kernels=kernels)
    if dtype == "bf16":
        o = hostdata.decode(o, "bf16") if o.dtype == np.uint16 else o
    ro, rl = mla_decode_reference(e4m3_rows(q) if s.fp8_wmma else q, c64, table, lens, head_dim_v=dv, scale=scale,
                                  causal=causal, kv_scale=ks or 1.0)
    p_rounding = 2.0 ** -4 + int(max(lens, default=0)) * 2.0 ** -18 if s.fp8_wmma else 0.0
    otol = (p_rounding + 3 * UNIT[dtype]) * max(np.abs(c64[..., :dv]).max(initial=0.0) * (ks or 1.0), 1.0)
    ltol = 1e-5 * (1 + np.abs(rl[np.isfinite(rl)]).max(initial=0.0))
    return verdict(o, ro, lse, rl, otol, ltol, device)
