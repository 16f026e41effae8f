"""get_device shares one device per kind and GPU: threads asking at the same moment get the same one
(two HipDevices for one GPU would mean two module caches and two streams for one caller)."""
from __future__ import annotations

import threading
import time

from wmma_gen.device import emu, select


def test_threads_asking_at_once_get_one_shared_device(monkeypatch):
    built = []

    class SlowEmu:                     # stands in for EmuDevice: slow to build, counts its builds
        def __init__(self):
            time.sleep(0.05)
            built.append(self)

    monkeypatch.setattr(select, "_shared", {})
    monkeypatch.setattr(emu, "EmuDevice", SlowEmu)
    start, got = threading.Barrier(8), []

    def ask():
        start.wait()
        got.append(select.get_device("emu"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len(got) == 8 and all(d is built[0] for d in got)
    assert select.get_device("emu") is built[0]


def test_auto_on_a_machine_without_a_gpu_is_the_shared_emulator(monkeypatch):
    monkeypatch.setattr(select, "_shared", {})
    monkeypatch.setattr("wmma_gen.device.hip.real_gpu_visible", lambda: False)
    dev = select.get_device("auto")
    assert isinstance(dev, emu.EmuDevice) and select.get_device("emu") is dev and select.get_device(None) is dev
