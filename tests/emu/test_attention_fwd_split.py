"""Split-KV decode shapes on the emulator: Sq from 1 to 16 against a long Sk, several
workgroups per query tile over disjoint key ranges, merged by the combine kernel; includes
splits whose range is empty or fully masked (causal/window), varlen and GQA."""
import pytest
from attention_fwd_helpers import check

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.targets import get_target

ARCHS = ["gfx1100", "gfx1201"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("seq_q, split", [(1, 4), (16, 2), (5, 8)])
def test_decode_split(arch, dtype, seq_q, split):
    d = AttentionDirective(dtype, 64, return_lse=True)
    s = default_schedule(get_target(arch), d, split_kv=split)
    check(arch, d, s, heads=4, kv_heads=1, seq_q=seq_q, seq_k=300, seed=seq_q)


@pytest.mark.parametrize("arch", ARCHS)
def test_split_causal_window_hd128(arch):
    d = AttentionDirective("f16", 128, causal=True, window=True, return_lse=True)
    s = default_schedule(get_target(arch), d, split_kv=4)
    check(arch, d, s, heads=2, kv_heads=2, seq_q=9, seq_k=200, window=(50, 0))


@pytest.mark.parametrize("arch", ARCHS)
def test_split_varlen(arch):
    d = AttentionDirective("bf16", 64, causal=True, varlen=True, return_lse=True)
    s = default_schedule(get_target(arch), d, split_kv=2)
    check(arch, d, s, heads=2, kv_heads=1, lens=[(1, 150), (0, 7), (3, 0), (16, 90)])
