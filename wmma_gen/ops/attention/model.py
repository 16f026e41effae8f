"""The attention forward in the GPU-less model (source = "model"): the op's share -- loop trips
per workgroup from the mask band, bytes per trip, FLOPs -- handed to model/loop_kernel.py.

Trips: query tile [i0, i1) of a sequence sees keys [lo, hi) (causal bottom-right: hi =
i1 - 1 + Sk - Sq + 1; window (left, right) narrows both ends), and the kernel runs
ceil(hi / BLOCK_N) - floor(lo / BLOCK_N) key tiles (band skipping; split-KV divides them
over `split_kv` workgroups). Each trip loads one K and one V tile (L2 traffic); compulsory
DRAM traffic is Q, K, V and O once. FLOPs: 4 * D per visible (query, key) pair
(reference.attention_flops), the convention of every attention ladder.
"""
from __future__ import annotations

from ...model.attention_band import ELEM_BYTES, key_span
from ...model.loop_kernel import estimate_loop_kernel
from ...targets import get_target
from ...attention_common.reference import attention_flops


def key_tile_trips(d, s, p: dict) -> tuple[int, int]:
    """(total key-tile trips over all workgroups, workgroups) of a dense problem."""
    sq, sk = p["seq_q"], p["seq_k"]
    left, right = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else (-1, -1)
    trips = 0
    for i0 in range(0, sq, s.block_m):
        lo, hi = key_span(i0, min(sq, i0 + s.block_m), sq, sk, d.causal, left, right)
        if hi > lo:
            trips += -(-hi // s.block_n) - lo // s.block_n
    per_head = p["batch"] * p["heads"]
    return trips * per_head, -(-sq // s.block_m) * s.split_kv * per_head


def estimate_attention(compiled, d, s, p: dict, arch: str):
    """Estimate (source "model") of the forward kernel `compiled` on dense problem `p`."""
    t = get_target(arch)
    trips, wgs = key_tile_trips(d, s, p)
    window = (p.get("window_left", -1), p.get("window_right", -1)) if d.window else None
    flops = attention_flops(p["batch"], p["heads"], p["seq_q"], p["seq_k"], d.head_dim, d.causal, window)
    tile_bytes = 2 * s.block_n * d.head_dim * ELEM_BYTES
    q_o = 2 * p["batch"] * p["heads"] * p["seq_q"] * d.head_dim * ELEM_BYTES
    kv = 2 * p["batch"] * p["kv_heads"] * p["seq_k"] * d.head_dim * ELEM_BYTES
    return estimate_loop_kernel(compiled, t, d.dtype, total_trips=trips, workgroups=wgs,
                                l2_bytes=trips * tile_bytes + q_o, compulsory_bytes=q_o + kv, flops=flops)
