"""Static quality of the forward's defaults at head dims 272..512 (d_split > 1: waves share a
16-query block and split its head dim; kernels/attention_dsplit.py), no GPU needed: 0 VGPR spills
and no scratch in the heaviest variant (bf16, causal + window + varlen + LSE), the LDS the
schedule declares (within 64 KiB), and a main loop whose WMMAs per wave are the slice's:
FQ * BLOCK_N/16 * nk for S^T plus the same for O^T, nk = ceil(D/16/d_split) (tiles a guard
may skip on the last slice sit in branches off the loop's block chain, so at least the
unguarded ones). Three head dims per family stay in the quick suite; the rest are slow."""
import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import HEAD_DIMS, AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.targets import get_target

LARGE = [hd for hd in HEAD_DIMS if hd > 256]
QUICK = (272, 384, 512)
CASES = [pytest.param(arch, hd, marks=() if hd in QUICK else pytest.mark.slow)
         for arch in ("gfx1100", "gfx1201") for hd in LARGE]


@pytest.mark.parametrize("arch, head_dim", CASES)
def test_large_head_dim_default_no_spills(arch, head_dim):
    t = get_target(arch)
    d = AttentionDirective("bf16", head_dim, causal=True, window=True, varlen=True, return_lse=True)
    s = default_schedule(t, d)
    assert s.d_split > 1 and s.lds_bytes(d) <= t.lds_bytes == 65536
    k = compile_mlir(build_attention(d, s, t).mlir, arch)
    assert k.metadata.vgpr_spill_count == 0 and k.metadata.scratch_bytes == 0, k.metadata
    assert k.metadata.lds_bytes == s.lds_bytes(d)
    loop = find_main_loop(k.isa)
    assert loop.found
    dts = head_dim // 16
    nk = -(-dts // s.d_split)
    unguarded = dts - (s.d_split - 1) * nk if dts % s.d_split else nk
    per = s.frags_q * (s.block_n // 16)
    assert 2 * per * min(unguarded, nk) <= loop.wmma <= 2 * per * nk, (loop.wmma, nk, unguarded)
