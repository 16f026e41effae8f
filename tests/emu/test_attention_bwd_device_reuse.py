"""run_backward without a device runs on the process's shared default device (device/select.get_device,
as gemm and the attention forward), so a second call decodes none of its three kernels again: the
emulator's decoded-program cache (EmuDevice.program) is hit, not rebuilt on a fresh EmuDevice."""
import numpy as np
import pytest

from attention_bwd_cases import make_problem, run_case
from wmma_gen import emu
from wmma_gen.device.emu import EmuDevice
from wmma_gen.device.select import get_device
from wmma_gen.ops.attention_bwd import run as bwd_run


def test_two_calls_without_a_device_share_one_device_and_its_decoded_programs(monkeypatch):
    if not isinstance(get_device(), EmuDevice):
        pytest.skip("the default device is a GPU: no emulator program cache to observe")
    decoded, devices = [], []
    real_decode, real_launch = emu.Program.from_code_object, bwd_run.launch

    def counting_decode(*a, **kw):
        decoded.append(a[-1] if a else kw)
        return real_decode(*a, **kw)

    def recording_launch(ck, sig, problem, device, feed):
        devices.append(device)
        return real_launch(ck, sig, problem, device, feed)

    monkeypatch.setattr(emu.Program, "from_code_object", staticmethod(counting_decode))
    monkeypatch.setattr(bwd_run, "launch", recording_launch)
    arrays, kw = make_problem(np.random.default_rng(0), sq=16, sk=16, d=64)
    run_case("gfx1100", arrays, kw)
    first = len(decoded)
    run_case("gfx1100", arrays, kw)
    assert first <= 3 and len(decoded) == first, f"second call decoded {decoded[first:]}"
    assert len(devices) == 6 and all(d is get_device() for d in devices), devices
