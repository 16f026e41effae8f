"""Default forward schedule per (arch family, head_dim): every one compiles with 0 spills on
gfx1100, gfx1151 and gfx1201, f16 and bf16, with and without causal/window/varlen/LSE
(tests/compile/test_attention_compile.py checks it).

One wave per 16 queries (FQ = 1) everywhere: the O^T accumulators alone take D/2 VGPRs per
16 queries, and Q kept in registers another D/2 (gfx11: 16 halves per lane) or D/4 (gfx12).
Prefill uses 8 waves per workgroup (BLOCK_M 128) where it fits: the K/V tile copy is shared by
twice the threads (half the loads, address adds and LDS stores per wave) and 8 waves hide the
latency of the one workgroup an hd128 tile's LDS leaves room for per CU. Chosen on static
quality (0 spills, main-loop WMMA density; bench/attention_table.py) and the model's estimate
(source=model) at S=4096, e.g. hd128: gfx1100 64x64/4 waves 0.108 -> 128x64/8 waves 0.114
(model 65 -> 87 TFLOP/s), gfx1201 0.133 -> 0.144 (65 -> 134). head_dim 256 keeps Q in LDS
(a 128-query Q tile would not fit the 64 KiB) with 16-key tiles and the minreg scheduler.

Head dims 16, 48, 112 and 144..240 (every multiple of 16): swept over block_m 64/128 (FQ 1, 2),
block_n 16..128, q_in, load_bits 64/128 and sched; kept the candidates with 0 spills in the
heaviest variant (bf16, causal + window + varlen + LSE), ranked by the model (f16, B=1, H=16,
S=4096) and, within ~2% of the best, took the one with the most VGPR headroom, e.g. gfx1100
hd144 128x32/8 waves q_in=lds (148 VGPRs, model 58.5) over 128x64/8 waves (247 VGPRs, 61.2,
spills with masks); gfx1201 hd192 128x64/8 waves (235 VGPRs, model 95.1). Above hd~176 on
gfx11 (Q^T fragments: D/2 VGPRs) Q goes to LDS and tiles shrink toward hd256's.

Decode (split_kv > 1: at most 16 queries per sequence) keeps 64-query, 4-wave tiles: a
128-query tile would run 8 waves for at most one busy 16-query block. Decode is memory bound
(the model ties every spill-free candidate), so new head dims take the spill-free decode tile
with the most VGPR headroom.
"""
from __future__ import annotations

from ...targets import Target
from .schedule import AttentionSchedule

_DEFAULTS = {
    # (family, head_dim): schedule knobs (prefill)
    ("gfx11", 16): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx11", 32): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 48): {"block_m": 128, "block_n": 128, "waves": 8, "q_in": "lds"},
    ("gfx11", 64): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx11", 80): {"block_m": 128, "block_n": 32, "waves": 8},
    ("gfx11", 96): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 112): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 128): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 144): {"block_m": 128, "block_n": 32, "waves": 8, "q_in": "lds"},
    ("gfx11", 160): {"block_m": 128, "block_n": 32, "waves": 8, "load_bits": 64},
    ("gfx11", 176): {"block_m": 128, "block_n": 16, "waves": 8, "q_in": "lds", "sched": "minreg"},
    ("gfx11", 192): {"block_m": 64, "block_n": 32, "waves": 4, "q_in": "lds", "load_bits": 64},
    ("gfx11", 208): {"block_m": 64, "block_n": 32, "waves": 4, "q_in": "lds"},
    ("gfx11", 224): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "load_bits": 64},
    ("gfx11", 240): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "load_bits": 64},
    ("gfx11", 256): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "load_bits": 64, "sched": "minreg"},
    ("gfx12", 16): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx12", 32): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx12", 48): {"block_m": 128, "block_n": 128, "waves": 8, "sched": "minreg"},
    ("gfx12", 64): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx12", 80): {"block_m": 128, "block_n": 32, "waves": 8},
    ("gfx12", 96): {"block_m": 128, "block_n": 64, "waves": 8, "sched": "minreg"},
    ("gfx12", 112): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx12", 128): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx12", 144): {"block_m": 128, "block_n": 64, "waves": 8, "load_bits": 64},
    ("gfx12", 160): {"block_m": 128, "block_n": 64, "waves": 8, "load_bits": 64},
    ("gfx12", 176): {"block_m": 128, "block_n": 64, "waves": 8, "load_bits": 64},
    ("gfx12", 192): {"block_m": 128, "block_n": 64, "waves": 8, "load_bits": 64},
    ("gfx12", 208): {"block_m": 128, "block_n": 32, "waves": 8, "sched": "minreg"},
    ("gfx12", 224): {"block_m": 128, "block_n": 32, "waves": 8, "sched": "minreg"},
    ("gfx12", 240): {"block_m": 128, "block_n": 16, "waves": 8, "sched": "minreg"},
    ("gfx12", 256): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "sched": "minreg"},
}
# Head dims 272..512: the O^T accumulators of one 16-query block (D/2 VGPRs) leave no room in one
# wave, so d_split waves share each block and split its head dim (kernels/attention_dsplit.py;
# QK^T is split, not repeated: the S^T partials are summed through LDS). Swept on gfx1100 and
# gfx1201 (FlyDSL, 2026-12-05; /tmp sweep of block_m 32/64 x block_n 16/32 x d_split 2/4 at 8 waves,
# bf16 causal + window + varlen + LSE for spills, model at f16 B=1 H=16 S=4096, source=model):
# d_split=2 with 64-query tiles leads where it is spill-free (gfx1100 hd272 53.2 vs 38.8 TFLOP/s for
# 32x16 d_split=4, hd320 56.4 vs 49.3; gfx1201 hd384 80.4 vs 65.9, hd448 82.7 vs 69.2) but spills or
# exceeds the VGPRs from gfx11 hd368 / gfx12 hd480 (and at gfx11 hd288: 16 spilled), where 32x16 with
# d_split=4 (gfx1100 hd512 54.4, 248 VGPRs; gfx1201 hd512 72.2 vs 72.4, 199 vs 255 VGPRs) takes over.
# block_n 32 fits 64 KiB of LDS only up to hd336 and gained <= 7% where it did not spill.
_WIDE2 = {"block_m": 64, "block_n": 16, "waves": 8, "d_split": 2}
_WIDE4 = {"block_m": 32, "block_n": 16, "waves": 8, "d_split": 4}
_DEFAULTS |= {("gfx11", hd): (_WIDE2 if hd in (272, 304, 320, 336, 352) else _WIDE4) for hd in range(272, 513, 16)}
_DEFAULTS |= {("gfx12", hd): (_WIDE2 if hd <= 464 else _WIDE4) for hd in range(272, 513, 16)}

_DECODE = {
    # (family, head_dim): knobs replacing the prefill ones when split_kv > 1
    **{(fam, hd): {"block_m": 64, "block_n": 64, "waves": 4} for fam in ("gfx11", "gfx12") for hd in (32, 64, 128)},
    ("gfx11", 16): {"block_m": 64, "block_n": 64, "waves": 4},
    ("gfx11", 48): {"block_m": 64, "block_n": 64, "waves": 4},
    ("gfx11", 80): {"block_m": 64, "block_n": 32, "waves": 4},
    ("gfx11", 96): {"block_m": 64, "block_n": 64, "waves": 4, "q_in": "lds"},
    ("gfx11", 112): {"block_m": 64, "block_n": 32, "waves": 4},
    ("gfx11", 144): {"block_m": 64, "block_n": 16, "waves": 4},
    ("gfx11", 160): {"block_m": 64, "block_n": 16, "waves": 4, "load_bits": 64},
    ("gfx11", 176): {"block_m": 64, "block_n": 32, "waves": 4, "q_in": "lds"},
    **{("gfx11", hd): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "sched": "minreg", **kw}
       for hd, kw in ((192, {"load_bits": 64}), (208, {}), (224, {}), (240, {}))},
    ("gfx12", 16): {"block_m": 64, "block_n": 32, "waves": 4},
    ("gfx12", 80): {"block_m": 64, "block_n": 32, "waves": 4},
    ("gfx12", 96): {"block_m": 64, "block_n": 64, "waves": 4, "sched": "minreg"},
    **{("gfx12", hd): {"block_m": 64, "block_n": 16, "waves": 4, "sched": "minreg"} for hd in (48, 112, 144, 160, 176, 192)},
    **{("gfx12", hd): {"block_m": 64, "block_n": 16, "waves": 4} for hd in (208, 224, 240)},
    # 272..512: one 16-query block (decode has at most 16 queries) over 4 waves splitting D
    **{(fam, hd): {"block_m": 16, "block_n": 16, "waves": 4, "d_split": 4}
       for fam in ("gfx11", "gfx12") for hd in range(272, 513, 16)},
}

# Prefill knobs replacing _DEFAULTS under one LLVM major version of the loaded MLIR provider
# (compiler/mlir_api.provider(); part of every cache key). Compiler output, FlyDSL (LLVM 24),
# 2026-12-04:
# - gfx12 hd208/hd224 spill 12-36 VGPRs at 128x32/8 waves (f16/bf16, with and without masks);
#   64x32/4 waves with LLVM's default scheduler is spill-free at 237-254 VGPRs, main-loop density
#   0.129-0.143 (with sched="minreg" it spills 13-69: keep "default").
# - gfx12 hd256: _DEFAULTS' minreg scheduler is spill-free (181-196 VGPRs) but the default one
#   with lane_values="recompute" (the lane's bands and epilogue rows not held across the key loop)
#   reaches 0.1155-0.1199 instead of 0.1107-0.1147 (0.1019-0.1042 vs 0.0988-0.1009 with softcap),
#   0 spills at 250-252 VGPRs; keeping the values with the default scheduler spills 3-4.
# - gfx1102/gfx1103 (RDNA3, 1024 VGPRs per SIMD) hd64 with causal masks spill 5 VGPRs at the
#   gfx11 default; lane_values="recompute" is spill-free at 207 VGPRs, density 0.094 (block_n 64,
#   the other fix, loses 3% in the model's estimate). Keyed by arch: the family's other parts
#   (1536 VGPRs, or RDNA3.5) do not spill.
# - hd64/hd128: LLVM 24 interleaves the key loop's phases and issues more s_waitcnt than LLVM 23
#   (gfx1100 f16 hd64: 684 main-loop instructions vs mlir-gml's 679). A sched barrier between
#   the softmax and PV (fence="pv") gives gfx11 671-674 f16, 731-732 bf16 (gfx1100 hd64),
#   545-546 / 581-582 (hd128); gfx1151 hd64 0.0947-0.095 f16. On gfx12 that one costs; the one
#   after the K(n+1) loads (fence="k_load") gives gfx1201 hd64 490 f16 (was 504), 550-551 bf16
#   (564-565), hd128 f16 density 0.1565-0.1569 (0.1553-0.1557). gfx1100 hd64 also takes
#   lane_values="recompute" (bf16 0.0843 -> 0.0861 before the fence; on gfx1151 it loses).
_FENCE = {"gfx11": "pv", "gfx12": "k_load"}
_LLVM_DEFAULTS = {
    **{(24, fam, hd): {**_DEFAULTS[(fam, hd)], "fence": _FENCE[fam]} for fam in _FENCE for hd in (64, 128)},
    (24, "gfx1100", 64): {**_DEFAULTS[("gfx11", 64)], "lane_values": "recompute", "fence": "pv"},
    **{(24, arch, 64): {**_DEFAULTS[("gfx11", 64)], "lane_values": "recompute", "fence": "pv"}
       for arch in ("gfx1102", "gfx1103")},
    (24, "gfx12", 208): {"block_m": 64, "block_n": 32, "waves": 4},
    (24, "gfx12", 224): {"block_m": 64, "block_n": 32, "waves": 4},
    (24, "gfx12", 256): {**_DEFAULTS[("gfx12", 256)], "sched": "default", "lane_values": "recompute"},
}


def _llvm_major() -> int:
    from ...kernels.module import llvm_major     # loads MLIR: only when a schedule is asked for
    return llvm_major()


def default_schedule(t: Target, d, split_kv: int = 1, llvm: int | None = None) -> AttentionSchedule:
    """The default schedule of directive d on target t (split_kv > 1: the decode tiles) under
    LLVM major version `llvm` (None: the loaded provider's; 0: none of _LLVM_DEFAULTS, the
    provider-independent table, e.g. to compare the providers' builds of one schedule)."""
    llvm = _llvm_major() if llvm is None else llvm
    knobs = (_LLVM_DEFAULTS.get((llvm, t.arch, d.head_dim)) or _LLVM_DEFAULTS.get((llvm, t.family, d.head_dim))
             or _DEFAULTS.get((t.family, d.head_dim)))
    if knobs is None:
        raise ValueError(f"head_dim={d.head_dim} has no default attention schedule on {t.arch}: "
                         f"one of {sorted({hd for fam, hd in _DEFAULTS if fam == t.family})}")
    if split_kv > 1:
        knobs = _DECODE.get((t.family, d.head_dim), knobs)
    return AttentionSchedule(**knobs, split_kv=split_kv).validate(d, t)
