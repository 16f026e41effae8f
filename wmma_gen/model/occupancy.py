"""Occupancy from the kernel metadata: waves per SIMD and workgroups per CU.

Limits (each reported, the smallest wins):
  vgpr   floor(Target.vgprs_per_simd / VGPRs rounded up to Target.vgpr_granule) waves per SIMD
         (wave32 allocation; AMDGPUUsage / AMDGPU.td FeatureGFX11FullVGPRs)
  waves  Target.max_waves_per_simd wave slots per SIMD
  lds    ModelParams.lds_bytes_per_cu / the kernel's LDS bytes (group_segment_fixed_size)
  slots  ModelParams.max_workgroups_per_cu
The wave limits are per SIMD; a CU has Target.simds_per_cu of them, and in CU mode "all waves in the
workgroup are resident within the same CU", each wave on either of its two SIMD32s (RDNA3 ISA guide,
section 2.3 "Work-groups", CU mode / WGP mode). Waves of different workgroups share the SIMDs, so a CU
holds floor(simds x per-SIMD waves / waves per workgroup) workgroups and its busiest SIMD runs
ceil(workgroups x waves per workgroup / simds) waves (`busiest_simd_waves`: the dispatcher balances
the CU's SIMDs -- model assumption). For a workgroup of 2 or 4 waves on 2 SIMDs this is what charging
ceil(waves / simds) slots per workgroup gives; a 1-wave (or 3-wave) workgroup no longer books a whole
SIMD slot pair. SGPRs never limit on RDNA (every wave gets its own fixed SGPR allocation).
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
    alloc = max(t.vgpr_granule, -(-max(vgprs, 1) // t.vgpr_granule) * t.vgpr_granule)
    waves_vgpr = t.vgprs_per_simd // alloc  # the wave-slot cap is its own limit below
    limits = {
        "vgpr": _fit(waves_vgpr, wg_waves, t.simds_per_cu),
        "waves": _fit(t.max_waves_per_simd, wg_waves, t.simds_per_cu),
        "lds": (p.lds_bytes_per_cu // lds_bytes) if lds_bytes else p.max_workgroups_per_cu,
        "slots": p.max_workgroups_per_cu,
    }
    limiter = min(limits, key=lambda k: (limits[k], ("vgpr", "lds", "waves", "slots").index(k)))
    wgs = limits[limiter]
    return Occupancy(vgprs, alloc, wg_waves, busiest_simd_waves(wgs, wg_waves, t.simds_per_cu), wgs, limiter, limits)


def _fit(per_simd: int, wg_waves: int, simds: int) -> int:
    """Workgroups of wg_waves waves a CU holds when each of its SIMDs has per_simd wave slots: all
    of a workgroup's waves on the CU, at most ceil(wg_waves / simds) of them on one SIMD."""
    if per_simd < -(-wg_waves // simds):
        return 0
    return simds * per_simd // wg_waves


def busiest_simd_waves(workgroups: int, wg_waves: int, simds: int) -> int:
    """Waves on the busiest SIMD of a CU running `workgroups` workgroups of wg_waves waves (balanced)."""
    return -(-workgroups * wg_waves // simds)
