"""What every op's time estimate is made of (source = "model", never a measurement).

`Estimate` is the result type, `Resources` what the model reads from the kernel metadata,
`loop_stats` the cached main-loop analysis of a kernel's ISA and `vmem_clocks` the CU
texture/L0 path cost of a list of memory ops. The op-specific estimates build on these:
ops/gemm/model.py (macro-tile GEMM) and model/loop_kernel.py (attention's loop kernels).
"""
from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field

from .isa_loop import LoopStats, find_main_loop

LIMITERS = ("wmma_issue", "lds_bandwidth", "global_memory", "latency", "tail")
TAIL_THRESHOLD = 0.25  # share of compute time lost to the last partial round


@dataclass(frozen=True)
class Resources:
    """What the model reads from the kernel metadata."""
    vgprs: int
    lds_bytes: int
    threads: int
    vgpr_spills: int = 0
    sgpr_spills: int = 0


@dataclass(frozen=True)
class Estimate:
    seconds: float
    tflops: float
    fraction_of_peak: float
    limiter: str
    figures: dict = field(default_factory=dict, compare=False)
    source: str = "model"
    est_low: float = math.nan     # TFLOP/s x calibration band (calibration.py); NaN if uncalibrated
    est_high: float = math.nan

    def __post_init__(self):
        if self.limiter not in LIMITERS:
            raise ValueError(f"Estimate.limiter={self.limiter!r}: one of {', '.join(LIMITERS)}")
        if self.source != "model":
            raise ValueError("Estimate.source is always 'model'")

    def to_dict(self) -> dict:
        return asdict(self)


@functools.lru_cache(maxsize=512)
def loop_stats(isa: str) -> LoopStats:
    return find_main_loop(isa)


def vmem_clocks(ops, p) -> float:
    """Clocks of the VMEM ops (loads, stores, scratch) on the CU texture/L0 path, per wave."""
    return sum(max(p.vmem_min_clk, 32 * o.bits / 8 / p.l0_bytes_per_clk) for o in ops
               if o.kind in ("vmem_load", "vmem_store", "scratch_load", "scratch_store"))
