"""AttentionSchedule: *how* the flash-attention forward is computed (STYLE rule 6).

`SPACE` lists every knob with its domain, doc and when it matters; legality is a tuple of
named predicates over (AttentionSchedule, AttentionDirective, Target) returning None or a
reason. The same predicates reject user JSON and prune tuner trials.

A workgroup owns BLOCK_M queries of one (sequence, head); each of its `waves` waves owns
FQ = BLOCK_M / (16 * waves) 16-query blocks and loops over BLOCK_N-key tiles of K and V
staged in LDS (kernel.py). With d_split > 1 (head dims above 256), d_split waves share each
16-query block and split its head dim (kernels/attention_dsplit.py): FQ = BLOCK_M * d_split /
(16 * waves).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...kernels.attention import LDS_PAD
from ...knobs import Knob, KnobSchedule
from ...targets import Target


SPACE: tuple[Knob, ...] = (
    Knob("block_m", (16, 32, 64, 128, 256), "queries per workgroup (BLOCK_M)"),
    Knob("block_n", (16, 32, 64, 128), "keys per main-loop tile (BLOCK_N)"),
    Knob("waves", (1, 2, 4, 8), "waves per workgroup; each owns BLOCK_M/waves queries"),
    Knob("kv_buffers", (1, 2), "1: one LDS buffer each for K and V, loads of V(n) overlap S=QK^T and\n"
         "loads of K(n+1) overlap the softmax and PV (two barriers per tile);\n"
         "2: two buffers each (ping-pong), loads of K(n+1) and V(n+1) issued before S(n), K stored\n"
         "after S, V after PV (one barrier per tile; twice the LDS)"),
    Knob("q_in", ("regs", "lds"), "Q fragments kept in registers for the whole loop, or re-read from LDS"),
    Knob("load_bits", (32, 64, 128), "width of each global load per lane, in bits"),
    Knob("split_kv", (1, 2, 4, 8, 16), "workgroups per query tile over disjoint key ranges; partial O and\n"
         "LSE go to a workspace and a second small kernel combines them (deterministic)"),
    Knob("sched", ("default", "minreg"), "LLVM machine-scheduler strategy of the kernel: default (GCN max\n"
         "occupancy) or minreg (amdgpu-sched-strategy=iterative-minreg: fewer live VGPRs where the\n"
         "default one hoists a tile's LDS fragment loads together and spills)"),
    Knob("lane_values", ("keep", "recompute"), "the lane's key bands (boundary-tile mask) and its query and\n"
         "rows (epilogue): computed once before the key loop and kept in VGPRs, or recomputed from\n"
         "the thread id where they are used (~3-6 fewer VGPRs live across the loop, a few VALU per\n"
         "boundary tile)"),
    Knob("fence", ("none", "k_load", "pv"), "where a scheduling barrier nothing crosses\n"
         "(llvm.amdgcn.sched.barrier mask 0) splits the key loop body: none; k_load (after the loads\n"
         "of K(n+1) are issued: before the LDS barrier, with kv_buffers=2 before S(n)); pv (after the\n"
         "softmax, before O^T += V^T P^T). LLVM 24 interleaves the phases otherwise, with more s_waitcnt"),
    Knob("d_split", (1, 2, 4, 8), "waves sharing each 16-query block, each owning head_dim/d_split columns\n"
         "of Q, K and O/V: S^T partials summed through LDS (kernels/attention_dsplit.py); > 1 for head\n"
         "dims above 256, whose O^T alone fills a wave's VGPRs (kv_buffers=1 only)"),
)
KNOBS = {k.name: k for k in SPACE}


@dataclass(frozen=True)
class AttentionSchedule(KnobSchedule):
    block_m: int = 64
    block_n: int = 64
    waves: int = 4
    kv_buffers: int = 1
    q_in: str = "regs"
    load_bits: int = 128
    split_kv: int = 1
    sched: str = "default"
    lane_values: str = "keep"
    fence: str = "none"
    d_split: int = 1

    @property
    def threads(self) -> int:
        return 32 * self.waves

    @property
    def q_waves(self) -> int:
        """Waves over the queries (each 16-query block is shared by d_split waves)."""
        return self.waves // self.d_split

    @property
    def frags_q(self) -> int:
        """16-query blocks per wave (FQ)."""
        return self.block_m // (16 * max(self.q_waves, 1))

    def lds_bytes(self, d) -> int:
        """K tile [BLOCK_N][D+pad] + V^T tile [D][BLOCK_N+pad] (x kv_buffers), + Q [BLOCK_M][D+pad],
        + the f32 S^T partial exchange when d_split > 1."""
        k = self.block_n * (d.head_dim + LDS_PAD)
        v = d.head_dim * (self.block_n + LDS_PAD)
        q = self.block_m * (d.head_dim + LDS_PAD) if self.q_in == "lds" else 0
        x = 0
        if self.d_split > 1:    # its module imports the MLIR bindings: loaded only for a split schedule
            from ...kernels.attention_dsplit import exchange_bytes
            x = exchange_bytes(self.waves, self.frags_q, self.block_n)
        return 2 * (self.kv_buffers * (k + v) + q) + x


# --- constraints: (AttentionSchedule, AttentionDirective, Target) -> None | reason ------------

def dtype_supported(s: AttentionSchedule, d, t: Target) -> str | None:
    if (d.dtype, "f32") not in t.wmma:
        return f"dtype {d.dtype} has no f32-accumulating WMMA on {t.arch}"
    return None


def tile_shape(s: AttentionSchedule, d, t: Target) -> str | None:
    if s.waves % s.d_split:
        return f"d_split={s.d_split} must divide waves={s.waves} (d_split waves share a 16-query block)"
    if s.block_m % (16 * s.q_waves):
        return (f"block_m={s.block_m} must be a multiple of 16*waves/d_split={16 * s.q_waves} "
                "(16 queries per WMMA tile)")
    if d.head_dim % 16:
        return f"head_dim={d.head_dim} must be a multiple of 16 (WMMA K and M)"
    nk = -(-d.head_dim // (16 * s.d_split))
    if (s.d_split - 1) * nk >= d.head_dim // 16:
        return (f"d_split={s.d_split} leaves a wave without head-dim columns at head_dim={d.head_dim} "
                f"(slices of {16 * nk}): use fewer")
    return None


def d_split_buffers(s: AttentionSchedule, d, t: Target) -> str | None:
    if s.d_split > 1 and s.kv_buffers != 1:
        return (f"d_split={s.d_split} needs kv_buffers=1 (its S^T exchange rides the two barriers per tile), "
                f"not {s.kv_buffers}")
    return None


def workgroup_size(s: AttentionSchedule, d, t: Target) -> str | None:
    if s.threads > t.max_workgroup_threads:
        return f"waves*32={s.threads} threads exceeds {t.max_workgroup_threads}"
    return None


def lds_budget(s: AttentionSchedule, d, t: Target) -> str | None:
    if s.lds_bytes(d) > t.lds_bytes:
        return (f"LDS {s.lds_bytes(d)} bytes (block_n={s.block_n}, head_dim={d.head_dim}, "
                f"kv_buffers={s.kv_buffers}, q_in={s.q_in}) exceeds {t.arch}'s {t.lds_bytes} per workgroup")
    return None


def vgpr_estimate(s: AttentionSchedule, d, t: Target) -> int:
    """VGPRs per lane the schedule needs at least: O^T accumulators (8 per 16x16 tile),
    S^T accumulators, Q fragments when kept in registers, one tile of K or V staging
    registers (two with kv_buffers=2), one A fragment, and ~24 for addresses and state."""
    fq, dt = s.frags_q, -(-d.head_dim // (16 * s.d_split))
    frag = 8 if t.family == "gfx11" else 4          # 16-bit A/B fragment: 16 or 8 halves
    o = fq * dt * 8
    sacc = fq * (s.block_n // 16) * 8
    q = fq * dt * frag if s.q_in == "regs" else 0
    staging = s.kv_buffers * -(-s.block_n * d.head_dim * 2 // (4 * s.threads))
    return o + sacc + q + staging + frag + 24


def vgpr_budget(s: AttentionSchedule, d, t: Target) -> str | None:
    need = vgpr_estimate(s, d, t)
    if need > t.max_vgprs_per_wave:
        return (f"needs about {need} VGPRs per lane (O, S, Q fragments, staging); "
                f"max {t.max_vgprs_per_wave}: lower block_m or block_n, or q_in='lds'")
    return None


def staging_divides(s: AttentionSchedule, d, t: Target) -> str | None:
    w = s.load_bits // 16
    if d.head_dim % w:
        return f"load_bits={s.load_bits} ({w} halves) must divide head_dim={d.head_dim}"
    return None


CONSTRAINTS: tuple[Callable[[AttentionSchedule, object, Target], Optional[str]], ...] = (
    dtype_supported, tile_shape, d_split_buffers, workgroup_size, lds_budget, vgpr_budget, staging_divides,
)
AttentionSchedule.bind(SPACE, CONSTRAINTS)
