"""The GPU timing protocol's pure parts (HipDevice.time runs it; hip.py's docstring describes the
steps): the protocol's parameters, the result with everything it was measured on, and the
arithmetic that picks launches per event pair and operand sets."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..errors import DeviceError
from .base import Arg, Buffer


@dataclass(frozen=True)
class TimingProtocol:
    warmup: int = 5             # launches in the warm-up pair (also the per-launch estimate)
    min_pair_ms: float = 1.0    # each timed event pair spans at least this much
    repeats: int = 7            # timed pairs; median and min over them
    max_launches: int = 10_000  # cap on N for very short kernels

    def __post_init__(self):
        for field in ("warmup", "repeats", "max_launches"):
            v = getattr(self, field)
            if not isinstance(v, int) or v < 1:
                raise DeviceError(f"TimingProtocol.{field}={v!r} is not allowed: an integer >= 1")
        if not self.min_pair_ms > 0:
            raise DeviceError(f"TimingProtocol.min_pair_ms={self.min_pair_ms!r} is not allowed: > 0")


@dataclass(frozen=True)
class GpuTiming:
    """Per-launch time of one kernel under TimingProtocol, with what it was measured on."""
    median_s: float
    min_s: float
    samples_s: tuple[float, ...]   # one per repeat: pair span / launches_per_pair
    source: str                    # "hip" only on a real GPU; "emulator" on a stand-in runtime
    note: str
    arch: str
    device: str                    # device name as HIP reports it
    protocol: TimingProtocol
    launches_per_pair: int
    estimate_ms: float             # per-launch estimate from the warm-up pair (chose N)
    buffer_sets: int
    rotation_bytes: int            # distinct bytes of all operand sets
    cache_bytes: int               # L2 + Infinity Cache the rotation exceeds

    @property
    def is_gpu_time(self) -> bool:
        return self.source == "hip"


def launches_per_pair(estimate_ms: float, protocol: TimingProtocol) -> int:
    """Smallest N with N * estimate >= min_pair_ms, clamped to 1..max_launches."""
    if not estimate_ms > 0:
        return protocol.max_launches
    return max(1, min(protocol.max_launches, math.ceil(protocol.min_pair_ms / estimate_ms)))


def rotation_bytes(args_sets: Sequence[Sequence[Arg]]) -> int:
    """Distinct device bytes the sets touch (a buffer shared by several sets counts once)."""
    return sum({a.addr: a.nbytes for args in args_sets for a in args if isinstance(a, Buffer)}.values())


def sets_needed(set_bytes: int, cache_bytes: int) -> int:
    """Operand sets of `set_bytes` each whose total exceeds `cache_bytes`."""
    return cache_bytes // max(set_bytes, 1) + 1
