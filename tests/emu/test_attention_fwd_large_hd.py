"""Head dims 272..512 (the forward's d_split: waves share a 16-query block and split its head dim,
S^T partials summed through LDS -- kernels/attention_dsplit.py) on the emulator against the float64
reference, gfx11 (gfx1100) and gfx12 (gfx1201): the defaults at the ends of the range and in it,
causal and not, GQA, varlen + window, split-KV decode and its combine, and an uneven split (D/16 not
a multiple of d_split: the last wave's slice runs past D). Sequence lengths end inside every tile;
tolerances are attention_fwd_helpers.check's."""
import numpy as np
import pytest
from attention_fwd_helpers import check

from wmma_gen.errors import ScheduleError
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.targets import get_target

CASES = [("gfx1100", 512, "f16", False), ("gfx1201", 512, "bf16", True), ("gfx1100", 272, "bf16", True),
         ("gfx1201", 400, "f16", False)]


@pytest.mark.parametrize("arch, head_dim, dtype, causal", CASES)
def test_default(arch, head_dim, dtype, causal):
    d = AttentionDirective(dtype, head_dim, causal=causal, return_lse=True)
    s = default_schedule(get_target(arch), d)
    assert s.d_split > 1
    check(arch, d, s, heads=2, kv_heads=1, seq_q=21, seq_k=37)


def test_varlen_window_gfx1201():
    d = AttentionDirective("f16", 336, causal=True, window=True, varlen=True, return_lse=True)
    check("gfx1201", d, default_schedule(get_target("gfx1201"), d), heads=2, kv_heads=2, lens=[(9, 20), (19, 13)],
          window=(7, 0))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_split_kv_decode(arch):
    d = AttentionDirective("bf16", 512, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d, split_kv=2), heads=2, kv_heads=1, seq_q=3, seq_k=45)


def test_uneven_split_guards_the_last_slice():
    """D/16 = 19 over 4 waves: slices of 5 tiles, the last wave's fifth lies past D (never computed
    nor stored): a wrong guard would add K/Q columns from outside D into S or write past O's row."""
    d = AttentionDirective("f16", 304, causal=True, return_lse=True)
    s = AttentionSchedule(block_m=16, block_n=32, waves=4, d_split=4)
    o, _ = check("gfx1100", d, s, heads=1, kv_heads=1, seq_q=19, seq_k=27)
    assert np.isfinite(o).all()


def test_d_split_schedule_errors_name_the_knob():
    d = AttentionDirective("f16", 512)
    t = get_target("gfx1100")
    with pytest.raises(ScheduleError, match="kv_buffers=1"):
        AttentionSchedule(block_m=16, block_n=16, waves=4, d_split=4, kv_buffers=2).validate(d, t)
    with pytest.raises(ScheduleError, match="d_split=4 must divide waves=2"):
        AttentionSchedule(block_m=16, block_n=16, waves=2, d_split=4).validate(d, t)
    with pytest.raises(ScheduleError, match="LDS"):
        AttentionSchedule(block_m=16, block_n=64, waves=4, d_split=4).validate(d, t)
    with pytest.raises(ScheduleError, match="without head-dim columns"):
        AttentionSchedule(block_m=16, block_n=16, waves=8, d_split=8).validate(AttentionDirective("f16", 272), t)

