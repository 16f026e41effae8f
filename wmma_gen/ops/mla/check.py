"""Correctness gate of MLA decode: seeded random paged latent caches (shuffled block tables),
the kernel vs the float64 reference (reference.py). Tolerances (absolute; u = unit roundoff
of the query dtype, f16 2^-11, bf16 2^-8), as paged decode's: O within 3u * max|V| (P rounded
to the dtype before the second WMMA, O once at the end; fp8: V = kv_scale * the decoded
bytes); LSE within 1e-5 * (1 + max|LSE|). Rows that see no key must give O = 0 and LSE = -inf.
Problem keys: batch, heads, seq_q, head_dim, head_dim_v, and optionally seq_lens (a list),
block_size, kv_dtype, kv_scale.
"""
from __future__ import annotations

import numpy as np

from ... import hostdata
from ...attention_common.check import UNIT, AttentionCheck
from ...attention_common.paged_check import FP8_STORAGE, random_pages, random_table, verdict
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
    from .api import mla_decode
    kvd = kv_dtype or problem.get("kv_dtype")
    q, stored, c64, table, lens = random_latent({**problem, "kv_dtype": kvd}, dtype, seed)
    ks = (kv_scale if kv_scale is not None else 0.25) if kvd in FP8_STORAGE else None
    dv = problem.get("head_dim_v", 512)
    o, lse = mla_decode(q, stored, table, lens, head_dim_v=dv, softmax_scale=scale, causal=causal, kv_dtype=kvd,
                        kv_scale=ks, dtype=dtype, arch=arch, device=device, schedule=schedule, _kernels=kernels)
    if dtype == "bf16":
        o = hostdata.decode(o, "bf16") if o.dtype == np.uint16 else o
    ro, rl = mla_decode_reference(q, c64, table, lens, head_dim_v=dv, scale=scale, causal=causal,
                                  kv_scale=ks or 1.0)
    otol = 3 * UNIT[dtype] * max(np.abs(c64[..., :dv]).max(initial=0.0) * (ks or 1.0), 1.0)
    ltol = 1e-5 * (1 + np.abs(rl[np.isfinite(rl)]).max(initial=0.0))
    return verdict(o, ro, lse, rl, otol, ltol, device)
