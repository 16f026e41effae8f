"""Paged decode in the GPU-less model (source = "model", never a measurement): the op's share
-- key-tile trips, bytes per trip, FLOPs -- handed to model/loop_kernel.py (as the dense
forward's attention/model.py does).

Trips: sequence b's packed rows see keys [lo, hi) (union over its Sq query tokens: causal and
window per model/attention_band.key_span with Sq queries and Sk = seq_lens[b]); the kernel runs
ceil(hi / BLOCK_N) - floor(lo / BLOCK_N) tiles per (kv head, row tile), split over split_kv
workgroups. Each trip reads one K and one V tile (kv element bytes: 1 for fp8); compulsory DRAM
traffic is Q, O and each kv head's visible K/V once (GQA: the group shares the reads). The
combine kernel (a few bytes per row and split) is not modelled. FLOPs: 4 * D per visible
(query, key) pair and query head (reference.paged_attention_flops). fp8_wmma kernels are costed
at the fp8 WMMA's rate and peak (targets: gfx12's v_wmma_f32_16x16x16_fp8_fp8 row), the others
at the query dtype's.
"""
from __future__ import annotations

from ...model.loop_kernel import estimate_loop_kernel
from ...targets import get_target
from ...model.attention_band import key_span
from .reference import paged_attention_flops


def kv_bytes(d) -> int:
    return 1 if d.fp8 else 2


def trips_and_keys(d, s, p: dict, seq_lens) -> tuple[int, int, int]:
    """(key-tile trips over all workgroups, workgroups, visible keys per kv head summed over
    sequences) for problem p (heads, kv_heads, seq_q, window) and the sequences' lengths."""
    left, right = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else (-1, -1)
    row_tiles = -(-(p["heads"] // p["kv_heads"] * p["seq_q"]) // s.block_m)
    trips = keys = 0
    for L in seq_lens:
        lo, hi = key_span(0, p["seq_q"], p["seq_q"], int(L), d.causal, left, right)
        if hi > lo:
            trips += -(-hi // s.block_n) - lo // s.block_n
            keys += hi - lo
    per = p["kv_heads"] * row_tiles
    return trips * per, len(seq_lens) * per * s.split_kv, keys


def estimate_paged(compiled, d, s, p: dict, seq_lens, arch: str):
    """Estimate (source "model") of the paged kernel `compiled` for problem p and seq_lens."""
    t = get_target(arch)
    trips, wgs, keys = trips_and_keys(d, s, p, seq_lens)
    window = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else None
    flops = paged_attention_flops(seq_lens, p["seq_q"], p["heads"], d.head_dim, d.causal, window)
    tile = 2 * s.block_n * d.head_dim * kv_bytes(d)
    q_o = 2 * len(seq_lens) * p["seq_q"] * p["heads"] * d.head_dim * 2
    kv = 2 * keys * p["kv_heads"] * d.head_dim * kv_bytes(d)
    return estimate_loop_kernel(compiled, t, "fp8" if d.fp8_wmma else d.dtype, total_trips=trips, workgroups=wgs,
                                l2_bytes=trips * tile + q_o, compulsory_bytes=q_o + kv, flops=flops)
