"""`AttentionBwdSchedule`: *how* the flash-attention backward is computed (STYLE rule 6).

Three kernels (prepass.py, dkdv.py, dq.py) share one schedule:

  dK/dV kernel  one workgroup per (key tile of `block_n` keys, kv head, sequence); `waves`
                waves, each owning 16 keys x ceil(head_dim/16/`d_split`) 16-column blocks of
                the dK/dV accumulators;
                the query tiles of `block_m` rows are streamed through LDS.
  dQ kernel     one workgroup per (query tile of `dq_block_m` rows, query head, sequence);
                `dq_waves` waves, each owning 16 queries x head_dim/`dq_d_split` of dQ; the
                key tiles of `dq_block_n` keys are streamed through LDS.

dQ is computed separately (no knob: the `dq` and `buffering` knobs, each with one value, were
retired; RETIRED keeps files that carry them loading). A second kernel recomputes S and dP per
query tile (2 extra WMMA GEMMs: the backward does 7 instead of 5 GEMM passes over the
visible (query, key) pairs, ~1.4x the WMMA work of a fused dQ), in exchange for no float
atomics and no partial-dQ workspace: every output element is written by exactly one
workgroup with a fixed summation order, so results are bit-identical for any dispatch
order. A fused variant would need per-key-tile dQ partials (Sk/block_n x Sq x D f32 of
workspace) plus an ordered reduction pass to stay deterministic.

`SPACE` lists the knobs; `CONSTRAINTS` are named predicates over (schedule, head_dim,
dtype, target) returning None or a reason (the same predicates reject user JSON and prune
tuner trials).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

from ...knobs import Knob, KnobSchedule

GLOBAL_WINDOW = 16   # operands="global": head-dim columns of S/dP fragment loads between scheduling barriers
#                      (32 spilled 42-52 VGPRs in gfx1100 hd400-432 dK/dV, bf16 softcap + masks; 16: 234, 0 spills)
PAD = 8  # LDS row padding in elements (16 bytes: keeps rows 16-byte aligned, shifts banks)


SPACE: tuple[Knob, ...] = (
    Knob("block_m", (16, 32, 64), "dK/dV kernel: query rows per streamed tile"),
    Knob("block_n", (16, 32, 64, 128), "dK/dV kernel: keys per workgroup (16 per wave x waves/d_split)"),
    Knob("waves", (1, 2, 4, 8), "dK/dV kernel: waves per workgroup"),
    Knob("d_split", (1, 2, 4, 8), "dK/dV kernel: waves sharing one 16-key slice, each accumulating "
         "head_dim/d_split columns of dK and dV (S and dP are recomputed by each)"),
    Knob("dq_block_m", (16, 32, 64, 128), "dQ kernel: query rows per workgroup"),
    Knob("dq_block_n", (16, 32, 64), "dQ kernel: keys per streamed tile"),
    Knob("dq_waves", (1, 2, 4, 8), "dQ kernel: waves per workgroup"),
    Knob("dq_d_split", (1, 2, 4, 8), "dQ kernel: waves sharing one 16-query slice (head_dim split)"),
    Knob("prepass_rows", (64, 128, 256), "pre-pass: query rows (threads) per workgroup"),
    Knob("sched", ("default", "ilp"), "dK/dV kernel: LLVM's machine scheduler (ilp: the "
         "amdgpu-sched-strategy iterative-ilp)"),
    Knob("fence", ("none", "grad"), "dK/dV kernel: a scheduling barrier between the softmax gradient "
         "and the dV/dK WMMAs (none: LLVM interleaves them freely)"),
    Knob("operands", ("lds", "global"), "both kernels: the natural Q, dO, K, V tiles of S and dP staged in LDS, "
         "or read by each wave from global memory (only the transposed tiles in LDS: head dims above 256)"),
)
KNOBS = {k.name: k for k in SPACE}


@dataclass(frozen=True)
class AttentionBwdSchedule(KnobSchedule):
    RETIRED: ClassVar[dict] = {"buffering": 1, "dq": "separate"}   # one LDS buffer per tile; the dQ kernel
    block_m: int = 32
    block_n: int = 64
    waves: int = 4
    d_split: int = 1
    dq_block_m: int = 64
    dq_block_n: int = 32
    dq_waves: int = 4
    dq_d_split: int = 1
    prepass_rows: int = 128
    sched: str = "default"
    fence: str = "none"
    operands: str = "lds"

    @property
    def threads(self) -> int:
        return 32 * self.waves

    @property
    def dq_threads(self) -> int:
        return 32 * self.dq_waves

    def lds_bytes(self, head_dim: int, kernel: str) -> int:
        """LDS of the dkdv or dq kernel (16-bit tiles, PAD elements per row, f32 row vectors)."""
        d = head_dim
        nat = self.operands == "lds"   # operands="global": the natural tiles are not in LDS
        if kernel == "dkdv":   # K, V natural; Q, dO natural and transposed; LSE, Di
            m, n = self.block_m, self.block_n
            return 2 * (nat * (2 * n * (d + PAD) + 2 * m * (d + PAD)) + 2 * d * (m + PAD)) + 8 * m
        m, n = self.dq_block_m, self.dq_block_n  # Q, dO natural; K, V natural; K transposed
        return 2 * (nat * (2 * m * (d + PAD) + 2 * n * (d + PAD)) + d * (n + PAD))


# --- constraints: (schedule, head_dim, dtype, target) -> None | reason -------------------

def dtype_supported(s, head_dim, dtype, t) -> str | None:
    if (dtype, "f32") not in t.wmma:
        return f"dtype={dtype} has no f32-accumulating WMMA on {t.arch}"
    return None


def keys_cover_waves(s, head_dim, dtype, t) -> str | None:
    if s.waves % s.d_split:
        return f"waves={s.waves} must be a multiple of d_split={s.d_split}"
    if s.block_n != 16 * (s.waves // s.d_split):
        return (f"block_n={s.block_n} must be 16 * waves/d_split = {16 * (s.waves // s.d_split)} "
                f"(each wave owns one 16-key slice)")
    if s.dq_waves % s.dq_d_split:
        return f"dq_waves={s.dq_waves} must be a multiple of dq_d_split={s.dq_d_split}"
    if s.dq_block_m != 16 * (s.dq_waves // s.dq_d_split):
        return (f"dq_block_m={s.dq_block_m} must be 16 * dq_waves/dq_d_split = "
                f"{16 * (s.dq_waves // s.dq_d_split)} (each wave owns one 16-query slice)")
    return None


def blocks_per_wave(head_dim: int, split: int) -> int:
    """16-column head-dim blocks each of `split` waves accumulates: ceil(D/16 / split). When
    split does not divide D/16 the last part's surplus blocks repeat its last block (dkdv.py,
    dq.py: blocks.head_cols), e.g. D=240, split 2: blocks 0-7 and 8-14 (+14 again)."""
    return -(-(head_dim // 16) // split)


def head_dim_split(s, head_dim, dtype, t) -> str | None:
    blocks = head_dim // 16
    for name, k in (("d_split", s.d_split), ("dq_d_split", s.dq_d_split)):
        if (k - 1) * blocks_per_wave(head_dim, k) >= blocks:
            return (f"{name}={k} leaves a wave without a head-dim block at head_dim/16={blocks} "
                    f"(ceil({blocks}/{k}) = {blocks_per_wave(head_dim, k)} blocks per wave)")
    return None


def lds_budget(s, head_dim, dtype, t) -> str | None:
    for kernel in ("dkdv", "dq"):
        need = s.lds_bytes(head_dim, kernel)
        if need > t.lds_bytes:
            return f"{kernel} kernel needs {need} bytes of LDS at head_dim={head_dim}; {t.arch} has {t.lds_bytes}"
    return None


def vgpr_estimate(s, head_dim, kernel: str, t) -> int:
    """Lower bound on VGPRs per lane: f32 accumulators (8 per 16x16 tile), S and dP tiles,
    their 16-bit B-operand copies, one A fragment and addresses."""
    frag = 8 if t.family == "gfx11" else 4
    if kernel == "dkdv":
        acc = 2 * blocks_per_wave(head_dim, s.d_split) * 8
        rows = s.block_m // 16
    else:
        acc = blocks_per_wave(head_dim, s.dq_d_split) * 8
        rows = s.dq_block_n // 16
    return acc + rows * (2 * 8 + 2 * frag) + 2 * frag + 16


def vgpr_budget(s, head_dim, dtype, t) -> str | None:
    for kernel in ("dkdv", "dq"):
        need = vgpr_estimate(s, head_dim, kernel, t)
        if need > t.max_vgprs_per_wave:
            return (f"{kernel} kernel needs at least {need} VGPRs per lane at head_dim={head_dim}; "
                    f"max {t.max_vgprs_per_wave} (raise d_split / lower block_m or dq_block_n)")
    return None


def workgroup_size(s, head_dim, dtype, t) -> str | None:
    for name, n in (("waves", s.threads), ("dq_waves", s.dq_threads), ("prepass_rows", s.prepass_rows)):
        if n > t.max_workgroup_threads:
            return f"{name}: {n} threads exceeds {t.max_workgroup_threads}"
    return None


CONSTRAINTS: tuple[Callable[..., Optional[str]], ...] = (
    dtype_supported, keys_cover_waves, head_dim_split, lds_budget, vgpr_budget, workgroup_size,
)
AttentionBwdSchedule.bind(SPACE, CONSTRAINTS)
