"""APU semantics of the emulator-backed HIP stand-in (issue 23): host addresses (numpy arrays,
torch CPU tensors) passed as kernel pointers through the real hip-python bindings and the real
HipDevice run zero-copy, with no hipMalloc/hipMemcpy; a pointer in no host mapping is refused;
an overrun past a host mapping is an emulator fault, not a crash; execute=False records only."""
import ctypes
import mmap

import numpy as np
import pytest
from hip_helpers import BLOCK, GRID

from wmma_gen.errors import DeviceError

MEMORY_CALLS = ("hipMalloc", "hipFree", "hipMemcpy", "hipMemcpyAsync", "hipMemset")


def _calls_during(stub, fn):
    before = dict(stub.calls)
    fn()
    return {k: v - before.get(k, 0) for k, v in stub.calls.items() if v - before.get(k, 0)}


def test_numpy_pointers_as_device_pointers_no_alloc_no_copy(hip_dev, stub, axpy):
    x, y = np.arange(64, dtype=np.float32), np.full(64, 1.5, np.float32)
    hip_dev.function(axpy)                                   # load the module outside the measured call
    calls = _calls_during(stub, lambda: hip_dev.launch(axpy, GRID, BLOCK, [x.ctypes.data, y.ctypes.data, 2.0]))
    hip_dev.sync()
    np.testing.assert_array_equal(y, 2.0 * np.arange(64, dtype=np.float32) + 1.5)   # exact: small integers
    assert not set(calls) & set(MEMORY_CALLS), calls
    assert calls["hipModuleLaunchKernel"] == 1 and not stub.allocs
    rec = stub.launches[-1]
    assert rec.executed and rec.explicit[:2] == (x.ctypes.data, y.ctypes.data)
    assert all(any(lo <= p < hi for lo, hi in rec.host) for p in rec.explicit[:2])
    assert not stub.mem._maps                                 # mapped for the launch only


def test_torch_cpu_tensors_on_the_callers_stream(hip_dev, stub, axpy):
    torch = pytest.importorskip("torch")
    x, y = torch.arange(64, dtype=torch.float32), torch.ones(64)
    err, stream = hip_dev.hip.hipStreamCreate()
    hip_dev.function(axpy)
    spans = [(t.data_ptr(), t.data_ptr() + t.numel() * 4) for t in (x, y)]
    calls = _calls_during(stub, lambda: hip_dev.enqueue(axpy, GRID, BLOCK, [x.data_ptr(), y.data_ptr(), -1.0],
                                                        stream=stream, host_spans=spans))
    assert calls == {"hipModuleLaunchKernel": 1}, calls       # no alloc, copy, event or sync
    assert stub.launches[-1].stream == int(stream)
    assert torch.equal(y, 1 - torch.arange(64, dtype=torch.float32))
    hip_dev.hip.hipStreamDestroy(stream)


def test_hip_malloc_memory_keeps_working_beside_host_pointers(hip_dev, stub, axpy):
    x = np.arange(64, dtype=np.float32)
    by = hip_dev.alloc(256)
    hip_dev.copy_in(by, np.ones(64, np.float32))
    hip_dev.launch(axpy, GRID, BLOCK, [x.ctypes.data, by, 3.0])
    got = np.frombuffer(hip_dev.copy_out(by), np.float32)
    np.testing.assert_array_equal(got, 3.0 * x + 1)
    host = stub.launches[-1].host
    assert len(host) == 1 and host[0][0] <= x.ctypes.data < host[0][1]   # only the host pointer is mapped
    assert stub.mem.owner(by.addr) == by.addr


def test_a_pointer_in_no_host_mapping_is_refused_before_running(hip_dev, stub, axpy):
    y = np.zeros(64, np.float32)
    wild = 0x10                                               # below every mapping (vm.mmap_min_addr)
    n = len(stub.launches)
    with pytest.raises(DeviceError, match=r"hipModuleLaunchKernel\(axpy\) failed: hipErrorInvalidValue \(1\)"):
        hip_dev.launch(axpy, GRID, BLOCK, [wild, y.ctypes.data, 1.0])
    assert "kernel axpy argument 0" in stub.last_reason and "0x10 is not allowed" in stub.last_reason
    assert "readable+writable host mapping" in stub.last_reason
    assert len(stub.launches) == n and not stub.faults and not y.any()


@pytest.fixture
def fenced_page():
    """One rw page between two PROT_NONE pages: a host mapping whose end is known exactly."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                              ctypes.c_int, ctypes.c_int, ctypes.c_long)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    page = mmap.PAGESIZE
    base = libc.mmap(None, 3 * page, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    assert base not in (None, ctypes.c_void_p(-1).value)
    assert libc.mprotect(base + page, page, mmap.PROT_READ | mmap.PROT_WRITE) == 0
    yield base + page, page
    libc.munmap(base, 3 * page)


def test_an_overrun_past_a_host_mapping_faults_in_the_emulator(hip_dev, stub, axpy, fenced_page):
    lo, size = fenced_page
    x = lo + size - 16                                        # 4 floats left before the PROT_NONE page
    y = np.zeros(64, np.float32)
    with pytest.raises(DeviceError, match=r"hipErrorLaunchFailure \(719\)"):
        hip_dev.launch(axpy, GRID, BLOCK, [x, y.ctypes.data, 1.0])
    assert len(stub.faults) == 1
    assert "outside every allocation and mapped host region" in stub.faults[0]
    assert f"lane=4, address={lo + size:#x}" in stub.faults[0]
    assert (lo, lo + size) in stub.launches[-1].host and not y.any()


def test_execute_false_records_the_launch_without_running_it(hip_dev, stub, axpy):
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    stub.execute = False
    hip_dev.launch(axpy, GRID, BLOCK, [x.ctypes.data, y.ctypes.data, 2.0])
    hip_dev.launch(axpy, GRID, BLOCK, [0x10, y.ctypes.data, 2.0])   # not resolved either
    hip_dev.sync()
    assert not y.any() and [r.executed for r in stub.launches] == [False, False]
    assert stub.launches[-1].host == () and stub.calls["hipModuleLaunchKernel"] == 2
    assert stub.host_maps.reads == 0
    stub.execute = True
    hip_dev.launch(axpy, GRID, BLOCK, [x.ctypes.data, y.ctypes.data, 2.0])
    np.testing.assert_array_equal(y, 2.0 * x)


def test_both_lookups_of_host_mappings_agree(hip_dev, stub, axpy, fenced_page):
    """PROCMAP_QUERY (Linux >= 6.11) and the /proc/self/maps text give the same rw mapping."""
    from hipstub.host_maps import HostMappings
    text = HostMappings()
    text._ioctl = False                                       # the fallback, as on older kernels
    x, big = np.zeros(16), np.zeros(1 << 18)
    lo, size = fenced_page
    for p in (x.ctypes.data, big.ctypes.data + 8, lo, lo + size - 1):
        assert stub.host_maps.find(p) == text.find(p)
    assert text.find(lo) == (lo, lo + size) and text.find(0x10) is None and text.find(lo + size) is None
    stub.host_maps._ioctl = False                             # a launch through the fallback
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    hip_dev.launch(axpy, GRID, BLOCK, [x.ctypes.data, y.ctypes.data, 1.0])
    assert stub.host_maps.reads >= 1
    np.testing.assert_array_equal(y, x + 1)
