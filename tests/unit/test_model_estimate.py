"""wmma_gen.ops.gemm.model (GEMM estimate on the shared model/estimate.py types): invariants on synthetic loops (no compiler).

Each invariant could fail: the estimate is built from independent terms (VALU pipe, LDS,
VMEM path, L2, DRAM, rounds), and these tests pin how they must combine."""
import itertools

import pytest
from model_synth import loop

from wmma_gen.model.estimate import LIMITERS, Estimate, Resources
from wmma_gen.ops.gemm.model import estimate_from
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target, known_product_archs

S128 = Schedule(block_m=128, block_n=128, block_k=32, lds="ab", buffers=2, lds_pad=8)
RES = Resources(vgprs=128, lds_bytes=S128.lds_bytes(GemmDirective("f16")), threads=128)


def wmma_name(arch, dtype):
    t = get_target(arch)
    return t.instr(dtype, "i32" if dtype in ("i8", "i4") else "f32").mnemonic


def lds_loop(arch, dtype="f16", **kw):
    """A loop with the 32 WMMAs that S128 implies per wave (2x2 waves, 4x4 fragments, BK=32)."""
    k = get_target(arch).instr(dtype, "i32" if dtype in ("i8", "i4") else "f32").k
    args = dict(wmma=16 * 32 // k, valu=30, loads={128: 8}, ds_reads={128: 16}, ds_writes={128: 8},
                arch_wmma=wmma_name(arch, dtype))
    args.update(kw)
    return loop(**args)


CASES = [(arch, dt, n) for arch in sorted(known_product_archs()) for dt in ("f16", "i8") for n in (256, 1024, 4096)]


@pytest.mark.parametrize("arch,dtype,n", CASES)
def test_never_above_peak_or_roofline(arch, dtype, n):
    t = get_target(arch)
    d, p = GemmDirective(dtype), GemmProblem(n, n, n)
    for L in (lds_loop(arch, dtype), lds_loop(arch, dtype, valu=0, loads={}, ds_reads={}, ds_writes={})):
        e = estimate_from(L, RES, d, S128, t, p)
        assert e.source == "model" and e.limiter in LIMITERS
        assert 0 < e.tflops <= t.peak_tflops(dtype) + 1e-9
        assert e.tflops <= e.figures["traffic"]["roofline_tflops"] + 1e-9
        assert e.fraction_of_peak == pytest.approx(e.tflops / t.peak_tflops(dtype))


@pytest.mark.parametrize("arch", sorted(known_product_archs()))
def test_more_spills_never_faster(arch):
    d, p = GemmDirective("f16"), GemmProblem(2048, 2048, 2048)
    L = lds_loop(arch)
    times = [estimate_from(L, Resources(128, RES.lds_bytes, 128, vgpr_spills=sp), d, S128, arch, p).seconds
             for sp in (0, 4, 32, 256)]
    assert times == sorted(times)
    # spill code inside the loop (scratch loads) costs every iteration
    assert estimate_from(lds_loop(arch, scratch=8), RES, d, S128, arch, p).seconds >= times[0]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_spills_strictly_slower_when_compute_bound(arch):
    d, p = GemmDirective("f16"), GemmProblem(2048, 2048, 2048)
    assert estimate_from(lds_loop(arch), RES, d, S128, arch, p).limiter != "global_memory"
    base = estimate_from(lds_loop(arch), RES, d, S128, arch, p).seconds
    assert estimate_from(lds_loop(arch), Resources(128, RES.lds_bytes, 128, vgpr_spills=256), d, S128, arch, p).seconds > base
    # scratch reloads waited for at once, with one workgroup per CU: latency shows
    few = Resources(250, RES.lds_bytes, 128)
    assert estimate_from(lds_loop(arch, scratch=8, wait_after_loads=True), few, d, S128, arch, p).seconds > \
        estimate_from(lds_loop(arch, wait_after_loads=True), few, d, S128, arch, p).seconds


@pytest.mark.parametrize("arch,n", itertools.product(sorted(known_product_archs()), (512, 2048, 8192)))
def test_fewer_waves_never_faster(arch, n):
    d, p = GemmDirective("f16"), GemmProblem(n, n, n)
    L = lds_loop(arch)
    s = Schedule(block_m=128, block_n=128, block_k=32)  # no LDS: occupancy set by VGPRs alone
    prev_t, prev_w = 0.0, 99
    for v in range(24, 257, 8):
        e = estimate_from(L, Resources(v, 0, 128), d, s, arch, p)
        w = e.figures["occupancy"]["waves_per_simd"]
        assert w <= prev_w and e.seconds >= prev_t * (1 - 1e-12)
        prev_t, prev_w = e.seconds, w


def test_latency_limited_when_loads_are_waited_at_once_with_few_waves():
    d, p = GemmDirective("f16"), GemmProblem(4096, 4096, 4096)
    serial = lds_loop("gfx1100", wait_after_loads=True)
    few = estimate_from(serial, Resources(250, RES.lds_bytes, 128), d, S128, "gfx1100", p)
    assert few.limiter == "latency"
    assert few.seconds > estimate_from(lds_loop("gfx1100"), Resources(250, RES.lds_bytes, 128), d, S128, "gfx1100", p).seconds


@pytest.mark.parametrize("arch", ["gfx1150", "gfx1151", "gfx1102", "gfx1201"])
def test_more_global_bytes_not_faster_when_memory_bound(arch):
    # a direct-load schedule with 16x16 tiles moves 8 bytes per flop pair: memory-bound
    s = Schedule(block_m=16, block_n=16, block_k=32, waves_m=1, waves_n=1)
    d, p = GemmDirective("f16"), GemmProblem(4096, 4096, 4096)
    base_loop = loop(wmma=2, valu=8, loads={128: 4}, arch_wmma=wmma_name(arch, "f16"))
    base = estimate_from(base_loop, Resources(64, 0, 32), d, s, arch, p)
    assert base.limiter == "global_memory"
    # same work, strictly more bytes: C read back (beta), wider/more loads in the loop
    more_c = estimate_from(base_loop, Resources(64, 0, 32), GemmDirective("f16", beta=1.0), s, arch, p)
    more_l = estimate_from(loop(wmma=2, valu=8, loads={128: 8}, arch_wmma=wmma_name(arch, "f16")),
                           Resources(64, 0, 32), d, s, arch, p)
    assert more_c.seconds >= base.seconds and more_l.seconds >= base.seconds
    assert more_c.figures["traffic"]["dram_bytes"] > base.figures["traffic"]["dram_bytes"]


@pytest.mark.parametrize("arch", sorted(known_product_archs()))
def test_doubling_m_and_n_quadruples_time_at_large_sizes(arch):
    L, s = lds_loop(arch), S128.replace(raster="grouped", group_m=8)
    t1 = estimate_from(L, RES, GemmDirective("f16"), s, arch, GemmProblem(4096, 4096, 4096)).seconds
    t2 = estimate_from(L, RES, GemmDirective("f16"), s, arch, GemmProblem(8192, 8192, 4096)).seconds
    assert 3.6 <= t2 / t1 <= 4.4


def test_tail_when_last_round_is_mostly_empty():
    # 97 workgroups of one per CU on 96 CUs: the second round runs one workgroup
    s = Schedule(block_m=128, block_n=128, block_k=32)
    d, p = GemmDirective("f16"), GemmProblem(128, 128 * 97, 8192)
    e = estimate_from(lds_loop("gfx1100"), Resources(250, 60000, 128), d, s, "gfx1100", p)
    assert e.figures["rounds"] == 2 and e.limiter == "tail"


def test_deterministic_and_labelled():
    d, p = GemmDirective("f16"), GemmProblem(1024, 1024, 1024)
    a = estimate_from(lds_loop("gfx1201"), RES, d, S128, "gfx1201", p)
    b = estimate_from(lds_loop("gfx1201"), RES, d, S128, "gfx1201", p)
    assert a == b and a.figures == b.figures
    with pytest.raises(ValueError):
        Estimate(1.0, 1.0, 0.1, "wmma_issue", {}, source="hip")
    with pytest.raises(ValueError):
        Estimate(1.0, 1.0, 0.1, "magic", {})
