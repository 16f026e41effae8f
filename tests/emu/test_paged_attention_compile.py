"""The paged decode defaults compile spill-free (compiler output only: no emulator run) -- the
f16 twin of the bf16 variant sweep_defaults.py chose them on, with every mask flag on, for
head dims across the range, 16-bit and fp8 caches, 1 and 4 blocks of packed rows, at the split
a single-sequence MQA call of 4096 positions gets (the widest: 64 since issue 38). (Lives in tests/emu because the op's tests
are kept together; it is a compile test.)"""
import pytest

from wmma_gen.ops.paged_attention.api import compile_paged
from wmma_gen.ops.paged_attention.defaults import SPLITS, default_schedule
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("head_dim", [16, 80, 128, 192, 256])
@pytest.mark.parametrize("kv", ["f16", "fp8e5m2"])
@pytest.mark.parametrize("rows", [4, 64])
def test_default_spill_free(arch, head_dim, kv, rows):
    d = PagedAttentionDirective("f16", head_dim, 16, kv, True, True, True, True)
    s = default_schedule(d, arch, rows, 4096, batch=1, kv_heads=1)
    assert s.split_kv == max(SPLITS) == 64
    (_, ck), (_, cck) = compile_paged(d, s, arch)
    assert ck.metadata.vgpr_spill_count == 0 and ck.metadata.scratch_bytes == 0, (s, ck.metadata.vgpr_count)
    assert cck.metadata.vgpr_spill_count == 0
    assert ck.metadata.lds_bytes <= 65536
