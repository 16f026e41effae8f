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

Decode (split_kv > 1: at most 16 queries per sequence) keeps 64-query, 4-wave tiles: a
128-query tile would run 8 waves for at most one busy 16-query block.
"""
from __future__ import annotations

from ...targets import Target
from .schedule import AttentionSchedule

_DEFAULTS = {
    # (family, head_dim): schedule knobs (prefill)
    ("gfx11", 32): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 64): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx11", 80): {"block_m": 128, "block_n": 32, "waves": 8},
    ("gfx11", 96): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 128): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx11", 256): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "load_bits": 64, "sched": "minreg"},
    ("gfx12", 32): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx12", 64): {"block_m": 128, "block_n": 128, "waves": 8},
    ("gfx12", 80): {"block_m": 128, "block_n": 32, "waves": 8},
    ("gfx12", 96): {"block_m": 128, "block_n": 64, "waves": 8, "sched": "minreg"},
    ("gfx12", 128): {"block_m": 128, "block_n": 64, "waves": 8},
    ("gfx12", 256): {"block_m": 64, "block_n": 16, "waves": 4, "q_in": "lds", "sched": "minreg"},
}
_DECODE = {
    # (family, head_dim): knobs replacing the prefill ones when split_kv > 1
    **{(fam, hd): {"block_m": 64, "block_n": 64, "waves": 4} for fam in ("gfx11", "gfx12") for hd in (32, 64, 128)},
    ("gfx11", 80): {"block_m": 64, "block_n": 32, "waves": 4},
    ("gfx12", 80): {"block_m": 64, "block_n": 32, "waves": 4},
    ("gfx11", 96): {"block_m": 64, "block_n": 64, "waves": 4, "q_in": "lds"},
    ("gfx12", 96): {"block_m": 64, "block_n": 64, "waves": 4, "sched": "minreg"},
}


def default_schedule(t: Target, d, split_kv: int = 1) -> AttentionSchedule:
    """The default schedule of directive d on target t (split_kv > 1: the decode tiles)."""
    knobs = _DEFAULTS.get((t.family, d.head_dim))
    if knobs is None:
        raise ValueError(f"head_dim={d.head_dim} has no default attention schedule on {t.arch}: "
                         f"one of {sorted({hd for fam, hd in _DEFAULTS if fam == t.family})}")
    if split_kv > 1:
        knobs = _DECODE.get((t.family, d.head_dim), knobs)
    return AttentionSchedule(**knobs, split_kv=split_kv).validate(d, t)
