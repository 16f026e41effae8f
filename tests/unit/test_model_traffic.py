"""wmma_gen.ops.gemm.traffic: per-workgroup bytes, L2/DRAM totals, intensity and roofline."""
import pytest

from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.ops.gemm.traffic import traffic
from wmma_gen.targets import get_target

T = get_target("gfx1100")
L2 = 6 * 2**20


def test_per_workgroup_bytes_and_totals():
    d, s, p = GemmDirective("f16"), Schedule(block_m=128, block_n=64), GemmProblem(4096, 4096, 4096)
    tr = traffic(d, s, T, concurrent=192, l2_bytes=L2, problem=p)
    assert tr.workgroups == 32 * 64
    assert tr.bytes_per_workgroup == (128 + 64) * 4096 * 2 + 128 * 64 * 4
    assert tr.compulsory_bytes == 3 * 4096 * 4096 * 2 + 4096 * 4096 * 2  # A, B f16 + C f32
    assert tr.compulsory_bytes <= tr.dram_bytes <= tr.l2_bytes
    assert tr.arithmetic_intensity == pytest.approx(2 * p.m * p.n * p.k / tr.dram_bytes)
    assert tr.roofline_tflops <= T.peak_tflops("f16")


def test_bigger_tiles_and_more_concurrency_move_fewer_bytes():
    d, p = GemmDirective("f16"), GemmProblem(8192, 8192, 8192)
    small = traffic(d, Schedule(block_m=32, block_n=32, waves_m=1, waves_n=1), T, 96, L2, problem=p)
    big = traffic(d, Schedule(block_m=128, block_n=128), T, 96, L2, problem=p)
    assert big.l2_bytes < small.l2_bytes and big.dram_bytes < small.dram_bytes
    few = traffic(d, Schedule(), T, 24, L2, problem=p)
    many = traffic(d, Schedule(), T, 384, L2, problem=p)
    assert many.dram_bytes <= few.dram_bytes


def test_grouped_raster_reuses_rows():
    d, p = GemmDirective("f16"), GemmProblem(16384, 16384, 4096)
    row = traffic(d, Schedule(raster="row"), T, 192, L2, problem=p)
    grouped = traffic(d, Schedule(raster="grouped", group_m=8), T, 192, L2, problem=p)
    assert grouped.dram_bytes < row.dram_bytes


def test_beta_reads_c_and_small_operands_fit_l2():
    d, p = GemmDirective("f16"), GemmProblem(512, 512, 512)
    assert traffic(d.__class__("f16", beta=1.0), Schedule(), T, 64, L2, problem=p).dram_bytes > \
        traffic(d, Schedule(), T, 64, L2, problem=p).dram_bytes
    assert traffic(d, Schedule(), T, 64, L2, problem=p).dram_bytes == traffic(d, Schedule(), T, 64, L2, problem=p).compulsory_bytes
