"""The built-in default schedule, fitted to a problem, used when no tuned schedule exists.

LARGE is the large-GEMM default: 128x256x32 macro tile, 2x4 waves (64x64 per wave, 16 WMMA
tiles), A and B staged through double-buffered LDS with prefetch, 128-bit loads (64-bit for
8-bit operands), two K tiles per loop iteration. Measured on the compiled ISA
(bench/gemm_static_quality.py, both MLIR providers): no spills on gfx1100/gfx1151/gfx1201 for
every dtype and layout, 64 v_wmma per main-loop iteration. `sched_strategy` is the LLVM
scheduler the kernel builder asks for: chosen here because it was measured on this tile.
"""
from __future__ import annotations

from ...dtype_bits import BITS
from ...targets import Target, get_target
from .directive import GemmDirective
from .problem import as_problem
from .schedule import KNOBS, Schedule, vgpr_estimate

LARGE = Schedule(block_m=128, block_n=256, block_k=32, waves_m=2, waves_n=4, lds="ab", buffers=2,
                 lds_pad=8, lds_store_bits=32, load_bits=128, k_unroll=2, raster="grouped", group_m=4)

# Grid-filling blocks: the SAME 4x4-fragment wave tile as LARGE (64x64 per wave), fewer waves,
# in order of main-loop density (gfx1100 2048^3, docs/model_calibration.md: 128x128 2x2 0.266,
# 256x64 4x1 0.268, 64x256 1x4 0.221; LARGE 0.275). Published GPU-tuned data (7900 XTX) fills the
# grid with 4x4-fragment waves: adelj88/rocm_wmma_gemm config/gemm_config_gfx1100_f16.json, A/B/C
# row-major, 2048^3 1x4 warps of 4x4 (64x256, 256 workgroups), 1024^3 1x1 of 4x4 (64x64); with
# column-major A at 2048^3 2x1 / 4x2 / 4x1 of 4x4 (other layouts there take 2x2-2x4 fragments).
# The model spreads the three blocks by 2-3% with no layout-independent winner (docs/
# model_calibration.md), so the rule picks by grid fill.
FILL = (LARGE.replace(block_m=128, block_n=128, waves_m=2, waves_n=2),
        LARGE.replace(block_m=256, block_n=64, waves_m=4, waves_n=1),
        LARGE.replace(block_m=64, block_n=256, waves_m=1, waves_n=4))
# A grid that leaves more than this share of CU-rounds idle takes a grid-filling block (the
# model's "tail" limiter uses the same 25%: model/estimate.py TAIL_THRESHOLD).
IDLE_LIMIT = 0.25

SMALL_GATHER = Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="none", load_bits=128)


def _fit(knob: str, extent: int, cap: int) -> int:
    """Smallest domain value covering `extent`, at most `cap`."""
    return min(v for v in KNOBS[knob].domain if v >= min(extent, cap))


def grid_fill(t: Target, p, s: Schedule) -> float:
    """Share of CU-rounds busy: workgroups over ceil(workgroups / CUs) x CUs (targets.py CU
    count); one workgroup per CU per round, as the LARGE tile runs (LDS-bound)."""
    wgs = -(-p.m // s.block_m) * -(-p.n // s.block_n) * p.batch
    return wgs / (-(-wgs // t.cus) * t.cus)


def grid_filling_base(t: Target, p) -> Schedule:
    """LARGE, unless its grid leaves more than IDLE_LIMIT of the CU-rounds idle (e.g. gfx1100
    1024^3: 32 workgroups for 96 CUs; 2048^3: 128, the second round a third full); then the
    FILL block (same 4x4 wave tile, fewer waves) that fits the problem unshrunk and fills the
    grid best, ties to the denser one. Unknown CU count: LARGE."""
    if t.cus is None or p.m < LARGE.block_m or p.n < LARGE.block_n or 1 - grid_fill(t, p, LARGE) <= IDLE_LIMIT:
        return LARGE
    best = LARGE
    for s in FILL:
        if p.m >= s.block_m and p.n >= s.block_n and grid_fill(t, p, s) > grid_fill(t, p, best):
            best = s
    return best


def staged_operands(d: GemmDirective) -> str:
    """Stage both operands, except packed i4 ones that are not K-contiguous (see
    schedule.lds_i4_k_contiguous)."""
    if d.dtype != "i4":
        return "ab"
    staged = ("a" if not d.trans_a else "") + ("b" if d.trans_b else "")
    return staged or "none"


def fitted_default(d: GemmDirective, t: Target, problem, base: Schedule | None = None) -> Schedule:
    """`base` (None: grid_filling_base, LARGE or a grid-filling block of the same wave tile) with each macro-tile side shrunk to cover `problem` (a GemmProblem or a mapping of
    its fields; any M, N, K works: the kernel guards its edges), waves reduced to match, and
    legal staging for the dtype."""
    p = as_problem(problem)
    large = base is None
    if large:
        base = grid_filling_base(t, p)
    bm, bn = _fit("block_m", p.m, base.block_m), _fit("block_n", p.n, base.block_n)
    s = base.replace(block_m=bm, block_n=bn, block_k=_fit("block_k", p.k, base.block_k),
                     waves_m=min(base.waves_m, bm // 16), waves_n=min(base.waves_n, bn // 16))
    if -(-p.k // s.block_k) < 4:
        # a loop of fewer than 4 K tiles gains nothing from unrolling, and the unrolled body's
        # remainder copy spilled 2 VGPRs for TT at K=48 on gfx11 (tests/compile spill grid)
        s = s.replace(k_unroll=1)
    if t.family == "gfx12" and s.lds != "none":
        # measured (bench/gemm_static_quality.py): 64-bit LDS stores cut DS ops. k_unroll stays
        # 2: with operands and C addressed as SGPR base + 32-bit VGPR offset (kernels/globalmem)
        # it compiles without spills (64-bit per-lane addresses had spilled 4-44 VGPRs)
        s = s.replace(lds_store_bits=64)
    if BITS[d.dtype] == 8 and s.lds != "none":
        # measured (bench/gemm_static_quality.py, compiler output, LLVM 23 and 24 alike): 64-bit
        # loads of 8-bit operands. An operand stored across K reaches LDS as byte pairs (v_perm_b32
        # + ds_store_b16) instead of single bytes (v_lshrrev_b32 + ds_store_b8): gfx1201 fp8 TT 64
        # v_wmma in 139 issued instructions instead of 160. v_wmma per issued instruction, LLVM 23/24
        # (one figure: both), i8/fp8/bf8: gfx1201 NN 0.398/0.403 -> 0.416, TN 0.315 -> 0.352, TT
        # 0.405/0.400 -> 0.457/0.460; gfx11 i8 NN 0.352/0.350 -> 0.360, TN 0.281 -> 0.315, TT
        # 0.346/0.350 -> 0.393; NT unchanged; 0 spills
        s = s.replace(load_bits=64)
    lds = staged_operands(d) if s.lds != "none" else "none"
    if lds != s.lds and large:
        # an operand read straight from global (i4 gathered nibble by nibble) needs far more
        # registers per fragment: a 64x64 tile keeps it spill-free
        # gfx12: two K tiles per iteration (measured: i4 NN/TT 0.043 -> 0.044 v_wmma per issued
        # instruction with LLVM 23, 0.042 -> 0.044 with LLVM 24; gfx11 gains nothing)
        return fitted_default(d, t, p, SMALL_GATHER.replace(lds=lds, buffers=2 if lds != "none" else 1,
                                                            k_unroll=2 if t.family == "gfx12" else 1))
    s = s.replace(lds=lds, buffers=s.buffers if lds != "none" else 1, lds_pad=s.lds_pad if lds != "none" else 0)
    return s.validate(d, t, p)


# Where iterative-ilp was measured to help (bench/gemm_static_quality.py, LLVM 23 and 24): the
# large default tile -- 8 waves of 4x4 fragments, both operands double-buffered in LDS -- with
# register headroom (vgpr_estimate, of 256). Elsewhere it was measured to hurt: the gfx11 16-bit
# default (224 estimated) spilled 237-335 VGPRs, the shipped tuned gfx1100 f16 tiles spilled 6
# or lost density. Measured exceptions, (family, operand bits, accumulator bits, layout or None):
# - gfx12 16-bit NN: 0.358 v_wmma/issued with the default strategy under both LLVMs,
#   iterative-ilp 0.352 (LLVM 23);
# - gfx12 16-bit operands with f32 accumulators, NN: 0.358 with the default strategy vs 0.352
#   (LLVM 23); NT/TN/TT take iterative-ilp since the epilogue may interleave with the last WMMAs
#   (kernel._double_buffered): 0.410/0.332/0.395 (LLVM 24), 0.410/0.323/0.386 (LLVM 23), 0 spills,
#   with a hazard v_nop the emulator runs (docs/mlir_providers.md).
ILP_VGPR_LIMIT = 200
ILP_EXCEPT = {("gfx12", 16, 16, "NN"), ("gfx12", 16, 32, "NN")}


def fit_schedule(d: GemmDirective, arch: str, problem) -> Schedule:
    """The built-in default (LARGE) fitted to `problem` (a GemmProblem); raises ScheduleError
    naming the failing check."""
    return fitted_default(d, get_target(arch), problem)


def default_schedule(d: GemmDirective, arch: str, problem) -> Schedule:
    """schedules_db.lookup (exported tuned schedules) when present, else fit_schedule."""
    from .lookup import lookup
    found = lookup(arch, d, problem)
    return found if found is not None else fit_schedule(d, arch, problem)


def sched_strategy(d: GemmDirective, s: Schedule, t: Target, key=None) -> str | None:
    """LLVM's machine-scheduler strategy for this kernel: the "amdgpu-sched-strategy" function
    attribute, read by GCNTargetMachine::createMachineScheduler (llvm/lib/Target/AMDGPU/
    AMDGPUTargetMachine.cpp: max-ilp, max-memory-clause, iterative-ilp, ...); None keeps the
    default occupancy-first GCNMaxOccupancySchedStrategy. "iterative-ilp" where measured to
    help (above): e.g. gfx1201 16-bit TT 0.360 -> 0.386/0.395 (LLVM 23/24), gfx1100 i8 NT
    0.454 -> 0.460, and LLVM 24's lower default-strategy figures (gfx1100 i8 NT 0.435, gfx1201
    fp8 NT 0.520) back above LLVM 23's. The occupancy it gives up is not there to take: these
    kernels run one or two workgroups per WGP, bounded by LDS. A schedule knob would let the
    tuner choose it; the schedule table does not have one yet. `key` (signature.GemmKey, the
    specialization the kernel is built for): with row, column or depth guards (a size not a
    multiple of the tile) the default strategy -- iterative-ilp spilled 8-12 VGPRs there
    (gfx1201 16-bit f32-acc NT/TN/TT at 1000^3, both LLVMs, compiler output). Split-K too: its
    epilogue spilled 53 VGPRs under iterative-ilp (gfx1201 bf16 NT 256x256x4096, split_k 4)."""
    if s.split_k > 1 or (key is not None and not (key.m_full and key.n_full and key.k_full)):
        return None
    key = (t.family, BITS[d.dtype], BITS[d.acc])
    large = s.frags_m == s.frags_n == 4 and s.waves_m * s.waves_n == 8 and s.lds == "ab" and s.buffers == 2
    if (large and vgpr_estimate(s, d, t) <= ILP_VGPR_LIMIT
            and key + (d.layout,) not in ILP_EXCEPT and key + (None,) not in ILP_EXCEPT):
        return "iterative-ilp"
    return None
