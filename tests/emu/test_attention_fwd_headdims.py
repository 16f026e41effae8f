"""Every head dim (32, 64, 80, 96, 128, 256) with its default schedule on gfx1100, gfx1151
and gfx1201 (80 and 96 use D/16 = 5 and 6 fragments; 256 keeps Q in LDS), plus the
q_in="lds" schedule knob and multi-fragment waves (FQ = 2) at small head dims."""
import pytest
from attention_fwd_helpers import check

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.targets import get_target


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1151", "gfx1201"])
@pytest.mark.parametrize("head_dim", [32, 80, 96, 256])
def test_head_dims(arch, head_dim):
    dtype = "bf16" if head_dim in (80, 256) else "f16"
    d = AttentionDirective(dtype, head_dim, causal=head_dim == 96, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=1, kv_heads=1, seq_q=23, seq_k=37)


@pytest.mark.parametrize("arch", ["gfx1151"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_gfx1151_dense(arch, head_dim):
    d = AttentionDirective("f16", head_dim, causal=True, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=2, kv_heads=1, seq_q=30, seq_k=50)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("sched", [dict(block_m=64, block_n=32, waves=2), dict(block_m=32, block_n=32, waves=1,
                                                                              q_in="lds", load_bits=64),
                                   dict(block_m=16, block_n=16, waves=1, load_bits=32)])
def test_other_schedules(arch, sched):
    d = AttentionDirective("f16", 64, causal=True, return_lse=True)
    check(arch, d, AttentionSchedule(**sched), heads=1, kv_heads=1, seq_q=45, seq_k=61)
