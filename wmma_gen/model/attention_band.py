"""What the attention models (forward, backward, paged decode) share: the keys [lo, hi) a block
of queries [i0, i1) sees under the mask (causal bottom-right: hi = i1 - 1 + Sk - Sq + 1; a
window (left, right) narrows both ends; -1 = unbounded) and the element size of f16 / bf16."""
from __future__ import annotations

ELEM_BYTES = 2   # f16 / bf16


def key_span(i0: int, i1: int, sq: int, sk: int, causal: bool, left: int, right: int) -> tuple[int, int]:
    """The keys [lo, hi) query rows [i0, i1) of a sequence (Sq queries, Sk keys) see."""
    off = sk - sq
    lo = 0 if left < 0 else max(0, i0 + off - left)
    r = 0 if causal else right
    hi = sk if r < 0 else min(sk, i1 - 1 + off + r + 1)
    if causal and right >= 0:
        hi = min(hi, i1 - 1 + off + min(right, 0) + 1)
    return lo, hi
