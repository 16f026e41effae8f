"""The GPU timing protocol of HipDevice.time: its arithmetic, operand rotation and labelling,
checked on the stub's deterministic fake clock (which is never reported as a measurement)."""
import numpy as np
import pytest
from hip_helpers import BLOCK, GRID

from wmma_gen.device.base import Buffer
from wmma_gen.device.hip import (GpuTiming, TimingProtocol, launches_per_pair, rotation_bytes, sets_needed,
                                 timing_source)
from wmma_gen.errors import DeviceError
from wmma_gen.targets import TARGETS


@pytest.mark.parametrize("estimate_ms, expected", [(0.25, 4), (0.3, 4), (1.0, 1), (2.0, 1), (0.001, 1000),
                                                    (1e-9, 10_000), (0.0, 10_000)])
def test_launches_per_pair_spans_at_least_the_minimum(estimate_ms, expected):
    p = TimingProtocol()
    n = launches_per_pair(estimate_ms, p)
    assert n == expected
    if n < p.max_launches:
        assert n * estimate_ms >= p.min_pair_ms and (n == 1 or (n - 1) * estimate_ms < p.min_pair_ms)


def test_rotation_footprint_and_sets_needed():
    a, b, shared = (Buffer(0x1000 * i, n, "hip", 1) for i, n in ((1, 100), (2, 300), (3, 50)))
    assert rotation_bytes([[a, shared, 2.0], [b, shared, 2.0]]) == 450     # shared counted once
    cache = TARGETS["gfx1100"].cache_bytes
    assert cache == (6 + 96) << 20                                           # 6 MB L2 + 96 MB IC
    n = sets_needed(1 << 20, cache)
    assert n * (1 << 20) > cache >= (n - 1) * (1 << 20)


def test_protocol_parameters_are_checked():
    with pytest.raises(DeviceError, match="warmup=0 is not allowed"):
        TimingProtocol(warmup=0)
    with pytest.raises(DeviceError, match="min_pair_ms=0 is not allowed"):
        TimingProtocol(min_pair_ms=0)


def test_source_hip_only_for_an_unmarked_device():
    assert timing_source("AMD Radeon RX 7900 XTX") == "hip"
    assert timing_source("wmma_gen HIP stub [emulator-backed]") == "emulator"


def _sets(dev, n):
    """n operand sets (X_i, Y_i, a): X_i = i + 1, Y_i = 0."""
    sets = []
    for i in range(n):
        x, y = dev.alloc(256), dev.alloc(256)
        dev.copy_in(x, np.full(64, i + 1.0, np.float32))
        sets.append([x, y, 0.5])
    return sets


def test_time_on_the_fake_clock(hip_dev, stub, axpy):
    stub.clock.ms = lambda i: 0.25 + 0.01 * (i % 3)
    protocol = TimingProtocol(warmup=2, min_pair_ms=1.0, repeats=3)
    sets = _sets(hip_dev, 3)
    r = hip_dev.time(axpy, GRID, BLOCK, sets, protocol, cache_bytes=1000)
    assert isinstance(r, GpuTiming) and r.protocol == protocol
    assert r.estimate_ms == pytest.approx((0.25 + 0.26) / 2)                # the warm-up pair's mean
    assert r.launches_per_pair == 4                                          # ceil(1.0 / 0.255)
    fake = [rec.fake_ms for rec in stub.launches]
    assert len(fake) == 2 + 3 * 4
    expected = [sum(fake[2 + 4 * k: 6 + 4 * k]) / 4 / 1e3 for k in range(3)]
    assert r.samples_s == pytest.approx(expected, rel=1e-6)                  # hipEventElapsedTime is f32
    assert r.median_s == pytest.approx(sorted(expected)[1], rel=1e-6)
    assert r.min_s == pytest.approx(min(expected), rel=1e-6)
    assert (r.buffer_sets, r.rotation_bytes, r.cache_bytes) == (3, 6 * 256, 1000)
    assert r.source == "emulator" and not r.is_gpu_time and "not a measurement" in r.note
    # rotation: launch k used set k % 3 (its X pointer), and each Y_i holds count_i * 0.5 * (i + 1)
    assert [rec.explicit[0] for rec in stub.launches] == [sets[k % 3][0].addr for k in range(14)]
    for i, (_, y, _) in enumerate(sets):
        count = len(range(i, 14, 3))
        assert np.all(np.frombuffer(hip_dev.copy_out(y), np.float32) == count * 0.5 * (i + 1))


def test_time_refuses_sets_that_fit_in_the_cache(hip_dev, stub, axpy):
    cache = TARGETS["gfx1100"].cache_bytes
    with pytest.raises(DeviceError, match=f"sets of 1536 bytes are not allowed: they must exceed the {cache} "
                                          r"bytes of L2 \+ Infinity Cache on gfx1100.*pass >= 208897 sets"):
        hip_dev.time(axpy, GRID, BLOCK, _sets(hip_dev, 3))
    with pytest.raises(DeviceError, match="args_sets"):
        hip_dev.time(axpy, GRID, BLOCK, [])
    assert not stub.launches


def test_a_real_gpu_path_reports_hip(stub, axpy, monkeypatch):
    """Simulated: the same runtime without the emulator mark in its device name is what a
    real GPU looks like to HipDevice; only then do timings say source="hip"."""
    import hipstub.runtime
    from wmma_gen.device.hip import HipDevice, real_gpu_visible
    monkeypatch.setattr(hipstub.runtime, "DEVICE_NAME", "AMD Radeon RX 7900 XTX")
    assert real_gpu_visible()
    dev = HipDevice()
    try:
        assert dev.source == "hip" and dev.device_name == "AMD Radeon RX 7900 XTX"
        sets = _sets(dev, 2)
        t = dev.launch(axpy, GRID, BLOCK, sets[0])
        assert t.source == "hip" and t.is_gpu_time and "hipEvents on gfx1100" in t.note
        r = dev.time(axpy, GRID, BLOCK, sets, TimingProtocol(warmup=1, repeats=1), cache_bytes=0)
        assert r.source == "hip" and r.is_gpu_time
    finally:
        dev.close()
