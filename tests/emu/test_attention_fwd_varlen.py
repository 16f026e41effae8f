"""Varlen (packed sequences through cu_seqlens_q / cu_seqlens_k) on the emulator: empty
sequences on either side, length-1 sequences, per-sequence causal alignment, GQA."""
import pytest
from attention_fwd_helpers import check

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.targets import get_target

ARCHS = ["gfx1100", "gfx1201"]
LENS = [
    [(5, 9), (0, 4), (1, 1), (70, 33), (3, 0)],      # empty q, length 1, Sq > Sk, empty k
    [(17, 17), (1, 80)],                               # decode-like second sequence
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lens", LENS, ids=["mixed", "decode"])
def test_varlen(arch, dtype, causal, lens):
    d = AttentionDirective(dtype, 64, causal=causal, varlen=True, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=2, kv_heads=1, lens=lens)


@pytest.mark.parametrize("arch", ARCHS)
def test_varlen_window_hd128(arch):
    d = AttentionDirective("f16", 128, window=True, varlen=True, return_lse=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=2, kv_heads=2, lens=LENS[0], window=(6, 2))
