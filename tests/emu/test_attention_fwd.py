"""Flash-attention forward, dense problems: the compiled kernel run on the emulator agrees
with the float64 reference (tolerances in attention_fwd_helpers) on gfx1100 and gfx1201,
f16 and bf16, head_dim 64 and 128, sequence lengths that are not tile multiples, LSE."""
import pytest
from attention_fwd_helpers import check

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.targets import get_target

ARCHS = ["gfx1100", "gfx1201"]


def _sched(arch, d):
    return default_schedule(get_target(arch), d)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_dense_with_lse(arch, dtype, head_dim):
    d = AttentionDirective(dtype, head_dim, return_lse=True)
    check(arch, d, _sched(arch, d), heads=2, kv_heads=2, seq_q=40, seq_k=72)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("seq_q, seq_k", [(1, 1), (17, 5), (70, 130)])
def test_odd_lengths(arch, seq_q, seq_k):
    d = AttentionDirective("f16", 64, return_lse=True)
    check(arch, d, _sched(arch, d), heads=1, kv_heads=1, seq_q=seq_q, seq_k=seq_k, seed=seq_q)


@pytest.mark.parametrize("arch", ARCHS)
def test_scale_and_batch(arch):
    d = AttentionDirective("bf16", 64, return_lse=True)
    check(arch, d, _sched(arch, d), batch=2, heads=1, kv_heads=1, seq_q=33, seq_k=47, scale=0.3)
