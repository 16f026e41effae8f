"""The WMMA-only loop kernel (the calibration's microbenchmark stand-in) computes what it claims
when its machine code runs on the emulator: every chain of every wave holds trips * (A @ B)."""
import numpy as np
import pytest

from wmma_gen import layouts
from wmma_gen.compiler import compile_mlir
from wmma_gen.emu.api import run_code_object
from wmma_gen.kernels.wmma_loop import operand_elems, out_elems, wmma_loop_mlir
from wmma_gen.targets import get_target


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_every_chain_accumulates_trips_times_a_at_b(arch):
    fam, chains, waves, trips = get_target(arch).family, 3, 2, 5
    n = operand_elems(arch)
    rng = np.random.default_rng(1)
    A = rng.integers(-4, 5, (16, 16)).astype(np.float16)       # small integers: every sum is exact
    B = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    a = np.zeros(32 * n, np.float16)
    b = np.zeros(32 * n, np.float16)
    for lane in range(32):
        for i in range(n):
            a[lane * n + i] = A[layouts.a_coord(fam, lane, i)]
            b[lane * n + i] = B[layouts.b_coord(fam, lane, i)]
    k = compile_mlir(wmma_loop_mlir(arch, "f16", chains=chains, waves=waves), arch)
    out = np.full(out_elems(chains, waves), np.nan, np.float32)
    res = run_code_object(k.hsaco, grid=(1, 1, 1), block=(32 * waves, 1, 1), args=[a, b, out, trips])
    want = trips * (A.astype(np.float64) @ B.astype(np.float64))
    got = res.buffers[2].reshape(waves, chains, 32, 8)
    for lane in range(32):
        for v in range(8):
            r, c = layouts.c_coord(fam, lane, v)
            assert (got[:, :, lane, v] == want[r, c]).all(), (lane, v)
