"""The attention backward in the GPU-less model (source = "model"): the three kernels
estimated one by one with model/loop_kernel.py and added (they run back to back).

  pre-pass  Di = rowsum(dO * O): memory bound -- reads O and dO once, writes Di
  dK/dV     one workgroup per (key tile of block_n, kv head, sequence); its loop runs once per
            (query tile of block_m that sees the key tile) x (query heads of the GQA group)
  dQ        one workgroup per (query tile of dq_block_m, head, sequence); one trip per key
            tile of dq_block_n the query tile sees
Visibility of a (query tile, key tile) pair: the forward's mask band (attention/model.py).
Each trip loads its streamed tiles from L2 (dK/dV: Q and dO tiles; dQ: K and V tiles).
FLOPs: 2.5x the forward's, the convention of the backward ladder.
"""
from __future__ import annotations

from ...model.attention_band import ELEM_BYTES, key_span
from ...model.loop_kernel import estimate_loop_kernel
from ...targets import get_target
from ...attention_common.reference import attention_flops


def visible_tile_pairs(d, p: dict, bm: int, bn: int) -> int:
    """(query tile of bm, key tile of bn) pairs with at least one visible (query, key)."""
    sq, sk = p["seq_q"], p["seq_k"]
    left, right = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else (-1, -1)
    pairs = 0
    for i0 in range(0, sq, bm):
        lo, hi = key_span(i0, min(sq, i0 + bm), sq, sk, d.causal, left, right)
        if hi > lo:
            pairs += -(-hi // bn) - lo // bn
    return pairs


def estimate_attention_bwd(compiled: dict, d, s, p: dict, arch: str):
    """Sum of the three kernels' estimates; `compiled` maps prepass/dkdv/dq to CompiledKernel.
    Returns (total seconds, TFLOP/s, per-kernel Estimates)."""
    t = get_target(arch)
    b, h, hk, sq, sk, dim = p["batch"], p["heads"], p["kv_heads"], p["seq_q"], p["seq_k"], d.head_dim
    window = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else None
    flops = attention_flops(b, h, sq, sk, dim, d.causal, window, backward=True)
    fwd_flops = attention_flops(b, h, sq, sk, dim, d.causal, window)
    rows = b * h * sq * dim * ELEM_BYTES
    kv = b * hk * sk * dim * ELEM_BYTES
    est = {}
    est["prepass"] = estimate_loop_kernel(
        compiled["prepass"], t, d.dtype, total_trips=0, workgroups=-(-b * h * sq // s.prepass_rows),
        l2_bytes=2 * rows, compulsory_bytes=2 * rows + 4 * b * h * sq, flops=0.0)
    pairs = visible_tile_pairs(d, p, s.block_m, s.block_n) * b * h
    est["dkdv"] = estimate_loop_kernel(
        compiled["dkdv"], t, d.dtype, total_trips=pairs, workgroups=-(-sk // s.block_n) * hk * b,
        l2_bytes=pairs * 2 * s.block_m * dim * ELEM_BYTES + 2 * kv,
        compulsory_bytes=2 * rows + 4 * kv, flops=fwd_flops * 1.5)       # S, dP, dV, dK: 4 of 7 GEMMs
    pairs_q = visible_tile_pairs(d, p, s.dq_block_m, s.dq_block_n) * b * h
    est["dq"] = estimate_loop_kernel(
        compiled["dq"], t, d.dtype, total_trips=pairs_q, workgroups=-(-sq // s.dq_block_m) * h * b,
        l2_bytes=pairs_q * 2 * s.dq_block_n * dim * ELEM_BYTES + 3 * rows,
        compulsory_bytes=3 * rows + 2 * kv, flops=fwd_flops * 1.0)        # S, dP, dQ: 3 of 7 GEMMs
    seconds = sum(e.seconds for e in est.values())
    return seconds, flops / seconds / 1e12, est
