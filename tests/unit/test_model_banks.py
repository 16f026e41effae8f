"""wmma_gen.ops.gemm.banks: LDS bank-conflict degree under the model's layout assumption."""
from wmma_gen.ops.gemm.banks import conflict_cycles, degree, fragment_read_addrs
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target

D = GemmDirective("f16")


def test_broadcast_is_free_and_stride_conflicts_count():
    assert conflict_cycles([0] * 32, 4, 32, 4) == (1, 1)               # one dword broadcast
    assert conflict_cycles([4 * l for l in range(32)], 4, 32, 4) == (1, 1)
    assert conflict_cycles([128 * l for l in range(32)], 4, 32, 4) == (32, 1)  # all lanes on bank 0


def test_padding_removes_fragment_read_conflicts_gfx11():
    t = get_target("gfx1100")
    # rows of 32 halves = 64 B: rows r and r+2 share banks -> 4x; +8 halves (80 B rows) -> conflict-free
    assert degree(fragment_read_addrs(Schedule(lds="ab", lds_pad=0), D, t, 128), 16, 32, 4) == 4.0
    assert degree(fragment_read_addrs(Schedule(lds="ab", lds_pad=8), D, t, 128), 16, 32, 4) == 1.0


def test_gfx12_half_waves_read_different_k():
    t = get_target("gfx1201")
    addrs = fragment_read_addrs(Schedule(lds="ab", lds_pad=8), D, t, 128)
    assert addrs[16] - addrs[0] == 16       # lane 16 starts 8 halves further along K
    assert len(set(addrs)) == 32
