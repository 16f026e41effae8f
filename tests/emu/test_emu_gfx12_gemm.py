"""Every gfx12 (RDNA4) dtype/acc x layouts x edge shapes x schedules: the kernel compiled for
gfx1201 / gfx1200, run on the emulator, matches the numpy reference (integers exactly,
floats within check.tolerance)."""
import pytest

from wmma_gen.ops.gemm import fit_schedule
from wmma_gen.ops.gemm.check import check_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

GFX12 = [("f16", "f32", False), ("bf16", "f32", False), ("f16", "f16", False), ("bf16", "bf16", False),
         ("fp8", "f32", False), ("bf8", "f32", False), ("i8", "i32", False), ("i8", "i32", True),
         ("i4", "i32", False), ("i4", "i32", True)]
IDS = [f"{d}-{a}{'-u' if u else ''}" for d, a, u in GFX12]
LAYOUTS = ("NN", "NT", "TN", "TT")


def _check(d: GemmDirective, p: GemmProblem, arch: str, s: Schedule | None = None):
    r = check_gemm(d, s or fit_schedule(d, arch, p), arch, p, "emu")
    assert r.source == "emulator"
    assert r.passed, r
    if d.is_int:
        assert r.max_abs == 0.0
    return r


@pytest.mark.parametrize("dtype, acc, unsigned", GFX12, ids=IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gfx1201_every_dtype_and_layout_on_edge_tiles(dtype, acc, unsigned, layout):
    _check(GemmDirective(dtype, acc=acc, layout=layout, unsigned=unsigned), GemmProblem(48, 40, 72), "gfx1201")


@pytest.mark.parametrize("dtype, acc, unsigned", GFX12, ids=IDS)
def test_gfx1200_every_dtype(dtype, acc, unsigned):
    _check(GemmDirective(dtype, acc=acc, layout="TN", unsigned=unsigned), GemmProblem(34, 18, 46), "gfx1200")


@pytest.mark.parametrize("arch, dtype, shape, layout", [
    ("gfx1201", "fp8", (16, 16, 16), "TT"), ("gfx1200", "bf8", (16, 16, 16), "NN"),
    ("gfx1201", "bf16", (64, 96, 128), "NT"), ("gfx1200", "i4", (64, 96, 128), "TN")])
def test_one_tile_and_several_workgroups(arch, dtype, shape, layout):
    _check(GemmDirective(dtype, layout=layout), GemmProblem(*shape), arch)


SCHEDULES = [
    ("f16", dict(lds="ab", buffers=2)), ("fp8", dict(lds="ab", buffers=2, k_unroll=2, load_bits=64)),
    ("bf8", dict(lds="a", lds_pad=8, raster="col")), ("i8", dict(lds="b", buffers=2)),
    ("bf16", dict(block_m=32, block_n=32, waves_m=1, waves_n=2, raster="grouped", group_m=2)),
    ("f16", dict(block_m=32, block_n=32, split_k=4, lds="ab", buffers=2)),
    ("fp8", dict(block_m=32, block_n=64, split_k=2)), ("i4", dict(block_m=32, block_n=32, block_k=16, split_k=8, lds="a")),
]


@pytest.mark.parametrize("arch", ["gfx1201", "gfx1200"])
@pytest.mark.parametrize("dtype, sched", SCHEDULES, ids=[f"{d}-{'-'.join(f'{k}{v}' for k, v in s.items())}"
                                                          for d, s in SCHEDULES])
def test_lds_double_buffer_and_split_k_schedules(arch, dtype, sched):
    _check(GemmDirective(dtype, layout="NT"), GemmProblem(78, 46, 202), arch, Schedule(**sched))


@pytest.mark.parametrize("dtype, kw", [
    ("f16", dict(out_dtype="f16", alpha=0.5, beta=-1.25, bias="n", activation="relu")),
    ("fp8", dict(beta=1.0, activation="relu", out_dtype="bf16", bias="m")),
    ("bf8", dict(alpha=2.0, bias="n", activation="silu")), ("bf16", dict(activation="gelu", batch=2)),
    ("f16", dict(acc="f16", beta=2.0, bias="m"))])
def test_fused_epilogues(dtype, kw):
    kw = dict(kw)
    batch = kw.pop("batch", 1)
    _check(GemmDirective(dtype, layout="NT", **kw), GemmProblem(40, 24, 48, batch), "gfx1201")


@pytest.mark.parametrize("layout", ["NT", "TN", "TT"])
def test_large_default_under_iterative_ilp_with_its_hazard_v_nop(layout):
    """gfx1201 16-bit f32-acc NT/TN/TT take iterative-ilp with the epilogue free to interleave
    with the last WMMAs (defaults.ILP_EXCEPT); LLVM then inserts a hazard v_nop, which the
    emulator must run: the kernel as compiled matches numpy."""
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.defaults import LARGE, sched_strategy
    from wmma_gen.targets import get_target
    d, p = GemmDirective("f16", acc="f32", layout=layout), GemmProblem(128, 256, 128)
    assert sched_strategy(d, LARGE, get_target("gfx1201")) == "iterative-ilp"
    k = compile_gemm(d, LARGE, "gfx1201", p)
    assert k.compiled.metadata.spills == 0
    _check(d, p, "gfx1201", LARGE)
