"""Split-K: partial sums reduced in a fixed order by the last workgroup of each tile."""
import numpy as np
import pytest

from wmma_gen.device.select import get_device
from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.check import check_gemm, random_operands
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target

CASES = [
    (GemmDirective("f16"), GemmProblem(64, 64, 256), Schedule(block_m=64, block_n=64, block_k=32, split_k=4)),
    (GemmDirective("f16", layout="TN", beta=0.5, bias="n", activation="silu"), GemmProblem(77, 45, 301),
     Schedule(block_m=32, block_n=32, block_k=32, split_k=4, lds="ab", buffers=2)),
    (GemmDirective("i8"), GemmProblem(40, 72, 200, batch=2),
     Schedule(block_m=32, block_n=64, block_k=64, split_k=2, lds="ab")),
    (GemmDirective("bf16", acc="bf16"), GemmProblem(33, 17, 500),
     Schedule(block_m=64, block_n=64, block_k=16, split_k=8, lds="a", buffers=2, k_unroll=2)),
]


@pytest.mark.parametrize("d,p,s", CASES, ids=[f"{d.dtype}-{p.m}x{p.n}x{p.k}-s{s.split_k}" for d, p, s in CASES])
def test_split_k_matches_numpy(d, p, s):
    r = check_gemm(d, s, "gfx1100", p, device="emu")
    assert r.passed, r


def test_grid_and_args():
    k = compile_gemm(GemmDirective("f16"), Schedule(block_m=32, block_n=32, split_k=4), "gfx1100",
                     GemmProblem(64, 64, 256))
    assert k.grid == (4, 4, 1)
    assert [a.name for a in k.signature.buffers][-2:] == ["workspace", "counters"]
    assert "global_atomic_add_u32" in k.compiled.isa


def test_counter_resets_so_relaunch_gives_identical_bits():
    """Two launches of one Prepared (same device buffers): the last workgroup of each tile
    resets its arrival counter, so the second launch sees zeros and gives the same bits."""
    from wmma_gen.device.launcher import Prepared
    d, p = GemmDirective("f16"), GemmProblem(32, 32, 512)
    k = compile_gemm(d, Schedule(block_m=32, block_n=32, block_k=32, waves_m=1, waves_n=1, split_k=8), "gfx1100", p)
    stored, _ = random_operands(d, p, seed=3)
    outs = []
    with Prepared(k.compiled, k.signature, k.sizes, get_device("emu"), stored) as run:
        for _ in range(2):
            run.launch()
            outs.append(run.read()["C"])
            assert not run.device.copy_out(run.bufs["counters"]).strip(b"\0")  # reset by the last workgroup
    assert outs[0].tobytes() == outs[1].tobytes()
    ref = stored["A"][0].astype(np.float64) @ stored["B"][0].astype(np.float64)
    assert np.abs(outs[0].reshape(32, 32) - ref).max() < 1e-3


def test_split_k_needs_enough_k_tiles():
    with pytest.raises(ScheduleError, match="check 'split_k_depth'"):
        Schedule(block_k=64, split_k=8).validate(GemmDirective("f16"), get_target("gfx1100"), GemmProblem(64, 64, 256))
