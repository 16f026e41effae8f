"""lane_values="recompute" (ops/attention/schedule.py): the lane's key bands and its epilogue query
and rows rebuilt from an opaque copy of the thread id must mask and store exactly as "keep" does.
Emulator vs the float64 reference (attention_fwd_helpers tolerances) with every mask that reads
the bands: causal + window + varlen (empty, length-1, Sq > Sk sequences), two 16-query blocks per
wave (FQ = 2: the band of block f > 0), and the LLVM 24 hd256 default it was made for."""
from dataclasses import replace

import pytest
from attention_fwd_helpers import check

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.targets import get_target

LENS = [(5, 9), (0, 4), (1, 1), (40, 23)]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_recompute_masks_like_keep(arch):
    d = AttentionDirective("f16", 64, causal=True, window=True, varlen=True, return_lse=True)
    s = AttentionSchedule(block_m=64, block_n=32, waves=2, lane_values="recompute")
    check(arch, d, s, heads=2, kv_heads=1, lens=LENS, window=(6, 2))


def test_recompute_hd256_masked_default():
    d = AttentionDirective("bf16", 256, causal=True, window=True, varlen=True, return_lse=True)
    s = replace(default_schedule(get_target("gfx1201"), d), lane_values="recompute")
    check("gfx1201", d, s, heads=1, kv_heads=1, lens=[(3, 20), (17, 17)], window=(9, -1))


@pytest.mark.parametrize("arch, dtype, head_dim", [("gfx1100", "f16", 64), ("gfx1103", "bf16", 64),
                                                   ("gfx1100", "bf16", 256)])
def test_llvm_defaults_masked(arch, dtype, head_dim):
    """The defaults the loaded provider's LLVM takes (defaults._LLVM_DEFAULTS: recompute on
    gfx1100/gfx1103 hd64 and the minreg hd256 under LLVM 24; the family's under LLVM 23)."""
    d = AttentionDirective(dtype, head_dim, causal=True, window=True, varlen=True, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=2, kv_heads=1, lens=LENS[:3] + [(20, 37)],
          window=(7, -1))
