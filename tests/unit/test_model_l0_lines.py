"""ops/gemm/l0_lines.py: the L0 lines a GEMM kernel's A/B loads touch ([RDNA]: one 128-byte line per clock)
and the clocks that adds to the model's lane-byte count (issue 38 item 1). No compile: the addresses come
from the schedule and the kernel builders' own order (kernels/staging/tile_order.py)."""
import pytest

from wmma_gen.kernels.staging.tile_order import IntOps, chunk_width, group_index, row_group
from wmma_gen.model.params import params_for
from wmma_gen.ops.gemm import l0_lines
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target

P4096 = GemmProblem(4096, 4096, 4096)
NO_LDS_128x32 = Schedule(block_m=128, block_n=32, block_k=32, waves_m=1, waves_n=1, lds="none", buffers=1,
                         load_bits=128)
DEFAULT_LIKE = Schedule(block_m=128, block_n=256, block_k=32, waves_m=2, waves_n=4, lds="ab", buffers=2,
                        lds_pad=8, load_bits=128)


def test_lines_count_distinct_128_byte_lines():
    assert l0_lines._lines([(4 * i, 4) for i in range(32)], 128) == 1            # a coalesced wave32 dword load
    assert l0_lines._lines([(8192 * (i % 16), 16) for i in range(32)], 128) == 16  # 16 rows, lanes 16-31 repeat them
    assert l0_lines._lines([(120, 16)], 128) == 2                                # a range across a line boundary


def test_direct_fragment_loads_gfx11_nn():
    """128x32 one wave, no LDS, NN f16 on gfx11: per K tile of 32, A = 8 fragments x 2 K steps x 2 b128 loads
    of 16 rows (16 lines each), B = 2 fragments x 2 K steps x 16 b16 loads of one 32-byte row piece (1 line)."""
    ops, period = l0_lines.loads(GemmDirective("f16"), NO_LDS_128x32, "gfx11", 16, P4096, 128)
    a = [n for bits, n in ops if bits == 128]
    b = [n for bits, n in ops if bits == 16]
    assert len(a) == 32 * period and set(a) == {16}
    assert len(b) == 64 * period and set(b) == {1}
    r = l0_lines.extra_clocks(GemmDirective("f16"), NO_LDS_128x32, get_target("gfx1100"), P4096, params_for("gfx1100"))
    # vmem_clocks charges each load max(4, 32 lanes x bytes / 128 B per clock) = 4; by lines an A load is 16
    assert r["charged"] == pytest.approx(96 * 4) and r["by_lines"] == pytest.approx(32 * 16 + 64 * 4)
    assert r["extra"] == pytest.approx(32 * 12)


def test_gfx12_half_waves_read_the_other_k_half_of_the_same_rows():
    """gfx12 lanes 16-31 hold K 8-15 of the rows lanes 0-15 hold: a K-contiguous fragment load still touches
    16 lines (both halves of a 32-byte row piece share its line); a strided one touches 2 rows."""
    ops, _ = l0_lines.loads(GemmDirective("f16"), NO_LDS_128x32, "gfx12", 16, P4096, 128)
    assert {n for bits, n in ops if bits == 128} == {16}
    assert {n for bits, n in ops if bits == 16} == {2}


def test_the_line_count_scales_with_the_l0_rate():
    """The extra clocks are lines x 128 / l0_bytes_per_clk: doubling the (assumed) rate halves a 16-line load."""
    d, t, p = GemmDirective("f16"), get_target("gfx1100"), params_for("gfx1100")
    base = l0_lines.extra_clocks(d, NO_LDS_128x32, t, P4096, p)
    fast = l0_lines.extra_clocks(d, NO_LDS_128x32, t, P4096, p.__class__(**{**p.to_dict(), "l0_bytes_per_clk": 256}))
    assert fast["extra"] == pytest.approx(32 * (8 - 4)) and base["extra"] > fast["extra"]


def test_staged_loads_use_the_kernels_thread_order():
    """The default's staged A tile (128 rows x 32 K f16, 64-byte row pieces, 256 threads): each thread loads
    two chunks along one row, so a wave's 32 lanes span 16 rows -> 16 lines per b128 load."""
    ops, period = l0_lines.loads(GemmDirective("f16"), DEFAULT_LIKE, "gfx11", 16, P4096, 128)
    a_loads = 2 * 8 * period   # 2 per wave, 8 waves, per K tile
    assert [n for _, n in ops[:a_loads // period]] == [16] * (a_loads // period)


@pytest.mark.parametrize("rows,cols,w,threads,g", [(128, 32, 8, 256, 1), (32, 256, 8, 256, 1), (32, 32, 8, 32, 1),
                                                    (32, 128, 8, 256, 2), (64, 64, 8, 128, 1), (16, 64, 8, 256, 1)])
def test_group_index_covers_each_chunk_once(rows, cols, w, threads, g):
    """The integer order the model counts is a partition of the tile (surplus threads repeat the last group)."""
    groups = rows * cols // (w * g)
    per_thread = -(-groups // threads)
    seen = {}
    for tid in range(threads):
        for i in range(per_thread):
            r, c, dc = group_index(cols, w, g, threads, groups, per_thread, tid, i, IntOps)
            for e in range(g):
                seen[(r + e, c + dc)] = seen.get((r + e, c + dc), 0) + 1
    assert set(seen) == {(r, c) for r in range(rows) for c in range(0, cols, w)}
    if per_thread * threads == groups:
        assert set(seen.values()) == {1}


def test_tile_shape_helpers():
    assert chunk_width(16, 8, 128, 16) == 8 and chunk_width(16, 2, 128, 16) == 2 and chunk_width(3, 8, 128, 16) == 1
    assert row_group(False, 32, 128, 8, 256, 16, 32) == 1
    assert row_group(True, 32, 128, 8, 128, 16, 32) == 2   # 512 chunks, 128 threads: pairs of k rows
