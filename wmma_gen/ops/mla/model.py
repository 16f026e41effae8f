"""MLA decode in the GPU-less model (source = "model", never a measurement): trips, bytes per
trip and FLOPs handed to model/loop_kernel.py.

Trips: each (sequence, 16-row tile) walks ceil(L / 16) key tiles, split over split_kv
workgroups. A trip reads one latent tile [16][D] from L2 once (V^T is built from its LDS copy,
kernel.py). Compulsory DRAM traffic is Q, O and
each sequence's latent rows once (every head and row tile shares them: L2 reuse across the
row tiles of one sequence is assumed). FLOPs: reference.mla_decode_flops.
"""
from __future__ import annotations

from ...model.loop_kernel import estimate_loop_kernel
from ...targets import get_target
from .reference import mla_decode_flops
from .schedule import BLOCK_N


def kv_bytes(d) -> int:
    return 1 if d.fp8 else 2


def dram_bytes(d, p: dict, seq_lens) -> int:
    """Compulsory bytes: Q (2 B), O (2 B), LSE and the latent rows once."""
    rows = len(seq_lens) * p["seq_q"] * p["heads"]
    return rows * (2 * d.head_dim + 2 * d.head_dim_v + 4) + sum(int(L) for L in seq_lens) * d.head_dim * kv_bytes(d)


def estimate_mla(compiled, d, s, p: dict, seq_lens, arch: str):
    t = get_target(arch)
    row_tiles = -(-p["heads"] * p["seq_q"] // 16)
    trips = sum(-(-int(L) // BLOCK_N) for L in seq_lens) * row_tiles
    wgs = len(seq_lens) * row_tiles * s.split_kv
    tile = BLOCK_N * d.head_dim * kv_bytes(d)
    flops = mla_decode_flops(seq_lens, p["seq_q"], p["heads"], d.head_dim, d.head_dim_v)
    dram = dram_bytes(d, p, seq_lens)
    return estimate_loop_kernel(compiled, t, "fp8" if s.fp8_wmma else d.dtype, total_trips=trips, workgroups=wgs,
                                l2_bytes=trips * tile + dram, compulsory_bytes=dram, flops=flops)
