"""GPU time of one compiled kernel on one problem, through the one launcher (any op).

Median of `repeats` launches after `warmup`, each a hipEvent pair around the launch
(Timing.source must be "hip": an emulator or stub timing is refused, never reported).
Operands are random bytes shaped by the kernel's signature; results are not read. The
device-side protocol with operand rotation past the caches is HipDevice.time (device/hip.py).
"""
from __future__ import annotations

import statistics

from wmma_gen.device.launcher import Prepared, random_inputs
from wmma_gen.errors import DeviceError

WARMUP, REPEATS = 3, 10


def time_signature(device, compiled, signature, problem: dict, warmup: int = WARMUP, repeats: int = REPEATS,
                   arrays: dict | None = None) -> float:
    """Median hip time of the kernel on random inputs (`arrays` replaces some of them, e.g.
    valid varlen offsets); anything but a GPU timing raises."""
    arrays = {**random_inputs(signature, problem, seed=0), **(arrays or {})}
    with Prepared(compiled, signature, problem, device, arrays) as run:
        times = []
        for i in range(warmup + repeats):
            t = run.launch()
            if t.source != "hip":
                raise DeviceError(f"timing source {t.source!r} is not GPU time; only hip timings are measurements")
            if i >= warmup:
                times.append(t.seconds)
        return statistics.median(times)
