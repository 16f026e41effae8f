"""Default forward schedule per (arch family, head_dim): every one compiles with 0 spills on
gfx1100, gfx1151 and gfx1201 (tests/compile/test_attention_compile.py checks it).

One wave per 16 queries (FQ = 1) everywhere: the O^T accumulators alone take D/2 VGPRs per
16 queries, and Q kept in registers another D/2 (gfx11: 16 halves per lane) or D/4 (gfx12).
head_dim 256 keeps Q in LDS and uses 16..32-key tiles so O^T (128 VGPRs) fits.
"""
from __future__ import annotations

from ...targets import Target
from .schedule import AttentionSchedule

_DEFAULTS = {
    # (family, head_dim): schedule knobs
    ("gfx11", 32): dict(block_m=64, block_n=64, waves=4),
    ("gfx11", 64): dict(block_m=64, block_n=64, waves=4),
    ("gfx11", 80): dict(block_m=64, block_n=32, waves=4),
    ("gfx11", 96): dict(block_m=64, block_n=64, waves=4, q_in="lds"),
    ("gfx11", 128): dict(block_m=64, block_n=64, waves=4),
    ("gfx11", 256): dict(block_m=64, block_n=16, waves=4, q_in="lds", load_bits=64, sched="minreg"),
    ("gfx12", 32): dict(block_m=64, block_n=64, waves=4),
    ("gfx12", 64): dict(block_m=64, block_n=64, waves=4),
    ("gfx12", 80): dict(block_m=64, block_n=32, waves=4),
    ("gfx12", 96): dict(block_m=64, block_n=64, waves=4, sched="minreg"),
    ("gfx12", 128): dict(block_m=64, block_n=64, waves=4),
    ("gfx12", 256): dict(block_m=64, block_n=16, waves=4, q_in="lds", sched="minreg"),
}


def default_schedule(t: Target, d, split_kv: int = 1) -> AttentionSchedule:
    """The default schedule of directive d on target t (split_kv for decode shapes)."""
    knobs = _DEFAULTS.get((t.family, d.head_dim))
    if knobs is None:
        raise ValueError(f"head_dim={d.head_dim} has no default attention schedule on {t.arch}: "
                         f"one of {sorted({hd for fam, hd in _DEFAULTS if fam == t.family})}")
    return AttentionSchedule(**knobs, split_kv=split_kv).validate(d, t)
