"""Default backward schedules per (WMMA family, head_dim): spill-free on gfx1100, gfx1151 and
gfx1201 at head_dim 64 and 128 (tests/compile/test_attention_bwd_quality.py checks it).

Rules behind the table: every wave owns one 16-key (dK/dV) or 16-query (dQ) slice; the f32
accumulators take 8 VGPRs per 16x16 tile, i.e. 2 * (D/16/d_split) * 8 for dK and dV. Up to
hd128 no head-dim split is needed (block_m / dq_block_n shrink instead: every WMMA is useful
work); hd256 splits the head dimension across waves (d_split: each such wave recomputes S
and dP, so part of its WMMAs are redundant). block_m and dq_block_n keep the streamed LDS
tiles inside 64 KiB. tests/compile/test_attention_bwd_quality.py checks spills and density.

Head dims 16, 48, 112 and 144..240: each kernel's knobs swept (block_m / dq_block_n 16-64,
waves 1-8, split 1/2/4) on gfx1100 and gfx1201, ranked by the model's per-kernel time (f16,
B=1, H=16, S=4096) among spill-free candidates, preferring VGPR headroom within ~10%; then
checked spill-free for f16/bf16 x dense/causal+window+varlen on gfx1100, gfx1151, gfx1201.
D/16 = 9, 11, 13, 15 (144, 176, 208, 240) has no even split: schedule.blocks_per_wave gives
the last wave part one repeated block (blocks.head_cols), e.g. hd144 gfx11 dK/dV 5 + 4(+1).
"""
from __future__ import annotations

from dataclasses import replace

from ...targets import get_target
from .schedule import AttentionBwdSchedule

S = AttentionBwdSchedule


def _s(dkdv: tuple[int, int, int], dq: tuple[int, int, int]) -> AttentionBwdSchedule:
    """dkdv = (block_m, waves, d_split), dq = (dq_block_n, dq_waves, dq_d_split); each wave
    owns one 16-key / 16-query slice, so block_n and dq_block_m follow."""
    (bm, w, ds), (bn, qw, qds) = dkdv, dq
    return S(block_m=bm, block_n=16 * (w // ds), waves=w, d_split=ds,
             dq_block_m=16 * (qw // qds), dq_block_n=bn, dq_waves=qw, dq_d_split=qds)


_HD128 = S(block_m=16, block_n=64, waves=4, dq_block_m=64, dq_block_n=16, dq_waves=4)
_TABLE: dict[tuple[str, int], AttentionBwdSchedule] = {
    ("gfx11", 16): _s((64, 4, 1), (64, 4, 1)),
    ("gfx11", 32): S(block_m=64, block_n=64, waves=4, dq_block_m=64, dq_block_n=64, dq_waves=4),
    ("gfx11", 48): _s((64, 8, 1), (32, 8, 1)),
    ("gfx11", 64): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx11", 80): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx11", 96): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx11", 112): _s((32, 8, 2), (16, 4, 1)),
    ("gfx11", 128): _HD128,
    ("gfx11", 144): _s((16, 8, 2), (16, 4, 1)),
    ("gfx11", 160): _s((16, 4, 2), (16, 4, 1)),
    ("gfx11", 176): _s((16, 4, 2), (32, 4, 2)),
    ("gfx11", 192): _s((16, 4, 2), (16, 8, 4)),
    ("gfx11", 208): _s((16, 4, 2), (16, 4, 2)),
    ("gfx11", 224): _s((16, 4, 4), (16, 8, 4)),
    ("gfx11", 240): _s((16, 4, 4), (16, 8, 4)),
    ("gfx11", 256): S(block_m=16, block_n=16, waves=2, d_split=2, dq_block_m=32, dq_block_n=16, dq_waves=4,
                      dq_d_split=2),
    ("gfx12", 16): _s((64, 4, 1), (64, 4, 1)),
    ("gfx12", 32): S(block_m=64, block_n=64, waves=4, dq_block_m=64, dq_block_n=64, dq_waves=4),
    ("gfx12", 48): _s((64, 8, 1), (32, 4, 1)),
    ("gfx12", 64): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx12", 80): S(block_m=32, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx12", 96): S(block_m=16, block_n=64, waves=4, dq_block_m=64, dq_block_n=32, dq_waves=4),
    ("gfx12", 112): _HD128,
    ("gfx12", 128): _HD128,
    ("gfx12", 144): _s((16, 8, 2), (16, 4, 1)),
    ("gfx12", 160): _s((16, 4, 2), (16, 8, 4)),
    ("gfx12", 176): _s((16, 8, 4), (16, 4, 2)),
    ("gfx12", 192): _s((16, 8, 4), (16, 4, 2)),
    ("gfx12", 208): _s((16, 8, 4), (16, 8, 4)),
    ("gfx12", 224): _s((16, 4, 4), (16, 8, 4)),
    ("gfx12", 240): _s((16, 4, 4), (16, 8, 4)),
    ("gfx12", 256): S(block_m=16, block_n=16, waves=4, d_split=4, dq_block_m=32, dq_block_n=16, dq_waves=4,
                      dq_d_split=2),
}


# Head dims 272..512: the natural Q, dO, K, V tiles no longer fit 64 KiB beside the transposed
# ones (hd512 dK/dV 115.7 KB), so each wave reads its S/dP fragments from global memory
# (operands="global"; only Q^T, dO^T / K^T in LDS: 49.3 / 24.6 KB at hd512) and 16-key / 16-query
# slices split D over 4 or 8 waves. Compiler output (FlyDSL, bf16 causal + window + varlen,
# 2026-12-05, schedule.GLOBAL_WINDOW 32): gfx1100 hd512 dK/dV d_split=4 spills 16 at 255 VGPRs,
# d_split=8 191 VGPRs, 0 spills; hd352 182 vs 256; dQ dq_d_split=4 160-204 VGPRs. d_split=8 where
# every wave keeps a head-dim block (schedule.head_dim_split), else 4; with GLOBAL_WINDOW 16 and
# softcap every default is spill-free on gfx1100 and gfx1201 (docs/large_head_dims.md).
def _wide(hd: int) -> AttentionBwdSchedule:
    blocks = hd // 16
    ds = 8 if 7 * -(-blocks // 8) < blocks else 4
    return S(block_m=16, block_n=16, waves=ds, d_split=ds, dq_block_m=16, dq_block_n=16, dq_waves=4, dq_d_split=4,
             operands="global")


_TABLE |= {(fam, hd): _wide(hd) for fam in ("gfx11", "gfx12") for hd in range(272, 513, 16)}


# Per-arch entries, consulted first. The 1024-VGPR RDNA3.5 parts (gfx1150, gfx1152, gfx1153) compile
# the gfx11 hd128 dQ kernel (dq_block_n=16) to 256 VGPRs + 10 spilled (44 B scratch; LLVM 23, f16,
# dense and causal), where gfx1103 (also 1024) needs 135. dq_block_n=32 is spill-free there (155-158
# VGPRs) and model-ranked (source=model, gfx1152 f16 B=1 H=16 S=4096) 2.74 vs 2.62 TFLOP/s dense,
# 2.67 vs 2.99 causal (the spilling default's estimate does not charge its scratch traffic).
_ARCH: dict[tuple[str, int], AttentionBwdSchedule] = {
    (arch, 128): replace(_HD128, dq_block_n=32) for arch in ("gfx1150", "gfx1152", "gfx1153")}


# Under LLVM 24 (FlyDSL) the hd64 dK/dV kernel interleaves the softmax gradient with the dV/dK WMMAs
# and issues more waits than under LLVM 23 (compiler output, 2026-12-04, main-loop instructions for
# 32 v_wmma, f16: gfx1100 398 vs mlir-gml's 394, gfx1201 297 vs 295). Eight waves (128-key tiles)
# plus, on gfx11, a scheduling barrier after the gradient (fence="grad") or, on gfx12, LLVM's
# iterative-ilp scheduler bring them to gfx1100 f16 394, bf16 541 (was 542); gfx1151 f16 395;
# gfx1201 f16 291, bf16 430 (was 446), 0 spills; model (B=1, H=16, S=4096, dense, source=model)
# gfx1100 f16 40.84 -> 41.03, gfx1201 f16 60.58 -> 60.58, bf16 50.93 -> 51.49 TFLOP/s.
# (iterative-ilp alone on gfx1201 f16: 293 but 60.26; the fence on gfx12: 296.)
_LLVM_DEFAULTS: dict[tuple[int, str, int], dict] = {
    (24, "gfx11", 64): {"waves": 8, "block_n": 128, "fence": "grad"},
    (24, "gfx12", 64): {"waves": 8, "block_n": 128, "sched": "ilp"},
}


def _llvm_major() -> int:
    from ...kernels.module import llvm_major     # loads MLIR: only when a schedule is asked for
    return llvm_major()


def default_schedule(arch: str, head_dim: int, llvm: int | None = None) -> AttentionBwdSchedule:
    """The table's schedule for arch and head_dim, with the LLVM major's own changes (`llvm`: the
    loaded provider's when None)."""
    fam = get_target(arch).family
    base = _ARCH.get((arch, head_dim)) or _TABLE[(fam, head_dim)]
    llvm = _llvm_major() if llvm is None else llvm
    change = _LLVM_DEFAULTS.get((llvm, fam, head_dim))
    return replace(base, **change) if change and (arch, head_dim) not in _ARCH else base
