"""What the paged-cache gates share (ops/paged_attention/check.py, ops/mla/check.py): seeded random
block tables (shuffled, non-contiguous pages), cache pages stored as the kernel reads them, and the
O / LSE verdict with the dense check's tolerance rules (check.py: rows that see no key give O = 0
and LSE = -inf exactly)."""
from __future__ import annotations

import numpy as np

from .. import hostdata
from .check import AttentionCheck

FP8_STORAGE = {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}   # kv_dtype -> hostdata's fp8 encoding


def random_table(rng, problem: dict, block_size: int):
    """(block_table (B, width) int32, seq_lens (B,) int32, pages in the pool): seq_lens from
    problem["seq_lens"], else random in 0..3*block_size+5; each sequence's pages drawn from a
    shuffled pool with two spare pages, so no table is contiguous."""
    B = problem["batch"]
    lens = np.asarray(problem.get("seq_lens", rng.integers(0, 3 * block_size + 6, B)), np.int32)
    need = [-(-int(L) // block_size) for L in lens]
    width, nb = max(max(need), 1), sum(need) + 2
    table = np.zeros((B, width), np.int32)
    ids = rng.permutation(nb)
    at = 0
    for b, n in enumerate(need):
        table[b, :n] = ids[at:at + n]
        at += n
    return table, lens, nb


def random_pages(rng, shape: tuple, dtype: str, kv_dtype) -> tuple[np.ndarray, np.ndarray]:
    """(stored, values): standard normal pages rounded to dtype, or fp8 bytes of 4x them when
    kv_dtype is an fp8 format (values then the decoded bytes, unscaled)."""
    x = rng.standard_normal(shape)
    store = FP8_STORAGE.get(kv_dtype)
    stored = hostdata.encode(x * 4, store) if store else hostdata.rounded(x, dtype)
    return stored, hostdata.decode(stored, store) if store else stored


def verdict(o, ro, lse, rl, otol: float, ltol: float, device) -> AttentionCheck:
    """O within otol and the finite LSE within ltol of the reference, the same rows dead (-inf)."""
    fin = np.isfinite(rl)
    oerr = float(np.abs(np.asarray(o, np.float64) - ro).max(initial=0.0))
    lerr = float(np.abs(lse[fin] - rl[fin]).max(initial=0.0))
    same_dead = bool(np.array_equal(np.isneginf(lse), ~fin))
    worst = ("o", oerr, otol) if oerr / otol >= lerr / ltol else ("lse", lerr, ltol)
    from ..device.select import get_device
    src = getattr(get_device(device), "source", "emulator")   # a HipDevice knows GPU from stand-in
    return AttentionCheck(bool(same_dead and oerr <= otol and lerr <= ltol), worst[1], float(worst[2]), worst[0], src)
