"""Per-target model parameters that wmma_gen.targets does not hold (STYLE rule 5: hardware
facts stay in targets.py; this table holds only what the *model* needs on top of them).

Every value names its source. Values marked ``assumption`` are engineering guesses that no
document here confirms; the calibration note (docs/model_calibration.md) shows how far the
model lands from published measurements with them.

Sources:
  [RDNA]  AMD "RDNA Architecture" whitepaper (2019) and "AMD RDNA 3" / RDNA 4 architecture
          slides: LDS is 128 KiB per WGP (two CUs), 64 banks x 4 B; L0 vector cache per CU. Whitepaper,
          "Vector caches": the address logic coalesces a wave32 load's 32 lane addresses by 128-byte
          cache line; the L0 (128-byte lines) delivers one line, a full wave32 of dwords, per clock.
          AMD "RDNA Architecture" slides (GPUOpen 2019): RX 5700 XT L0 bandwidth 9.76 TB/s (= 128 B per
          clock per CU, 40 CUs at 1.905 GHz); texture unit load addressing 32 addresses / clock, load
          data 32 dwords / clock. (Read as quoted in github.com/azhirnov/cpu-gpu-arch gpu/AMD-RDNA1.md
          and in a translation of the whitepaper, github.com/fortunerains/rdna3_learnig; the PDFs
          themselves were not at hand.)
  [TPU]   TechPowerUp GPU database (L2 / Infinity Cache sizes as commonly reported; not
          verified against an AMD document).
  [ISA3]  RDNA3 ISA guide: wave32 VALU issues one instruction per clock per SIMD; WMMA
          occupies the VALU for rate-derived cycles (see `wmma_cycles`).
  [CC3]   Chips and Cheese, "Microbenchmarking AMD's RDNA 3 Graphics Architecture" (2023-01-07,
          chipsandcheese.com/p/microbenchmarking-amds-rdna-3-graphics-architecture), RX 7900 XTX,
          Nemes's Vulkan suite + OpenCL: per-level figures only in charts; text: the WGP's LDS is two
          64 KB blocks, one per CU, each 32 banks x 32 bit; L1/L2 bandwidth ~2x RX 6900 XT's;
          Infinity Cache 1.8x (pure reads).
  [CC3P]  Chips and Cheese, "Latency Testing is Hard (RDNA 3 Power Saving)" (2023-06-14,
          chipsandcheese.com/p/latency-testing-is-hard-rdna-3-power-saving), RX 7900 XTX in its high
          power state, pointer chase, vector path: Infinity Cache 150.3 ns, VRAM (1 GB) 234.55 ns.
  [CC7600] Chips and Cheese, "AMD's RX 7600: Small RDNA 3 Appears" (2023-06-04,
          chipsandcheese.com/p/amds-rx-7600-small-rdna-3-appears), RX 7600 (Navi 33, gfx1102), all
          WGPs loaded: L2 2.13 TB/s, Infinity Cache 984 GB/s (clock not stated).
  [CCSH]  Chips and Cheese, "Strix Halo's Memory Subsystem" (2025-10-31,
          chipsandcheese.com/p/strix-halos-memory-subsystem-tackling), Ryzen AI MAX+ 395 (gfx1151):
          Nemes's Vulkan bandwidth test "just under 1 TB/s" from Infinity Cache (2 GHz FCLK,
          512 B/clk to the fabric by their reading).
  [CCR4]  Chips and Cheese, "AMD's RDNA4 Architecture (Video)" (2025-03-05,
          chipsandcheese.com/p/amds-rdna4-architecture-video): RDNA 1-3 have 1 MB of L2 per shader
          engine; RDNA4 doubles the banks per L2 slice (2x bandwidth per slice) and the L2 per shader
          engine, so L2 bandwidth per MB is unchanged; AMD "also increased" MALL bandwidth (no figure).

Derived, not stored: WMMA issue cycles per instruction come from targets.Target.rate and the
instruction's K (`wmma_cycles`), so the peak and the model can never disagree.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import asdict, dataclass, replace

from ..errors import ScheduleError
from ..targets import Target, get_target


@dataclass(frozen=True)
class ModelParams:
    arch: str
    lds_bytes_per_cu: int          # LDS capacity a CU-mode workgroup set can use
    lds_banks: int                 # banks serving one CU per clock
    lds_bank_bytes: int            # bytes per bank per clock
    lds_latency_clk: int           # issue -> data for a DS load
    vmem_latency_clk: int          # issue -> data for a global load (L2 hit-ish average)
    l0_bytes_per_clk: int          # vector L0 / texture path bytes per clock per CU
    l0_line_bytes: int             # L0 cache line: the unit a wave's lane addresses coalesce into
    vmem_min_clk: int              # address-processing floor per wave32 VMEM instruction
    l2_bytes: int                  # L2 capacity
    l2_bytes_per_clk: int          # aggregate L2 bandwidth per clock
    mall_bytes: int                # Infinity Cache / MALL capacity (0 = none)
    mall_bw_gbs: float             # Infinity Cache / MALL bandwidth
    dram_efficiency: float         # achievable fraction of Target.mem_bw_gbs
    max_workgroups_per_cu: int     # workgroup slots per CU
    valu_clk: int                  # VALU issue cycles per wave32 instruction
    launch_overhead_us: float      # fixed per-launch cost added to every estimate
    lds_exposed: float = 0.0       # share of the CU's LDS clocks a SIMD's WMMAs do not hide (fitted)

    @property
    def lds_bytes_per_clk(self) -> int:
        return self.lds_banks * self.lds_bank_bytes

    def to_dict(self) -> dict:
        return asdict(self)


SOURCES: dict[str, str] = {
    "lds_bytes_per_cu": "[RDNA] 128 KiB per WGP, half per CU in CU mode",
    "lds_banks": "[RDNA] 64 banks per WGP; [CC3] 32 of them in the 64 KB block of each CU",
    "lds_bank_bytes": "[RDNA] 4-byte banks",
    "lds_latency_clk": "assumption: ~64 clocks DS load-to-use ([CC3] measured RX 7900 XTX LDS latency, chart only)",
    "vmem_latency_clk": "assumption: ~500 clocks global load-to-use (L2 hit mix); [CC3P] RX 7900 XTX vector path: "
                        "Infinity Cache 150.3 ns = 376 clk, VRAM 234.55 ns = 586 clk at 2.5 GHz; its L2 latency is chart only",
    "l0_bytes_per_clk": "assumption: 128 B/clk vector L0 per CU, one 128-byte line per clock (ops/gemm/l0_lines.py) "
                        "as [RDNA] gives for RDNA 1 (RX 5700 XT: 9.76 TB/s = 128 B/clk per CU); RDNA 3/4: "
                        "[CC3] L0 bandwidth chart only",
    "l0_line_bytes": "[RDNA] 128-byte L0 vector cache lines (whitepaper, RDNA 1; RDNA 3 doubled the L0 to 32 KiB "
                     "per CU, the line size is not restated)",
    "vmem_min_clk": "assumption: 4 clocks address processing per wave32 VMEM instruction ([RDNA] slides give "
                    "RDNA 1's loads 32 addresses and 32 dwords per clock: 1 clock for a dword load)",
    "l2_bytes": "[TPU] L2 size of the product in targets.py; gfx1103/gfx1152: assumption 2 MB (as Strix Point)",
    "l2_bytes_per_clk": "gfx1102: [CC7600] 2.13 TB/s / 2.655 GHz (targets.py boost; the article gives no clock) = 802 "
                        "B/clk; other archs: assumption: as gfx1102 measured by [CC7600], 401 B/clk per MB of L2 "
                        "([CCR4]: same bandwidth per MB on RDNA 3 and 4)",
    "mall_bytes": "[SPEC] AMD product pages: Infinity Cache 96/64/32 MB (RX 7900 XTX/7800 XT/7600), "
                  "64/32 MB (RX 9070 XT/9060 XT); [TPU] 32 MB MALL on Strix Halo, none on Strix Point",
    "mall_bw_gbs": "gfx1102: [CC7600] 984 GB/s; gfx1151: [CCSH] ~1000 GB/s; other archs: assumption: as gfx1102 "
                   "measured by [CC7600], 984 GB/s per 128 bits of memory bus (gfx12: [CCR4] says higher, no figure)",
    "dram_efficiency": "assumption: 85% of peak DRAM bandwidth is achievable by a streaming kernel",
    "max_workgroups_per_cu": "assumption: 16 workgroup slots per CU",
    "valu_clk": "[ISA3] wave32 VALU issues one instruction per clock (VOPD pairs count once)",
    "launch_overhead_us": "assumption: 4 us per kernel launch",
    "lds_exposed": "fitted by bench/calibrate.py (ops/calibration_ranking.fit_lds_exposed): the smallest share "
                   "on a 0.05 grid that ranks each fit point's published library tile above every tile with "
                   "fewer WMMA fragments per wave; checked on the held-out points' published tiles",
}


# A wave's v_wmma reads A/B fragments that its own ds_loads brought into VGPRs: it waits for them
# (RDNA3 ISA guide 4.4 s_waitcnt: lgkmcnt counts DS loads; RDNA4 ISA: s_wait_dscnt), and the LDS
# serves every wave of the CU at 128 B/clk ([RDNA]: 64 banks x 4 B per WGP, half per CU). The other
# waves' WMMAs hide most of that wait, not all of it: this share of the CU's LDS clocks per iteration is added to the SIMD's time (ops/gemm/model.py). It is the term the
# model lacked for small per-wave tiles (issue 38 item 1): a 4x2-fragment wave tile loads 0.75
# fragments per WMMA from LDS, a 4x4 one 0.5, and the full-overlap model ranked the smaller tile
# first where every published tuned library picks 4x4. Fitted, not measured (SOURCES["lds_exposed"]).
LDS_EXPOSED = 0.2


# L2: [CC7600] measured 2.13 TB/s on the RX 7600's 2 MB L2; per clock at its boost (targets.py gfx1102, 2.655
# GHz; the article states no clock) that is 802.3 B/clk, 401.1 per MB. [CCR4]: RDNA 1-3 build 1 MB per shader
# engine and RDNA4 doubles both the banks and the capacity of a slice, so the other archs scale by L2 MB.
L2_B_PER_CLK_PER_MB = 2.13e12 / 2.655e9 / 2
# MALL: [CC7600] 984 GB/s from Navi 33's 128-bit bus; [CCSH] ~1000 GB/s on Strix Halo (256-bit LPDDR5X, its own
# figure). The others scale gfx1102's per bus bit (Infinity Cache slices sit with the memory channels).
MALL_GBS_PER_BUS_BIT = 984 / 128
# (field, arch) pairs a published measurement of that very product gives; every other pair of a field whose
# SOURCES row says "assumption" is varied by model/robustness.py.
MEASURED = frozenset({("l2_bytes_per_clk", "gfx1102"), ("mall_bw_gbs", "gfx1102"), ("mall_bw_gbs", "gfx1151")})


def _p(arch: str, l2_mib: float, mall_mib: int, mall_gbs: float, **kw) -> ModelParams:
    base = dict(lds_bytes_per_cu=65536, lds_banks=32, lds_bank_bytes=4, lds_latency_clk=64,
                vmem_latency_clk=500, l0_bytes_per_clk=128, l0_line_bytes=128, vmem_min_clk=4, dram_efficiency=0.85,
                max_workgroups_per_cu=16, valu_clk=1, launch_overhead_us=4.0, lds_exposed=LDS_EXPOSED)
    base.update(kw)
    return ModelParams(arch=arch, l2_bytes=int(l2_mib * 2**20), l2_bytes_per_clk=round(L2_B_PER_CLK_PER_MB * l2_mib),
                       mall_bytes=mall_mib * 2**20, mall_bw_gbs=float(mall_gbs), **base)


_BUS = MALL_GBS_PER_BUS_BIT
PARAMS: dict[str, ModelParams] = {p.arch: p for p in (
    _p("gfx1100", 6, 96, 384 * _BUS),  # Navi 31: 6 MB L2 [TPU], 96 MB Infinity Cache [SPEC], 384-bit bus
    _p("gfx1101", 4, 64, 256 * _BUS),  # Navi 32: 4 MB L2, 64 MB IC, 256-bit
    _p("gfx1102", 2, 32, 984),         # Navi 33: 2 MB L2, 32 MB IC, 128-bit; L2 and IC bandwidth measured [CC7600]
    _p("gfx1103", 2, 0, 0),            # Phoenix: L2 unknown in targets.py -> assumption: 2 MB as Strix Point; no MALL
    _p("gfx1150", 2, 0, 0),            # Strix Point: 2 MB L2, no MALL
    _p("gfx1151", 2, 32, 1000),        # Strix Halo: 2 MB L2, 32 MB MALL measured ~1 TB/s [CCSH]
    _p("gfx1152", 2, 0, 0),            # Krackan Point: L2 unknown -> assumption: 2 MB as Strix Point; no MALL
    _p("gfx1200", 4, 32, 128 * _BUS),  # Navi 44: 4 MB L2, 32 MB IC, 128-bit
    _p("gfx1201", 8, 64, 256 * _BUS),  # Navi 48: 8 MB L2, 64 MB IC, 256-bit
)}


def is_assumption(arch: str, name: str) -> bool:
    """Whether `name`'s value for `arch` is a guess (SOURCES says "assumption" and no measurement of
    that product gives it): the parameters model/robustness.py varies."""
    mixed = {field for field, _ in MEASURED}   # measured on some products, assumed on the others
    return (SOURCES[name].startswith("assumption") or name in mixed) and (name, arch) not in MEASURED


_CHANGED: contextvars.ContextVar[dict] = contextvars.ContextVar("wmma_gen_model_params", default={})


def params_for(arch: str) -> ModelParams:
    t = get_target(arch)  # unknown arch -> ScheduleError listing the known ones
    if arch not in PARAMS:  # gfx1153, gfx1170, gfx1171: no public CUs/clock/bandwidth (targets [UNKNOWN])
        raise ScheduleError(f"{arch} model", ", ".join(t.unknown),
                            f"no public figure for these facts of {t.name}, so the model cannot estimate it; "
                            f"compile and the emulator work, model-ranked sweeps need one of {', '.join(PARAMS)}")
    changes = _CHANGED.get().get(arch)
    return replace(PARAMS[arch], **changes) if changes else PARAMS[arch]


@contextlib.contextmanager
def changed(arch: str, **values):
    """Run the model with some of `arch`'s parameters replaced, in this context only (the
    sensitivity check of model/robustness.py varies the `assumption` rows of SOURCES)."""
    unknown = sorted(set(values) - set(SOURCES))
    if unknown:
        raise ValueError(f"model parameter {unknown[0]!r} is not allowed: one of {', '.join(SOURCES)}")
    params_for(arch)
    token = _CHANGED.set({**_CHANGED.get(), arch: {**_CHANGED.get().get(arch, {}), **values}})
    try:
        yield params_for(arch)
    finally:
        _CHANGED.reset(token)


def wmma_cycles(t: Target, dtype: str, acc: str) -> float:
    """VALU cycles one v_wmma occupies on its SIMD, derived from the dense peak rate:
    flops per instruction (2*16*16*K) / (FLOPs per clock per CU / SIMDs per CU).
    gfx11 f16: 8192 / 256 = 32 clocks; gfx12 f16: 16; gfx12 fp8: 8."""
    k = t.instr(dtype, acc).k
    if t.rate[dtype] is None:
        t.peak_tflops(dtype)  # raises the error naming the unknown rate
    return 2 * 16 * 16 * k / (t.rate[dtype] / t.simds_per_cu)


# --- calibration (model/calibration.py): fitted by bench/calibrate.py on the fit points of
# docs/calibration/points.csv (others' published measurements); report: results/model_calibration.md.
# Sustained WMMA clocks per target live in targets.py ([CALIB]); these are per kernel family.
# Refitted 2026-12-04 with kernels compiled by FlyDSL (LLVM 24), the default provider since then
# (under mlir-gml / LLVM 23 the same fit gave gemm 0.900, loop 0.590, bands 0.70-1.38 / 0.94-1.06
# and gfx1100 2.489 GHz: LLVM 24's forward defaults estimate faster, so the loop family's
# efficiency drops and its band widens to hold all three attention fit rows).
# Refitted 2026-12-05 after the shipped gfx1100 GEMM entries went back to the denser default (issue 38:
# no shipped entry with a looser main loop than the default; the gfx1100 GEMM fit point estimates the
# default now): gemm 0.894 -> 0.909, loop 0.566 -> 0.556, gfx1100 2.542 -> 2.674 GHz, bands 0.69-1.37 /
# 0.91-1.11.
# Refitted 2026-12-05 with fitted clocks bounded by boost (model/calibration.fit, issue 38 item 1: the
# gfx1100 clock had gone to 2.674 GHz, above the 2.5 GHz boost): gfx1100 2.674 -> 2.5 GHz, gemm 0.909 ->
# 0.930, loop 0.556 -> 0.569, bands 0.67-1.34 / 0.89-1.08.
# Refitted 2026-12-05 with the GEMM model's exposed-LDS term (ModelParams.lds_exposed = 0.2, fitted on the fit
# points' published library tiles, issue 38 item 1: it charges every GEMM some LDS time, so the efficiency rises):
# gemm 0.930 -> 0.972, band 0.67-1.34 -> 0.69-1.33; loop unchanged (the term is the GEMM model's).
# Refitted 2026-12-05 with clock floors (model/calibration.fit, issue 38 item 4): gfx1151's sustained clock is raised
# from its microbenchmark's 1.782 GHz to 2.140 GHz, the clock the published AITER backward's loops need (fa-1151-bwd;
# rocm_wmma_gemm 8192^3 needs 2.041): gemm 0.972 -> 0.915, loop 0.569 -> 0.535, bands 0.69-1.33 / 0.89-1.08 ->
# 0.73-1.18 / 0.85-1.15 (the gfx1151 fit rows drop by 1.782 / 2.140, the others rise with the efficiencies).
# Refitted 2026-12-05 on the estimate of the kernel family each point measured (bench/calibrate.py measured_family,
# issue 38 item 4a): the loop fit rows (AITER's Triton forwards) against our Triton FA-2 forward compiled for their
# problems, not against our own forward: loop 0.535 -> 0.642, band 0.85-1.15 -> 0.82-1.13. Our forward issues fewer
# instructions per v_wmma than the Triton loop, so the old efficiency charged that difference to the model; the
# compiled kernels of our structure (CK's FMHA, gcnasm's HIP v39; held out) moved from 1.07-1.30 to 0.89-1.09.
# Refitted 2026-12-05 after the model's transcendental count was fixed (model/loop_kernel.py, issue 38): it re-scanned
# the ISA text for the loop and missed the back-edge of Triton's commented loop labels, so the Triton fit rows' loops were
# charged every transcendental to the kernel's end (d128 forward at 64x64: 98 instead of 33). Their estimates rose
# 7-13%, so the loop efficiency falls: loop 0.642 -> 0.588, band 0.82-1.13 -> 0.84-1.13; our own kernels' counts (no
# label comments) are unchanged, their estimates fall by 0.588 / 0.642 = 0.916x where compute-bound.
EFFICIENCY: dict[str, float] = {
    "gemm": 0.915,   # fit rows lib-1100-torch-f16, lib-1151-rwg-8192, lib-1201-torch-f16
    "loop": 0.588,   # fit rows fa-1100-aiter, fa-1151-aiter, fa-1201-aiter (AITER's Triton forwards, measured_family)
}
BAND: dict[str, tuple[float, float]] = {   # published / calibrated estimate
    "gemm": (0.73, 1.18),
    "loop": (0.84, 1.13),
}
# The Triton that compiled the loop fit rows' estimates (bench/calibration_basis.measured_family): another version
# compiles other loops, so bench/calibrate.py reports a refit and tests/unit/test_calibration.py skips those rows.
FIT_TRITON = "3.9.0"
CALIBRATION_SOURCES: dict[str, str] = {
    "EFFICIENCY": "fitted (log least squares) by bench/calibrate.py on the fit:gemm / fit:loop rows of "
                  "docs/calibration/points.csv, at the sustained clocks of targets.py, each row against the model's "
                  "estimate of the kernel family it measured (calibrate.measured_family)",
    "BAND": "min..max of published / calibrated estimate over the same fit rows, widened by "
            "calibration.BAND_MARGIN each side; held-out rows are reported, never fitted",
}
