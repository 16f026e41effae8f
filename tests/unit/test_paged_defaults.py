"""The paged default's split_kv (ops/paged_attention/defaults.py) fills the GPU from the call's
(sequence, kv head) pairs against the target's CUs: pure code, no compile."""
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.ops.paged_attention import defaults
from wmma_gen.ops.paged_attention.defaults import default_schedule
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
from wmma_gen.targets import get_target

D = PagedAttentionDirective("f16", 128)


def _waves(arch, s, batch, kv_heads):
    return batch * kv_heads * s.split_kv * s.waves


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_batch1_short_context_splits_more_than_batch16_long(arch):
    short = default_schedule(D, arch, 4, 1024, batch=1, kv_heads=8)
    long = default_schedule(D, arch, 4, 32768, batch=16, kv_heads=8)
    assert short.split_kv > long.split_kv > 1, (short, long)
    # the capacity-only rule had it the other way round
    assert default_schedule(D, arch, 4, 1024).split_kv < default_schedule(D, arch, 4, 32768).split_kv


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("batch, kv_heads, capacity", [(1, 1, 1 << 20), (4, 8, 8192), (64, 8, 4096), (2, 2, 96)])
def test_split_is_the_fewest_that_fill_or_a_cap(arch, batch, kv_heads, capacity):
    t = get_target(arch)
    s = default_schedule(D, arch, 4, capacity, batch=batch, kv_heads=kv_heads)
    fill = defaults.FILL_WAVES_PER_SIMD * t.simds_per_cu * t.cus
    smaller = [x for x in defaults.SPLITS if x < s.split_kv]
    assert s.split_kv in defaults.SPLITS and capacity // s.split_kv >= min(defaults.MIN_SPLIT_KEYS, capacity)
    filled = _waves(arch, s, batch, kv_heads) >= fill
    capped = s.split_kv == max(defaults.SPLITS) or 2 * s.split_kv * defaults.MIN_SPLIT_KEYS > capacity
    assert filled or capped, s
    if smaller:      # and the next smaller split would not have filled the GPU
        assert batch * kv_heads * smaller[-1] * s.waves < fill, s


def test_prefill_chunks_and_unknowns():
    # more than 64 packed rows (32 q heads per kv head x 16 tokens): no split, whatever the batch
    assert default_schedule(D, "gfx1100", 512, 8192, batch=1, kv_heads=1).split_kv == 1
    # no batch / kv heads, or no public CU count (gfx1170): one split per 512 positions
    assert default_schedule(D, "gfx1100", 4, 4096).split_kv == 8
    assert get_target("gfx1170").cus is None
    assert default_schedule(D, "gfx1170", 4, 4096, batch=1, kv_heads=1).split_kv == 8


@pytest.mark.parametrize("batch", [0, -3])
def test_bad_pairs_are_refused_naming_them(batch):
    with pytest.raises(ScheduleError, match=r"batch x kv_heads.*positive integer"):
        default_schedule(D, "gfx1100", 4, 4096, batch=batch, kv_heads=8)
