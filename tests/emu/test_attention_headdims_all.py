"""Head dims beyond the original six (every multiple of 16 up to 256): forward and backward
with their default schedules on the emulator against the float64 reference, gfx11 (gfx1100)
and gfx12 (gfx1201), GQA (4 query heads on 2 kv heads). 16 (small models) and 192 run causal
and not; the others run once, alternating dtype and mask. 144, 176, 208 and 240 (9, 11, 13
and 15 head-dim blocks) exercise the backward's uneven head-dim split across waves. Tiny
sequences keep the emulator fast; the tolerances are the helpers' (attention_fwd_helpers.check,
attention_bwd_cases.TOL)."""
import numpy as np
import pytest
from attention_bwd_cases import check as check_bwd
from attention_fwd_helpers import check as check_fwd

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import HEAD_DIMS, AttentionDirective
from wmma_gen.ops.attention_bwd import default_schedule as bwd_default
from wmma_gen.targets import get_target

ARCHS = ("gfx1100", "gfx1201")
NEW = (16, 48, 112, 144, 160, 176, 192, 208, 224, 240)
CASES = [(16, False), (16, True), (192, False), (192, True)] + \
        [(hd, i % 2 == 0) for i, hd in enumerate(x for x in NEW if x not in (16, 192))]


def _dtype(head_dim: int) -> str:
    return "bf16" if head_dim in (48, 144, 192, 224) else "f16"


def test_every_multiple_of_16_up_to_256():
    """(and on to 512: test_attention_fwd_large_hd.py, test_attention_bwd_large_hd_values.py)"""
    assert HEAD_DIMS == tuple(range(16, 513, 16))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("head_dim, causal", CASES)
def test_forward(arch, head_dim, causal):
    d = AttentionDirective(_dtype(head_dim), head_dim, causal=causal, return_lse=True)
    check_fwd(arch, d, default_schedule(get_target(arch), d), heads=4, kv_heads=2, seq_q=23, seq_k=37)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("head_dim", [16, 176, 240])
def test_forward_split_kv(arch, head_dim):
    """The decode tiles (split_kv > 1) and the combine kernel at new head dims."""
    d = AttentionDirective("f16", head_dim, return_lse=True)
    check_fwd(arch, d, default_schedule(get_target(arch), d, split_kv=2), heads=4, kv_heads=2, seq_q=3, seq_k=45)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("head_dim, causal", CASES)
def test_backward(arch, head_dim, causal):
    check_bwd(arch, np.random.default_rng(head_dim + causal), dtype=_dtype(head_dim), heads=4, kv_heads=2,
              sq=21, sk=29, d=head_dim, causal=causal)


def test_uneven_head_dim_splits_are_exercised():
    """At least one default splits D/16 blocks unevenly over waves on each family."""
    for arch in ARCHS:
        s = [bwd_default(arch, hd) for hd in (144, 176, 208, 240)]
        assert any((hd // 16) % x.d_split or (hd // 16) % x.dq_d_split for hd, x in zip((144, 176, 208, 240), s))
