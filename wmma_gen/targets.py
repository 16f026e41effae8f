"""Target facts: one table, gfx name -> Target (STYLE rule 5).

No hardware literal lives anywhere else in wmma_gen. Each number carries its source:
  [ISA3]  "RDNA3 Instruction Set Architecture Reference Guide" (AMD, 2023), WMMA section 7.9
  [ISA4]  GPUOpen, "Using the Matrix Cores of AMD RDNA 4 architecture GPUs" (2025)
  [LLVM]  llvm/llvm-project: llvm/lib/Target/AMDGPU/AMDGPU.td (FeatureGFX11FullVGPRs on
          gfx1100, gfx1101, gfx1151 and gfx12; others 1024 VGPRs/SIMD) and
          llvm/docs/AMDGPUUsage.rst (processor table, LDS 64 KiB per workgroup, wave32)
  [SPEC]  AMD product specification pages (compute units, boost clock, memory bandwidth)
  [RATE]  dense WMMA FLOPs/clock/CU: RDNA3 whitepaper / [ISA4] comparison table:
          gfx11 f16=bf16=iu8 512, iu4 1024; gfx12 f16=bf16 1024, fp8=bf8=iu8 2048, iu4 4096.
  [CACHE] GPU L2 and Infinity Cache (memory-attached last level, MALL) sizes: AMD product
          specification pages ("L2 Cache", "AMD Infinity Cache") for the discrete cards;
          Chips and Cheese, "Strix Halo's Memory Subsystem" (2025: 2 MB L2 + 32 MB MALL) and
          "Evaluating the Infinity Cache in AMD Strix Halo" (2025) for gfx1151; Strix Point's
          iGPU has a 2 MB L2 and no Infinity Cache (same article's comparison).
  [ELF]   llvm/test/CodeGen/AMDGPU/elf-header-flags-mach.ll (EF_AMDGPU_MACH_AMDGCN_GFX11xx values:
          gfx1103 0x44, gfx1152 0x55, gfx1153 0x58, gfx1170 0x5D, gfx1171 0x5E); gfx1170's 0x5D
          also read back from the e_flags of a code object built here (LLVM 23, mlir-gml 0.0.4).
  [RDNA4M] gfx1170/gfx1171 ("RDNA 4m"): gfx11-numbered processors (GFX11 encodings, s_waitcnt,
          system-SGPR workgroup ids) whose WMMA is the GFX12 one: llvm/llvm-project PR #180731
          ("[AMDGPU] Add WMMA and SWMMAC instructions for gfx1170") adds FeatureWMMA256bInsts
          (GFX11 WMMA) and FeatureWMMA128bInsts ("GFX1170 and GFX12 WMMA and SWMMAC"), with
          `_gfx1170` Real encodings in VOP3PInstructions.td; GCNProcessors.td gives gfx1170/
          gfx1171 FeatureISAVersion11_7_Common. Checked on compiler output here: gfx1170's
          v_wmma_f32_16x16x16_f16 takes 4-VGPR A/B (8 halves, the GFX12 layout) under VOP3P
          opcode 0x40, and its i8 variant 2-VGPR A/B under 0x44.
  [VGPRPROBE] LLVM's own VGPR-file model, read back from compiler output (tests/compile/
          test_targets_new.py): under "amdgpu-waves-per-eu"="6,6" LLVM 23 and 24 cap a ~220-VGPR
          kernel at 160 VGPRs (1024/6 rounded down to the granule 16) on gfx1170/gfx1171, as on
          gfx1102/gfx1103, and report "final occupancy is 5" at 171-175 VGPRs; gfx1100/gfx1151
          (FeatureGFX11FullVGPRs, 1536) keep 224. AMDGPU.td's FeatureISAVersion11_7 list itself
          was not among the sources read.
  [UNKNOWN] no public product figure (unreleased or unnamed part): the field is None, and
          peak/model code raises an error naming the field instead of inventing a number.
  [CALIB] sustained WMMA clock: calibrated against others' published measurements
          (docs/calibration/points.csv, fit by bench/calibrate.py, report in
          results/model_calibration.md); each target's `sustained_source` says which points.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ScheduleError

# dtype -> WMMA instruction description per family. Operand element counts per lane are
# those of layouts.ab_elements ([ISA3] 7.9 and [ISA4]); acc names the C/D type.


@dataclass(frozen=True)
class WmmaInstr:
    """One WMMA instruction variant: C[16x16] (+)= A[16xK] @ B[Kx16]."""
    mnemonic: str
    in_dtype: str
    acc: str
    k: int
    a_elems: int  # elements of A (and B) per lane
    c_elems: int  # elements of the C/D vector value per lane (16 for gfx11 16-bit acc)

    def __post_init__(self):
        if self.k not in (16, 32):
            raise ValueError(f"WmmaInstr.k={self.k}: only 16 or 32 exist")


def _gfx11_instrs() -> dict[tuple[str, str], WmmaInstr]:
    # [ISA3] 7.9 / AMDGPUAsmGFX11.rst: v_wmma_* opcodes of RDNA3
    return {
        ("f16", "f32"): WmmaInstr("v_wmma_f32_16x16x16_f16", "f16", "f32", 16, 16, 8),
        ("bf16", "f32"): WmmaInstr("v_wmma_f32_16x16x16_bf16", "bf16", "f32", 16, 16, 8),
        ("f16", "f16"): WmmaInstr("v_wmma_f16_16x16x16_f16", "f16", "f16", 16, 16, 16),
        ("bf16", "bf16"): WmmaInstr("v_wmma_bf16_16x16x16_bf16", "bf16", "bf16", 16, 16, 16),
        ("i8", "i32"): WmmaInstr("v_wmma_i32_16x16x16_iu8", "i8", "i32", 16, 16, 8),
        ("i4", "i32"): WmmaInstr("v_wmma_i32_16x16x16_iu4", "i4", "i32", 16, 16, 8),
    }


def _gfx12_instrs() -> dict[tuple[str, str], WmmaInstr]:
    # [ISA4] / AMDGPUAsmGFX12.rst: RDNA4 WMMA, 8 A/B elements per lane, no duplication
    return {
        ("f16", "f32"): WmmaInstr("v_wmma_f32_16x16x16_f16", "f16", "f32", 16, 8, 8),
        ("bf16", "f32"): WmmaInstr("v_wmma_f32_16x16x16_bf16", "bf16", "f32", 16, 8, 8),
        ("f16", "f16"): WmmaInstr("v_wmma_f16_16x16x16_f16", "f16", "f16", 16, 8, 8),
        ("bf16", "bf16"): WmmaInstr("v_wmma_bf16_16x16x16_bf16", "bf16", "bf16", 16, 8, 8),
        ("fp8", "f32"): WmmaInstr("v_wmma_f32_16x16x16_fp8_fp8", "fp8", "f32", 16, 8, 8),
        ("bf8", "f32"): WmmaInstr("v_wmma_f32_16x16x16_bf8_bf8", "bf8", "f32", 16, 8, 8),
        ("i8", "i32"): WmmaInstr("v_wmma_i32_16x16x16_iu8", "i8", "i32", 16, 8, 8),
        ("i4", "i32"): WmmaInstr("v_wmma_i32_16x16x16_iu4", "i4", "i32", 16, 8, 8),
    }


@dataclass(frozen=True)
class Target:
    arch: str
    name: str                 # product used for the clock/CU/bandwidth figures
    family: str               # "gfx11" | "gfx12": WMMA layout family (layouts.py), NOT the name prefix
    cus: int | None           # [SPEC]; None = [UNKNOWN]
    boost_ghz: float | None   # [SPEC]; None = [UNKNOWN]
    mem_bw_gbs: float | None  # [SPEC] peak DRAM bandwidth, GB/s; None = [UNKNOWN]
    wave_size: int = 32       # WMMA is wave32-only on RDNA ([ISA3] 7.9)
    lds_bytes: int = 65536    # [LLVM] AMDGPUUsage: 64 KiB LDS per workgroup on gfx11/gfx12
    vgprs_per_simd: int = 1536   # [LLVM] 1536 with FeatureGFX11FullVGPRs, else 1024
    vgpr_granule: int = 24       # [LLVM] wave32 allocation granule: 24 (full VGPRs) or 16
    max_vgprs_per_wave: int = 256  # wave32 addressable VGPRs ([ISA3] 3.3)
    max_waves_per_simd: int = 16   # [ISA3] 2.x: 16 wave slots per SIMD (wave32)
    simds_per_cu: int = 2          # [ISA3]: a CU holds two SIMD32s (WGP = 2 CUs)
    max_workgroup_threads: int = 1024  # [LLVM] AMDGPUUsage: flat workgroup size limit
    elf_mach: int = 0              # [LLVM] AMDGPUUsage "AMDGPU EF_AMDGPU_MACH Values"; [ELF]
    wmma: dict = field(default_factory=dict)  # (in_dtype, acc) -> WmmaInstr
    rate: dict = field(default_factory=dict)  # in_dtype -> dense FLOPs/clock/CU [RATE]; None = [UNKNOWN]
    l2_bytes: int | None = None    # [CACHE] GPU L2; None = [UNKNOWN]
    infinity_cache_bytes: int | None = 0  # [CACHE] Infinity Cache / MALL; 0 = none, None = [UNKNOWN]
    sustained_ghz: float = 0.0     # [CALIB] clock the WMMA pipe sustains under load; 0 = no data (boost used)
    sustained_source: str = ""     # which published points it comes from, and how
    encoding: str = ""             # ISA encoding family of everything but WMMA; "" = same as family ([RDNA4M])
    vgprs_source: str = "[LLVM]"   # where vgprs_per_simd / vgpr_granule come from

    def __post_init__(self):
        if not self.encoding:
            object.__setattr__(self, "encoding", self.family)
        if self.encoding not in ("gfx11", "gfx12"):
            raise ValueError(f"Target.encoding={self.encoding!r}: expected gfx11 or gfx12")
        if self.sustained_ghz and not self.sustained_source:
            raise ValueError(f"{self.arch}: sustained_ghz={self.sustained_ghz} needs its sustained_source")
        if self.family not in ("gfx11", "gfx12"):
            raise ValueError(f"Target.family={self.family!r}: expected gfx11 or gfx12")
        for (dt, _acc), ins in self.wmma.items():
            if dt not in self.rate:
                raise ValueError(f"{self.arch}: WMMA dtype {dt} has no peak rate")
            if ins.a_elems != {"gfx11": 16, "gfx12": 8}[self.family]:
                raise ValueError(f"{self.arch}: {ins.mnemonic} a_elems={ins.a_elems} contradicts family")

    @property
    def cache_bytes(self) -> int:
        """L2 + Infinity Cache: data a kernel may find on chip between launches. The GPU timer
        rotates operand sets larger than this so every timed launch reads DRAM; an unknown size
        raises (an under-estimate would let timed launches hit a warm cache)."""
        for fact in ("l2_bytes", "infinity_cache_bytes"):
            if getattr(self, fact) is None:
                raise ScheduleError(f"{self.arch}.{fact}", None, f"no public cache size for {self.name}: "
                                    "pass cache_bytes (the bytes the timing operand sets must exceed)")
        return self.l2_bytes + self.infinity_cache_bytes

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(dt for dt, _ in self.wmma))

    def accs(self, dtype: str) -> tuple[str, ...]:
        return tuple(acc for dt, acc in self.wmma if dt == dtype)

    @property
    def unknown(self) -> tuple[str, ...]:
        """The product facts without a public figure ([UNKNOWN])."""
        facts = {"cus": self.cus, "boost_ghz": self.boost_ghz, "mem_bw_gbs": self.mem_bw_gbs,
                 "l2_bytes": self.l2_bytes, "infinity_cache_bytes": self.infinity_cache_bytes,
                 **{f"rate[{d}]": r for d, r in self.rate.items()}}
        return tuple(k for k, v in facts.items() if v is None)

    def peak_known(self, dtype: str) -> bool:
        return None not in (self.cus, self.boost_ghz, self.rate.get(dtype))

    def require(self, fact: str):
        """The value of product fact `fact` (cus, boost_ghz, mem_bw_gbs), or an error naming it
        when no public figure exists: the peak and the model never run on an invented number."""
        value = getattr(self, fact)
        if value is None:
            raise ScheduleError(f"{self.arch}.{fact}", None, f"no public figure for {self.name}: the peak rate and "
                                f"the performance model need it (known for {', '.join(known_product_archs())})")
        return value

    def peak_tflops(self, dtype: str) -> float:
        """Dense peak in TFLOP/s (TOP/s for integers) = rate x CUs x clock."""
        rate = self.rate[dtype]
        if rate is None:
            raise ScheduleError(f"{self.arch}.rate[{dtype}]", None, f"no public WMMA rate for {self.name}")
        return rate * self.require("cus") * self.require("boost_ghz") * 1e9 / 1e12

    def sustained_peak_tflops(self, dtype: str) -> float:
        """Dense peak at the sustained WMMA clock ([CALIB]); the nominal peak where none is known."""
        peak = self.peak_tflops(dtype)
        return peak * (self.sustained_ghz or self.boost_ghz) / self.boost_ghz

    def instr(self, dtype: str, acc: str) -> WmmaInstr:
        try:
            return self.wmma[(dtype, acc)]
        except KeyError:
            allowed = ", ".join(f"{d}/{a}" for d, a in self.wmma)
            raise ScheduleError("dtype/acc", f"{dtype}/{acc}", f"{self.arch} supports {allowed}") from None


def _gfx1170_instrs() -> dict[tuple[str, str], WmmaInstr]:
    # [RDNA4M]: the GFX12 WMMA (8 A/B elements per lane). fp8/bf8 (VOP3P 0x46-0x49 on GFX12) are
    # left out: the emulator decodes gfx1170 with the GFX11 opcode tables, which lack those
    # opcodes, so no fp8 kernel could be verified for it here.
    return {k: v for k, v in _gfx12_instrs().items() if k[0] not in ("fp8", "bf8")}


_R11 = {"f16": 512, "bf16": 512, "i8": 512, "i4": 1024}
# [UNKNOWN] gfx1170/gfx1171: GFX12-style WMMA says nothing about its rate per CU (llama.cpp's
# RDNA4_M family note: "more like RDNA4, with 128b WMMA. But they're not identical").
_R_UNKNOWN = {"f16": None, "bf16": None, "i8": None, "i4": None}
_R12 = {"f16": 1024, "bf16": 1024, "fp8": 2048, "bf8": 2048, "i8": 2048, "i4": 4096}

# [CALIB] sustained WMMA clocks: bench/calibrate.py fits them on docs/calibration/points.csv (others'
# published measurements; ids name the rows); results/model_calibration.md holds the fit. None elsewhere.
_SUSTAINED = {
    "gfx1151": "lower bound from published kernels (model/calibration.fit clock floors): AITER's Triton FA backward "
               "20.812 TFLOP/s with ROCm/aiter PR #4242's tuned config (row fa-1151-bwd) needs 2.140 GHz for its loops "
               "as compiled here (Triton 3.9.0: v_wmma + VALU per trip, efficiency 1, no stall); rocm_wmma_gemm "
               "8192^3 f16 41.8 TFLOP/s, as quoted in issue #17 (row lib-1151-rwg-8192), needs 2.041 GHz at the dense "
               "WMMA rate. Both above the WMMA microbenchmark's 36-37 TFLOP/s (max of 3, 9-21% thermal swing), as "
               "quoted in issue #17: 36.5 / 59.4 nominal x 2.9 GHz = 1.782 GHz (row mb-1151-bf16)",
    "gfx1201": "bf16 WMMA microbenchmark 200 TFLOP/s, as quoted in issue #17: 200 / 194.6 nominal x 2.97 GHz "
               "(row mb-1201-bf16); above the product page's boost clock",
    "gfx1100": "the boost clock: fitted (log least squares with the family efficiencies) to torch.matmul fp16 "
               "4096^3 105.4 and Triton/AITER FA D=128 60.8 TFLOP/s, as quoted in issue #17 (rows lib-1100-torch-f16, "
               "fa-1100-aiter), the fit went above boost (2.674 GHz) and is bounded there (model/calibration.fit: "
               "without a microbenchmark a fitted clock is this target's share of the efficiency misfit); no gfx1100 "
               "WMMA microbenchmark is among the points",
}

TARGETS: dict[str, Target] = {t.arch: t for t in (
    # RX 7900 XTX: 96 CU, 2.5 GHz boost, 960 GB/s [SPEC]
    Target("gfx1100", "Radeon RX 7900 XTX", "gfx11", 96, 2.5, 960.0, wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x41,
           l2_bytes=6 << 20, infinity_cache_bytes=96 << 20, sustained_ghz=2.5, sustained_source=_SUSTAINED["gfx1100"]),
    # RX 7800 XT: 60 CU, 2.43 GHz boost, 624 GB/s [SPEC]
    Target("gfx1101", "Radeon RX 7800 XT", "gfx11", 60, 2.43, 624.0, wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x46,
           l2_bytes=4 << 20, infinity_cache_bytes=64 << 20),
    # RX 7600: 32 CU, 2.655 GHz boost, 288 GB/s [SPEC]; 1024 VGPRs/SIMD [LLVM]
    Target("gfx1102", "Radeon RX 7600", "gfx11", 32, 2.655, 288.0, vgprs_per_simd=1024, vgpr_granule=16,
           wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x47, l2_bytes=2 << 20, infinity_cache_bytes=32 << 20),
    # Radeon 780M (Phoenix / Hawk Point, Ryzen 9 7940HS): 12 CU, 2.8 GHz, LPDDR5X-7500 128-bit = 120 GB/s
    # [SPEC]; 1024 VGPRs/SIMD [LLVM]; GPU L2 size [UNKNOWN]; no Infinity Cache on the product page
    Target("gfx1103", "Radeon 780M (Phoenix)", "gfx11", 12, 2.8, 120.0, vgprs_per_simd=1024, vgpr_granule=16,
           wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x44),
    # Radeon 890M (Strix Point): 16 CU, 2.9 GHz, LPDDR5X-7500 128-bit = 120 GB/s [SPEC]
    Target("gfx1150", "Radeon 890M (Strix Point)", "gfx11", 16, 2.9, 120.0, vgprs_per_simd=1024,
           vgpr_granule=16, wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x43, l2_bytes=2 << 20),
    # Radeon 8060S (Strix Halo): 40 CU, 2.9 GHz, LPDDR5X-8000 256-bit = 256 GB/s [SPEC]
    Target("gfx1151", "Radeon 8060S (Strix Halo)", "gfx11", 40, 2.9, 256.0, wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x4a,
           l2_bytes=2 << 20, infinity_cache_bytes=32 << 20, sustained_ghz=2.14, sustained_source=_SUSTAINED["gfx1151"]),
    # Radeon 860M (Krackan Point, Ryzen AI 7 350): 8 CU, 3.0 GHz, LPDDR5X-8000 128-bit = 128 GB/s [SPEC];
    # 1024 VGPRs/SIMD [LLVM]; L2 [UNKNOWN]; no Infinity Cache on the product page
    Target("gfx1152", "Radeon 860M (Krackan Point)", "gfx11", 8, 3.0, 128.0, vgprs_per_simd=1024, vgpr_granule=16,
           wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x55),
    # gfx1153: in LLVM's processor table (GFX11.5, ELF 0x58 [ELF]) without a public product: CUs, clock and
    # bandwidth [UNKNOWN]; RDNA3.5 WMMA rate per CU as gfx1150/1151 [RATE]; 1024 VGPRs/SIMD [LLVM]
    Target("gfx1153", "RDNA 3.5 (not public)", "gfx11", None, None, None, vgprs_per_simd=1024,
           vgpr_granule=16, wmma=_gfx11_instrs(), rate=_R11, elf_mach=0x58, infinity_cache_bytes=None),
    # gfx1170 / gfx1171 ("RDNA 4m", AMDGPUUsage product TBA): GFX11 encodings with GFX12 WMMA [RDNA4M];
    # CUs, clock, bandwidth, WMMA rate and caches [UNKNOWN]. VGPR file 1024/SIMD, granule 16 [VGPRPROBE]
    *[Target(arch, "RDNA 4m (product not public)", "gfx12", None, None, None, vgprs_per_simd=1024,
             vgpr_granule=16, wmma=_gfx1170_instrs(), rate=_R_UNKNOWN, elf_mach=mach, encoding="gfx11",
             infinity_cache_bytes=None,
             vgprs_source="[VGPRPROBE]")
      for arch, mach in (("gfx1170", 0x5D), ("gfx1171", 0x5E))],
    # RX 9060 XT: 32 CU, 3.13 GHz boost, 322 GB/s [SPEC]
    Target("gfx1200", "Radeon RX 9060 XT", "gfx12", 32, 3.13, 322.0, wmma=_gfx12_instrs(), rate=_R12, elf_mach=0x48,
           l2_bytes=4 << 20, infinity_cache_bytes=32 << 20),
    # RX 9070 XT: 64 CU, 2.97 GHz boost, 644.6 GB/s [SPEC]
    Target("gfx1201", "Radeon RX 9070 XT", "gfx12", 64, 2.97, 644.6, wmma=_gfx12_instrs(), rate=_R12, elf_mach=0x4e,
           l2_bytes=8 << 20, infinity_cache_bytes=64 << 20, sustained_ghz=3.052, sustained_source=_SUSTAINED["gfx1201"]),
)}


def known_product_archs() -> tuple[str, ...]:
    """Targets whose CUs, clock, bandwidth and WMMA rates have public figures: the peak and the
    model run on them (an unknown L2 size the model replaces by a marked assumption, model/params.py)."""
    return tuple(a for a, t in TARGETS.items()
                 if not any(f in ("cus", "boost_ghz", "mem_bw_gbs") or f.startswith("rate[") for f in t.unknown))


def get_target(arch: str) -> Target:
    try:
        return TARGETS[arch]
    except KeyError:
        raise ScheduleError("arch", arch, f"one of {', '.join(TARGETS)}") from None
