"""Occupancy from the kernel metadata: waves per SIMD and workgroups per CU.

Limits (each reported, the smallest wins):
  vgpr   floor(Target.vgprs_per_simd / VGPRs rounded up to Target.vgpr_granule) waves per SIMD
         (wave32 allocation; AMDGPUUsage / AMDGPU.td FeatureGFX11FullVGPRs)
  waves  Target.max_waves_per_simd wave slots per SIMD
  lds    ModelParams.lds_bytes_per_cu / the kernel's LDS bytes (group_segment_fixed_size)
  slots  ModelParams.max_workgroups_per_cu
A workgroup's waves are spread over the CU's Target.simds_per_cu SIMDs (CU mode), so a
workgroup needs ceil(waves / simds) wave slots on the busiest SIMD. SGPRs never limit on RDNA
(every wave gets its own fixed SGPR allocation).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import ScheduleError
from ..targets import Target
from .params import ModelParams


@dataclass(frozen=True)
class Occupancy:
    vgprs: int                 # as compiled
    vgprs_allocated: int       # rounded up to the granule
    waves_per_workgroup: int
    waves_per_simd: int        # resident waves on the busiest SIMD
    workgroups_per_cu: int
    limiter: str               # vgpr | waves | lds | slots
    limits: dict               # workgroups per CU allowed by each resource

    def to_dict(self) -> dict:
        return asdict(self)


def occupancy(vgprs: int, lds_bytes: int, threads: int, t: Target, p: ModelParams) -> Occupancy:
    if vgprs > t.max_vgprs_per_wave:
        raise ScheduleError("vgprs", vgprs, f"at most {t.max_vgprs_per_wave} per wave32 lane")
    wg_waves = -(-threads // t.wave_size)
    per_simd = -(-wg_waves // t.simds_per_cu)          # wave slots a workgroup takes on one SIMD
    alloc = max(t.vgpr_granule, -(-max(vgprs, 1) // t.vgpr_granule) * t.vgpr_granule)
    waves_vgpr = t.vgprs_per_simd // alloc  # the wave-slot cap is its own limit below
    limits = {
        "vgpr": waves_vgpr // per_simd,
        "waves": t.max_waves_per_simd // per_simd,
        "lds": (p.lds_bytes_per_cu // lds_bytes) if lds_bytes else p.max_workgroups_per_cu,
        "slots": p.max_workgroups_per_cu,
    }
    limiter = min(limits, key=lambda k: (limits[k], ("vgpr", "lds", "waves", "slots").index(k)))
    wgs = limits[limiter]
    return Occupancy(vgprs, alloc, wg_waves, wgs * per_simd, wgs, limiter, limits)
