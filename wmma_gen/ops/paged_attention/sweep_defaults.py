"""Regenerates defaults.py's TABLE (compiler output, no timing): for each family (gfx1100,
gfx1201 as its representative), head dim, cache kind (16-bit / fp8) and packed-row blocks
(1, 2, 4 blocks of 16 rows), the first candidate in preference order whose code object has
0 VGPR spills, in the heaviest variant (bf16, causal + window + softcap + LSE, block_size 16).

    python -m wmma_gen.ops.paged_attention.sweep_defaults > /tmp/table.txt
"""
from __future__ import annotations

from ...targets import get_target
from .api import compile_paged
from .directive import HEAD_DIMS, PagedAttentionDirective
from .schedule import PagedSchedule

ARCHS = {"gfx11": "gfx1100", "gfx12": "gfx1201"}
BLOCKS = (1, 2, 4)   # more packed rows take more row tiles (the 4-block entry)
MODES = (("regs", True), ("lds", True), ("regs", False), ("lds", False))


def candidates(blocks: int):
    shapes = sorted(((w, f) for f in (1, 2) for w in (1, 2, 4) if w * f >= blocks), key=lambda x: (x[0] * x[1], x[1]))
    for waves, frags in shapes:
        for q_in, prefetch in MODES:
            yield dict(waves=waves, frags_q=frags, q_in=q_in, prefetch=prefetch)


def pick(arch: str, head_dim: int, kv: str, blocks: int):
    d = PagedAttentionDirective("bf16", head_dim, 16, kv, True, True, True, True)
    for knobs in candidates(blocks):
        s = PagedSchedule(block_n=16, load_bits=128, **knobs)
        if s.problems(d, get_target(arch)):
            continue
        (_, ck), _ = compile_paged(d, s, arch)
        if ck.metadata.vgpr_spill_count == 0:
            return knobs, ck.metadata.vgpr_count
    return None, None


def main() -> None:
    for fam, arch in ARCHS.items():
        for hd in HEAD_DIMS:
            for kv in ("bf16", "fp8e4m3"):
                for blocks in BLOCKS:
                    knobs, vgprs = pick(arch, hd, kv, blocks)
                    print(f"    ({fam!r}, {hd}, {kv.startswith('fp8')}, {blocks}): {knobs},  # {vgprs} VGPRs",
                          flush=True)


if __name__ == "__main__":
    main()
