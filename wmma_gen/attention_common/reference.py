"""float64 numpy reference for flash attention: the spec the kernels are verified against.

Per sequence b and query head h (kv head g = h // (H // Hkv), GQA/MQA):

    S   = scale * Q K^T                          (Sq, Sk); scale defaults to 1/sqrt(D)
    S   = c * tanh(S / c)                        (softcap c > 0 only; flash-attn's softcap)
    S   = -inf where visible_mask(...) is False
    LSE = log rowsum(exp(S))                     (-inf for a row that sees no key)
    P   = exp(S - LSE)                           (0 in a row that sees no key)
    O   = P V                                    (0 in a row that sees no key)

Backward (FA-2 form, from O, dO and the forward LSE; the exact gradient of the above):

    P  = exp(S - LSE)      dV = P^T dO           dP = dO V^T
    Dr = rowsum(dO * O)    dS = P * (dP - Dr)    dQ = scale dS K      dK = scale dS^T Q

with softcap, dS is first multiplied by d(c tanh(x / c))/dx = 1 - (S / c)**2 (S the capped logits),

with dK, dV summed over the query heads that share a kv head. A row that sees no key has
P = 0, so it contributes nothing.

Attention sinks (s_aux, one logit s_h per query head, GPT-OSS): s_h joins every row's softmax
as a logit with no value, so LSE = log(exp(s_h) + rowsum(exp(S))) (s_h for a row that sees no
key), P = exp(S - LSE) and O = P V as above; the backward formulas hold unchanged with that LSE,
and d s_h = -sum_i exp(s_h - LSE_i) Dr_i (sink_gradient).

Masks (directive.py states the same): off = Sk - Sq aligns queries bottom-right; causal keeps
j <= i + off; window (l, r) keeps i + off - l <= j <= i + off + r, -1 meaning unbounded.

Array layouts (`layout`):
  bshd   q (B, Sq, H, D), k/v (B, Sk, Hkv, D), o like q, lse (B, H, Sq)
  bhsd   q (B, H, Sq, D), k/v (B, Hkv, Sk, D), o like q, lse (B, H, Sq)
  varlen (cu_seqlens_q and cu_seqlens_k given; like flash-attn's varlen API):
         q (total_q, H, D), k/v (total_k, Hkv, D), o like q, lse (H, total_q); sequence b is
         rows cu_seqlens[b]:cu_seqlens[b+1] and is masked with its own Sq_b, Sk_b.
Internally everything is brought to the packed varlen form (a dense batch is B sequences of
equal length) and brought back at the end.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

def visible_mask(sq: int, sk: int, causal: bool, window_left: int = -1, window_right: int = -1) -> np.ndarray:
    """(sq, sk) bool: True where key j is visible to query i (see the module docstring)."""
    i = np.arange(sq)[:, None] + (sk - sq)      # the key index query i is aligned with
    j = np.arange(sk)[None, :]
    vis = np.ones((sq, sk), dtype=bool)
    if causal:
        vis &= j <= i
    if window_left >= 0:
        vis &= j >= i - window_left
    if window_right >= 0:
        vis &= j <= i + window_right
    return vis


def _visible_count(sq: int, sk: int, causal: bool, left: int, right: int) -> int:
    """visible_mask(sq, sk, ...).sum() in O(sq) memory and time (closed form per row)."""
    i = np.arange(sq, dtype=np.int64) + (sk - sq)
    hi = np.full(sq, sk - 1, dtype=np.int64)
    if causal:
        hi = np.minimum(hi, i)
    if right >= 0:
        hi = np.minimum(hi, i + right)
    lo = np.maximum(i - left, 0) if left >= 0 else np.zeros(sq, dtype=np.int64)
    return int(np.maximum(hi - lo + 1, 0).sum())


def attention_flops(batch: int, heads: int, seq_q: "int | Sequence[int]", seq_k: "int | Sequence[int]",
                    head_dim: int, causal: bool = False, window: "tuple[int, int] | None" = None,
                    backward: bool = False) -> int:
    """FLOPs of attention, counted over the visible (query, key) pairs only.

    Forward: 4 * D per visible pair (2 D for S = Q K^T, 2 D for O = P V; softmax not counted),
    summed over the batch and the query heads, so a dense non-causal problem is
    4 * B * H * Sq * Sk * D. Backward: 2.5x the forward (five matmuls -- S again, dP, dV, dQ,
    dK -- against the forward's two), i.e. 10 * D per visible pair.

    `seq_q`/`seq_k` are ints (every sequence has that length) or, for varlen, sequences of
    `batch` per-sequence lengths."""
    sqs = [int(seq_q)] * batch if np.isscalar(seq_q) else [int(s) for s in seq_q]
    sks = [int(seq_k)] * batch if np.isscalar(seq_k) else [int(s) for s in seq_k]
    if len(sqs) != batch or len(sks) != batch:
        raise ValueError(f"seq_q/seq_k lengths ({len(sqs)}, {len(sks)}) are not allowed: {batch} (batch) each")
    left, right = (-1, -1) if window is None else window
    pairs = sum(_visible_count(a, b, causal, left, right) for a, b in zip(sqs, sks))
    per_pair = 10 * head_dim if backward else 4 * head_dim
    return per_pair * heads * pairs


# --- layouts: everything to packed (total, heads, D) sequences and back ---------------------
def _to_packed(x: np.ndarray, layout: str) -> np.ndarray:
    """Dense (B, S, H, D) / (B, H, S, D) -> (B*S, H, D) float64."""
    x = np.asarray(x, dtype=np.float64)
    if layout == "bhsd":
        x = x.transpose(0, 2, 1, 3)
    elif layout != "bshd":
        raise ValueError(f"layout={layout!r} is not allowed: 'bshd' or 'bhsd'")
    return x.reshape(x.shape[0] * x.shape[1], x.shape[2], x.shape[3])


def _from_packed(x: np.ndarray, batch: int, layout: str) -> np.ndarray:
    x = x.reshape(batch, x.shape[0] // batch, x.shape[1], x.shape[2])    # (B, S, H, D)
    return x.transpose(0, 2, 1, 3) if layout == "bhsd" else x


class _Packed:
    """The problem in packed form: sequences, and the way back to the caller's layout."""

    def __init__(self, q, k, cu_seqlens_q, cu_seqlens_k, layout):
        self.dense = cu_seqlens_q is None and cu_seqlens_k is None
        if self.dense:
            self.batch, self.layout = q.shape[0], layout
            sq, sk = (q.shape[2], k.shape[2]) if layout == "bhsd" else (q.shape[1], k.shape[1])
            self.cu_q = np.arange(self.batch + 1) * sq
            self.cu_k = np.arange(self.batch + 1) * sk
            self.sq = sq
        elif cu_seqlens_q is None or cu_seqlens_k is None:
            raise ValueError("cu_seqlens_q and cu_seqlens_k are not allowed alone: pass both or neither")
        elif layout != "bshd":
            raise ValueError(f"layout={layout!r} is not allowed with cu_seqlens: 'bshd' (packed (total, H, D))")
        else:
            self.cu_q = np.asarray(cu_seqlens_q, dtype=np.int64)
            self.cu_k = np.asarray(cu_seqlens_k, dtype=np.int64)
            self.batch = len(self.cu_q) - 1

    def pack(self, x: np.ndarray) -> np.ndarray:
        return _to_packed(x, self.layout) if self.dense else np.asarray(x, dtype=np.float64)

    def unpack(self, x: np.ndarray) -> np.ndarray:
        return _from_packed(x, self.batch, self.layout) if self.dense else x

    def pack_lse(self, lse: np.ndarray) -> np.ndarray:
        """(B, H, Sq) -> (H, total_q); varlen lse already is (H, total_q)."""
        lse = np.asarray(lse, dtype=np.float64)
        return lse.transpose(1, 0, 2).reshape(lse.shape[1], self.batch * self.sq) if self.dense else lse

    def unpack_lse(self, lse: np.ndarray) -> np.ndarray:
        if not self.dense:
            return lse
        return lse.reshape(lse.shape[0], self.batch, self.sq).transpose(1, 0, 2)

    def sequences(self):
        """(query rows, key rows) slices of each sequence."""
        for b in range(self.batch):
            yield slice(self.cu_q[b], self.cu_q[b + 1]), slice(self.cu_k[b], self.cu_k[b + 1])


def _scale(scale: "float | None", head_dim: int) -> float:
    return 1.0 / np.sqrt(head_dim) if scale is None else float(scale)


def _softcap(softcap) -> float:
    if softcap is None or softcap == 0:
        return 0.0
    if not (np.isfinite(softcap) and softcap > 0):
        raise ValueError(f"softcap={softcap!r} is not allowed: None, 0 (off) or a finite positive float")
    return float(softcap)


def _scores(q, k, scale, mask, cap=0.0):
    """scale * q k^T (capped: cap * tanh(. / cap) when cap > 0) with invisible entries -inf;
    (sq, D) x (sk, D) -> (sq, sk)."""
    s = scale * (q @ k.T)
    return np.where(mask, cap * np.tanh(s / cap) if cap else s, -np.inf)


# --- forward -------------------------------------------------------------------------------
def attention_forward(q, k, v, *, scale=None, causal=False, window=None, cu_seqlens_q=None,
                      cu_seqlens_k=None, layout="bshd", softcap=None, s_aux=None) -> tuple[np.ndarray, np.ndarray]:
    """(o, lse) in float64; shapes per the module docstring. `window` is None or (left, right);
    softcap None/0 is off. s_aux (heads,) are attention sinks (GPT-OSS): logit s_h joins every
    row's denominator, l = exp(s_h - m) + sum_j exp(s_ij - m), m = max(s_h, max_j s_ij), so the
    LSE includes it; a row that sees no key has o = 0 and lse = s_h."""
    cap = _softcap(softcap)
    pk = _Packed(q, k, cu_seqlens_q, cu_seqlens_k, layout)
    Q, K, V = pk.pack(q), pk.pack(k), pk.pack(v)
    heads, kv_heads, D = Q.shape[1], K.shape[1], Q.shape[2]
    group = heads // kv_heads
    sc = _scale(scale, D)
    left, right = (-1, -1) if window is None else window
    O = np.zeros(Q.shape[:2] + (V.shape[2],))
    LSE = np.full((heads, Q.shape[0]), -np.inf)
    for rq, rk in pk.sequences():
        mask = visible_mask(rq.stop - rq.start, rk.stop - rk.start, causal, left, right)
        seen = mask.any(axis=1)                               # rows that see at least one key
        for h in range(heads):
            g = h // group
            s = _scores(Q[rq, h], K[rk, g], sc, mask, cap)
            if s_aux is None:
                m = np.where(seen, s.max(axis=1, initial=-np.inf), 0.0)   # 0 keeps empty rows finite
                e = np.where(mask, np.exp(s - m[:, None]), 0.0)
                l = np.where(seen, e.sum(axis=1), 1.0)
                LSE[h, rq] = np.where(seen, m + np.log(l), -np.inf)
            else:
                sink = float(s_aux[h])
                m = np.maximum(s.max(axis=1, initial=-np.inf), sink)
                e = np.where(mask, np.exp(s - m[:, None]), 0.0)
                l = e.sum(axis=1) + np.exp(sink - m)
                LSE[h, rq] = m + np.log(l)
            O[rq, h] = (e / l[:, None]) @ V[rk, g]
    return pk.unpack(O), pk.unpack_lse(LSE)


def sink_gradient(o, do, lse, s_aux, *, cu_seqlens_q=None, cu_seqlens_k=None, layout="bshd", k=None) -> np.ndarray:
    """d s_h = -sum over sequences and queries of exp(s_h - LSE_i) rowsum(dO_i * O_i), float64 (heads,)."""
    pk = _Packed(o, o if k is None else k, cu_seqlens_q, cu_seqlens_k, layout)
    Dr = (pk.pack(do) * pk.pack(o)).sum(axis=2)                 # (total_q, H)
    LSE = pk.pack_lse(lse)                                      # (H, total_q)
    s = np.asarray(s_aux, np.float64)
    return -(np.exp(s[:, None] - LSE) * Dr.T).sum(axis=1)


# --- backward ------------------------------------------------------------------------------
def attention_backward(q, k, v, o, do, lse, *, scale=None, causal=False, window=None, cu_seqlens_q=None,
                       cu_seqlens_k=None, layout="bshd", softcap=None,
                       s_aux=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dq, dk, dv) in float64, shaped like q, k, v: the gradient of sum(o * do) given the
    forward's o and lse (FA-2 recomputation; see the module docstring). Sinks (s_aux) reach
    dq/dk/dv only through the sink-including lse, so the formula is the same with or without."""
    cap = _softcap(softcap)
    pk = _Packed(q, k, cu_seqlens_q, cu_seqlens_k, layout)
    Q, K, V, O, dO = (pk.pack(x) for x in (q, k, v, o, do))
    LSE = pk.pack_lse(lse)
    heads, kv_heads, D = Q.shape[1], K.shape[1], Q.shape[2]
    group = heads // kv_heads
    sc = _scale(scale, D)
    left, right = (-1, -1) if window is None else window
    dQ, dK, dV = np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)
    Dr = (dO * O).sum(axis=2)                                  # (total_q, H): rowsum(dO * O)
    for rq, rk in pk.sequences():
        mask = visible_mask(rq.stop - rq.start, rk.stop - rk.start, causal, left, right)
        for h in range(heads):
            g = h // group
            lse_h = LSE[h, rq]
            finite = np.isfinite(lse_h)
            s = _scores(Q[rq, h], K[rk, g], sc, mask, cap)
            keep = mask & finite[:, None]
            p = np.where(keep, np.exp(s - np.where(finite, lse_h, 0.0)[:, None]), 0.0)
            dV[rk, g] += p.T @ dO[rq, h]
            dp = dO[rq, h] @ V[rk, g].T
            ds = p * (dp - Dr[rq, h][:, None])
            if cap:
                ds = ds * np.where(keep, 1.0 - (s / cap) ** 2, 0.0)
            dQ[rq, h] = sc * (ds @ K[rk, g])
            dK[rk, g] += sc * (ds.T @ Q[rq, h])
    return pk.unpack(dQ), pk.unpack(dK), pk.unpack(dV)
