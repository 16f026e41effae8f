"""HipDevice on a real GPU (skipped, with the reason, where no GPU is visible)."""
import numpy as np
import pytest

from wmma_gen.device import hip_status

HIP_OK, HIP_REASON = hip_status()
pytestmark = [pytest.mark.hip, pytest.mark.skipif(not HIP_OK, reason=f"no GPU visible: {HIP_REASON}")]


@pytest.fixture(scope="module")
def dev():
    from wmma_gen.device import get_device
    return get_device("hip")


def test_gemm_on_gpu_matches_numpy(dev):
    import wmma_gen
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (256, 128)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, 192)).astype(np.float16)
    out = wmma_gen.gemm(a, b, arch=dev.arch, device=dev)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(out - ref).max() <= 1e-4 * np.abs(ref).max()


def test_check_gate_times_on_the_gpu(dev):
    from wmma_gen.ops.gemm import default_schedule
    from wmma_gen.ops.gemm.check import check_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    d, p = GemmDirective("i8"), GemmProblem(128, 128, 128)
    r = check_gemm(d, default_schedule(d, dev.arch, p), dev.arch, p, dev)
    assert r.passed and r.max_abs == 0 and r.source == "hip" and r.seconds > 0


def test_kernel_for_another_arch_is_refused(dev):
    from wmma_gen.errors import DeviceError
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.ops.gemm.schedule import Schedule
    other = "gfx1201" if dev.arch != "gfx1201" else "gfx1100"
    k = compile_gemm(GemmDirective("f16"), Schedule(block_m=16, block_n=16, block_k=16, waves_m=1, waves_n=1),
                     other, GemmProblem(16, 16, 16))
    with pytest.raises(DeviceError, match="arch"):
        dev.launch(k.compiled, k.grid, k.block, [dev.alloc(512), dev.alloc(512), dev.alloc(1024)] + k.scalars())
