"""One suite for every Device (STYLE rule 12): the emulator always, HIP when a GPU is visible."""
import numpy as np
import pytest

from wmma_gen.device import EmuDevice, Timing, get_device, hip_status
from wmma_gen.errors import DeviceError, ScheduleError
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

HIP_OK, HIP_REASON = hip_status()
DEVICES = ["emu", pytest.param("hip", marks=pytest.mark.skipif(not HIP_OK, reason=f"no GPU: {HIP_REASON}"))]


def _arch(dev):
    return getattr(dev, "arch", "gfx1100")


@pytest.fixture(params=DEVICES)
def dev(request):
    d = EmuDevice() if request.param == "emu" else get_device("hip")
    yield d
    if request.param == "emu":
        d.close()


@pytest.fixture(scope="module")
def tiny_kernel_f16():
    d = GemmDirective("f16")
    return compile_gemm(d, Schedule(block_m=16, block_n=16, block_k=16, waves_m=1, waves_n=1), "gfx1100",
                        GemmProblem(16, 16, 16))


def test_copy_roundtrip(dev):
    x = np.arange(1000, dtype=np.float32)
    buf = dev.alloc(x.nbytes)
    dev.copy_in(buf, x)
    dev.sync()
    assert np.array_equal(np.frombuffer(dev.copy_out(buf), np.float32), x)
    assert dev.copy_out(buf, 8) == x[:2].tobytes()
    dev.copy_in(buf, b"\x01\x02")
    assert dev.copy_out(buf, 4) == b"\x01\x02" + x[:1].tobytes()[2:]
    dev.free(buf)


def test_buffer_misuse_is_loud(dev):
    buf = dev.alloc(16)
    with pytest.raises(DeviceError, match="holds 16"):
        dev.copy_in(buf, bytes(17))
    with pytest.raises(DeviceError, match="0..16"):
        dev.copy_out(buf, 32)
    dev.free(buf)
    with pytest.raises(DeviceError, match="not a live allocation"):
        dev.copy_out(buf)
    other = EmuDevice()
    foreign = other.alloc(16)
    with pytest.raises(DeviceError, match="not a live allocation"):
        dev.copy_in(foreign, b"x")
    with pytest.raises(DeviceError, match="an integer >= 0"):
        dev.alloc(-1)


def test_launch_runs_the_kernel_and_reports_its_source(dev):
    d = GemmDirective("f16")
    k = compile_gemm(d, Schedule(block_m=16, block_n=16, block_k=16, waves_m=1, waves_n=1), _arch(dev),
                     GemmProblem(16, 16, 16))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    bufs = [dev.alloc(a.nbytes), dev.alloc(b.nbytes), dev.alloc(16 * 16 * 4)]
    dev.copy_in(bufs[0], a)
    dev.copy_in(bufs[1], b)
    t = dev.launch(k.compiled, k.grid, k.block, bufs + k.scalars())
    dev.sync()
    c = np.frombuffer(dev.copy_out(bufs[2]), np.float32).reshape(16, 16)
    assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() < 1e-5
    assert isinstance(t, Timing) and t.seconds >= 0
    assert t.source == {"emu": "emulator", "hip": "hip"}[dev.name]
    assert t.is_gpu_time == (dev.name == "hip")
    for buf in bufs:
        dev.free(buf)


def test_launch_checks_args_and_block(dev, tiny_kernel_f16):
    k = tiny_kernel_f16
    bufs = [dev.alloc(512), dev.alloc(512), dev.alloc(1024)]
    if _arch(dev) == k.compiled.arch:
        with pytest.raises(DeviceError, match="count=2 is not allowed.*takes 13"):
            dev.launch(k.compiled, k.grid, k.block, bufs[:2])
        with pytest.raises(DeviceError, match="reqd_workgroup_size"):
            dev.launch(k.compiled, k.grid, (16, 1, 1), bufs + k.scalars())
        with pytest.raises(DeviceError, match="Buffer or a device address"):
            dev.launch(k.compiled, k.grid, k.block, bufs[:2] + [1.0] + k.scalars())


def test_emulator_timing_says_it_is_not_gpu_time(tiny_kernel_f16):
    dev = EmuDevice()
    k = tiny_kernel_f16
    bufs = [dev.alloc(512), dev.alloc(512), dev.alloc(1024)]
    t = dev.launch(k.compiled, k.grid, k.block, bufs + k.scalars())
    assert t.source == "emulator" and "not GPU time" in t.note
    assert t.wave_instructions > 0 and t.waves == 1 and t.workgroups == 1
    assert dev.program(k.compiled) is dev.program(k.compiled)        # cached per compiled.key


def test_emulator_runs_gfx12_code_and_refuses_other_families(monkeypatch):
    k = compile_gemm(GemmDirective("f16"), Schedule(block_m=16, block_n=16, block_k=16, waves_m=1, waves_n=1),
                     "gfx1201", GemmProblem(16, 16, 16))
    dev = EmuDevice()
    bufs = [dev.alloc(512), dev.alloc(512), dev.alloc(1024)]
    assert dev.launch(k.compiled, k.grid, k.block, bufs + k.scalars()).source == "emulator"
    import wmma_gen.device.emu as emu_dev
    monkeypatch.setattr(emu_dev, "EMU_FAMILIES", ("gfx11",))   # a family the emulator lacks
    with pytest.raises(DeviceError, match="gfx1201 \\(gfx12\\) is not allowed"):
        dev.launch(k.compiled, k.grid, k.block, bufs + k.scalars())


def test_timing_source_is_checked():
    with pytest.raises(ValueError, match="source"):
        Timing(1.0, "model")


def test_get_device_selection():
    with pytest.raises(ScheduleError, match="one of auto, emu, hip, cuda"):
        get_device("rocm")
    assert get_device("emu") is get_device("emu")
    if HIP_OK:
        assert get_device("auto").name == "hip"
        assert get_device("cuda") is get_device("hip")      # ROCm torch's name for an AMD GPU
    else:
        assert get_device("auto").name == "emu"
        for kind in ("hip", "cuda"):
            with pytest.raises(DeviceError, match="device=hip is not available"):
                get_device(kind)
