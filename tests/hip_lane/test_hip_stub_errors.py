"""HIP errors become DeviceErrors naming the call, the hipError_t and HIP's error string; bad
input (another arch's code object, no hip-python) is refused before anything is launched."""
import dataclasses
import sys

import numpy as np
import pytest
from hip_helpers import BLOCK, GRID, compile_axpy

from wmma_gen.errors import DeviceError


def _bufs(dev, n=2):
    return [dev.alloc(256) for _ in range(n)]


def test_out_of_memory_from_the_runtime(hip_dev, stub):
    with pytest.raises(DeviceError, match=r"hipMalloc\(\d+\) failed: hipErrorOutOfMemory \(2\): out of memory$"):
        hip_dev.alloc(stub.memory_bytes + 1)


@pytest.mark.parametrize("call, error, text, action", [
    ("hipMalloc", "hipErrorOutOfMemory", "out of memory", "alloc"),
    ("hipMemcpyAsync", "hipErrorInvalidValue", "invalid argument", "copy_in"),
    ("hipModuleLoadData", "hipErrorInvalidImage", "device kernel image is invalid", "launch"),
    ("hipModuleLaunchKernel", "hipErrorLaunchFailure", "unspecified launch failure", "launch"),
    ("hipEventSynchronize", "hipErrorLaunchFailure", "unspecified launch failure", "launch"),
])
def test_injected_errors_name_the_call_and_the_hip_text(hip_dev, stub, axpy, call, error, text, action):
    bufs = _bufs(hip_dev)
    stub.fail(call, error)
    with pytest.raises(DeviceError) as info:
        if action == "alloc":
            hip_dev.alloc(64)
        elif action == "copy_in":
            hip_dev.copy_in(bufs[0], b"1234")
        else:
            hip_dev.launch(axpy, GRID, BLOCK, bufs + [1.0])
    msg = str(info.value)
    assert msg.startswith(call) and f"failed: {error} (" in msg and msg.endswith(text)
    hip_dev.launch(axpy, GRID, BLOCK, bufs + [1.0])        # the next attempt succeeds


def test_invalid_images_through_the_bindings(stub):
    from hip import hip
    for image in (b"not an ELF at all" * 8, b"\x7fELF\x02\x01\x01" + bytes(121)):
        err, module = hip.hipModuleLoadData(image)
        assert err == hip.hipError_t.hipErrorInvalidImage and module is None


def test_corrupt_code_object_reaches_hip_as_an_invalid_image(hip_dev, axpy):
    broken = dataclasses.replace(axpy, hsaco=b"\0" * 256, key=axpy.key + "-broken")
    with pytest.raises(DeviceError, match=r"hipModuleLoadData failed: hipErrorInvalidImage \(200\): "
                                          "device kernel image is invalid"):
        hip_dev.launch(broken, GRID, BLOCK, _bufs(hip_dev) + [1.0])


def test_a_kernel_fault_is_a_launch_failure_at_the_next_sync(hip_dev, stub, axpy):
    tiny, y = hip_dev.alloc(16), hip_dev.alloc(256)          # X holds 4 floats; the kernel reads 64
    with pytest.raises(DeviceError, match=r"^hipEventSynchronize failed: hipErrorLaunchFailure \(719\)"):
        hip_dev.launch(axpy, GRID, BLOCK, [tiny, y, 1.0])
    assert len(stub.faults) == 1 and "outside every allocation" in stub.faults[0]
    hip_dev.sync()                                           # reported once, like an async fault


def test_code_object_for_another_arch_is_refused_before_launch(hip_dev, stub):
    k1201 = compile_axpy("gfx1201")
    bufs = _bufs(hip_dev)
    with pytest.raises(DeviceError, match="arch=gfx1201 is not allowed on GPU 0: it is gfx1100"):
        hip_dev.launch(k1201, GRID, BLOCK, bufs + [1.0])
    mislabelled = dataclasses.replace(k1201, arch="gfx1100", key=k1201.key + "-mislabelled")
    with pytest.raises(DeviceError, match=r"EF_AMDGPU_MACH 0x4e, gfx1201\) is not allowed on GPU 0: it is gfx1100"):
        hip_dev.launch(mislabelled, GRID, BLOCK, bufs + [1.0])
    assert stub.calls["hipModuleLoadData"] == 0 and not stub.launches
    from hip import hip                                      # the runtime refuses it as well
    err, _ = hip.hipModuleLoadData(k1201.hsaco)
    assert err == hip.hipError_t.hipErrorNoBinaryForGpu


def test_missing_hip_python_gives_the_install_hint(monkeypatch):
    from wmma_gen.device import select
    monkeypatch.setitem(sys.modules, "hip", None)            # `from hip import hip` -> ImportError
    monkeypatch.setattr(select, "_shared", {})
    with pytest.raises(DeviceError) as info:
        select.get_device("hip")
    msg = str(info.value)
    assert "\n" not in msg and "hip-python is not installed: pip install 'wmma-gen[hip]'" in msg
    assert select.get_device("auto").name == "emu"


def test_stub_memory_is_poisoned_until_hipdevice_zeroes_it(stub):
    from hip import hip
    err, ptr = hip.hipMalloc(8)
    host = np.empty(8, np.uint8)
    hip.hipMemcpy(host, ptr, 8, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    assert err == hip.hipError_t.hipSuccess and host.tolist() == [0xA5] * 8
    assert hip.hipFree(ptr)[0] == hip.hipError_t.hipSuccess


def test_missing_kernel_name_unloads_the_module(hip_dev, stub, axpy):
    renamed = dataclasses.replace(axpy, name="not_in_module", key=axpy.key + "-renamed")
    with pytest.raises(DeviceError, match=r"hipModuleGetFunction\(not_in_module\) failed: hipErrorNotFound "
                                          r"\(500\): named symbol not found"):
        hip_dev.launch(renamed, GRID, BLOCK, _bufs(hip_dev) + [1.0])
    assert stub.calls["hipModuleUnload"] == 1 and not stub.modules


@pytest.mark.parametrize("arch, fact", [("gfx1153", "cus"), ("gfx1103", "l2_bytes")])
def test_stand_in_refuses_an_arch_without_the_facts_it_reports(arch, fact):
    """hipDeviceProp_t carries CU count, clock and L2 size; the stand-in never invents one."""
    from hipstub.runtime import EmuHipRuntime
    from wmma_gen.errors import ScheduleError
    with pytest.raises(ScheduleError, match=rf"{arch}\.{fact}.*no public figure"):
        EmuHipRuntime(arch)
    EmuHipRuntime("gfx1201")            # a product with every fact starts
