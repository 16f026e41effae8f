"""The real HipDevice through the real hip-python bindings, against the emulator-backed
libamdhip64.so of tests/hipstub: the Device contract, both launch forms, gemm() vs numpy,
and where the numbers are said to come from."""
import ctypes
import struct

import numpy as np
import pytest
from hip_helpers import BLOCK, GRID, compile_axpy

from wmma_gen.device import Timing
from wmma_gen.device.kernargs import pack_kernargs
from wmma_gen.errors import DeviceError


def _upload(dev, *arrays):
    bufs = []
    for a in arrays:
        buf = dev.alloc(a.nbytes)
        dev.copy_in(buf, a)
        bufs.append(buf)
    return bufs


def test_device_reports_the_stub_gpu(hip_dev):
    assert hip_dev.arch == "gfx1100" and "[emulator-backed]" in hip_dev.device_name
    assert hip_dev.source == "emulator"


def test_alloc_copy_roundtrip_and_misuse(hip_dev, stub):
    x = np.arange(1000, dtype=np.float32)
    buf = hip_dev.alloc(x.nbytes)
    assert hip_dev.copy_out(buf) == bytes(x.nbytes)          # zeroed, though hipMalloc poisons
    hip_dev.copy_in(buf, x)
    hip_dev.sync()
    assert np.array_equal(np.frombuffer(hip_dev.copy_out(buf), np.float32), x)
    hip_dev.copy_in(buf, b"\x01\x02")
    assert hip_dev.copy_out(buf, 4) == b"\x01\x02" + x[:1].tobytes()[2:]
    with pytest.raises(DeviceError, match="holds 4000"):
        hip_dev.copy_in(buf, bytes(4001))
    hip_dev.free(buf)
    assert stub.allocs == {}                                   # hipFree reached the runtime
    with pytest.raises(DeviceError, match="not a live allocation"):
        hip_dev.copy_out(buf)


def test_launch_extra_form_runs_the_kernel_and_is_not_gpu_time(hip_dev, stub, axpy):
    x, y = np.arange(64, dtype=np.float32), np.full(64, 1.5, np.float32)
    bx, by = _upload(hip_dev, x, y)
    t = hip_dev.launch(axpy, GRID, BLOCK, [bx, by, 2.0])
    hip_dev.sync()
    assert np.array_equal(np.frombuffer(hip_dev.copy_out(by), np.float32), 2.0 * x + y)
    rec = stub.launches[-1]
    assert (rec.kernel, rec.form, rec.grid, rec.block) == ("axpy", "extra", GRID, BLOCK)
    assert rec.explicit == (bx.addr, by.addr, struct.unpack("<I", struct.pack("<f", 2.0))[0])
    assert rec.kernarg == pack_kernargs(axpy.metadata, [bx.addr, by.addr, 2.0], GRID, BLOCK)
    assert isinstance(t, Timing) and t.source == "emulator" and not t.is_gpu_time
    assert "not a measurement" in t.note
    assert t.seconds == pytest.approx(rec.fake_ms / 1e3)        # the fake clock, labelled as such


def test_kernel_params_form_through_the_bindings(hip_dev, stub, axpy):
    from hip import hip
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    bx, by = _upload(hip_dev, x, y)
    fn = hip_dev.function(axpy)
    values = [ctypes.c_uint64(bx.addr), ctypes.c_uint64(by.addr), ctypes.c_float(-1.0)]
    params = [ctypes.addressof(v) for v in values]
    err, = hip.hipModuleLaunchKernel(fn, *GRID, *BLOCK, 0, None, params, None)
    assert err == hip.hipError_t.hipSuccess
    assert np.array_equal(np.frombuffer(hip_dev.copy_out(by), np.float32), -x)
    rec = stub.launches[-1]
    assert rec.form == "kernelParams"
    assert rec.kernarg == pack_kernargs(axpy.metadata, [bx.addr, by.addr, -1.0], GRID, BLOCK)
    size = ctypes.c_size_t(len(rec.kernarg))
    raw = ctypes.create_string_buffer(rec.kernarg, len(rec.kernarg))
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(raw), 2, ctypes.addressof(size), 3)
    err, = hip.hipModuleLaunchKernel(fn, *GRID, *BLOCK, 0, None, params, ctypes.addressof(extra))
    assert err == hip.hipError_t.hipErrorInvalidValue              # exactly one of the two forms


def test_gemm_through_hip_device_matches_numpy(hip_dev, stub):
    import wmma_gen
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 32)).astype(np.float16)
    out = wmma_gen.gemm(a, b, arch=hip_dev.arch, device=hip_dev)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f16 products are exact in f32; f32 accumulation of 32 terms of size <= 1 errs < 32 * 2^-24
    assert out.shape == (32, 32) and np.abs(out - ref).max() <= 32 * 2.0 ** -24 * 32
    assert stub.launches and stub.calls["hipModuleLoadData"] == 1    # the gemm kernel ran on the stub


def test_any_code_object_runs_from_its_machine_code(hip_dev, stub):
    """A code object nobody told the stub about (uncached, unregistered) still runs: the stub
    decodes the image handed to hipModuleLoadData, so the bytes HIP gets are the bytes that run."""
    other = compile_axpy(cache=False, name="axpy_uncached")
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    bufs = _upload(hip_dev, x, y)
    assert hip_dev.launch(other, GRID, BLOCK, bufs + [2.0]).source == "emulator"
    assert stub.calls["hipModuleLoadData"] >= 1
    out = np.frombuffer(hip_dev.copy_out(bufs[1], 64 * 4), np.float32)
    np.testing.assert_array_equal(out, 2.0 * x + y)   # exact: small integers in f32


def test_auto_never_picks_the_stub_but_hip_does(stub, monkeypatch):
    from wmma_gen.device import select
    from wmma_gen.device.hip import real_gpu_visible, visible_gpus
    monkeypatch.setattr(select, "_shared", {})
    assert visible_gpus() == (["gfx1100"], "") and not real_gpu_visible()
    assert select.get_device("auto").name == "emu"
    dev = select.get_device("hip")
    try:
        assert dev.name == "hip" and dev.source == "emulator"
    finally:
        dev.close()


def test_without_a_c_compiler_the_stub_says_why(monkeypatch):
    import hipstub.bind as bind
    monkeypatch.setattr(bind.shutil, "which", lambda name: None)
    monkeypatch.setattr(bind.importlib.util, "find_spec", lambda name: None)
    assert bind.find_c_compiler() == (None, "no C compiler found (cc, gcc, clang on PATH, or the ziglang package)")
