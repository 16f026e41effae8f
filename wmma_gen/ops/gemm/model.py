"""GPU-less time estimate of one compiled GEMM kernel (source = "model", never a measurement).

    per wave, per main-loop iteration (from the ISA, isa_loop.py):
        pipe  = n_wmma * wmma_cycles + n_valu * valu_clk      VALU pipe occupancy
        alone = issue + stalls at s_waitcnt                     one wave's critical path
        vmem  = sum max(vmem_min_clk, 32 lanes * bytes / L0 B/clk)   CU texture/L0 path
                + L0 line reads above that (l0_lines.py)      A/B loads whose lanes span rows
        lds   = sum bank-model clocks of the DS instructions   (banks.py)
    a CU running n workgroups (W = waves on its busiest SIMD), for `iters` iterations:
        lds   = iters * n * waves * lds                         lds_bandwidth
        simd  = iters * max(W * pipe, alone) + epilogue + lds_exposed * lds   wmma_issue | latency
        l0    = iters * n * waves * vmem                        global_memory
        T(n)  = max(simd, lds, l0)
    rounds: the busiest CU runs ceil(workgroups / CUs) workgroups, wgs_per_cu at a time.
    kernel = max(rounds, L2 bytes / L2 bandwidth, L2-miss bytes / MALL bandwidth,
                 DRAM bytes / achievable bandwidth,
                 flops / peak, compulsory bytes / peak bandwidth) + launch overhead
Limiter: the largest term; "tail" when the last, partly filled round costs more than 25% of
the compute time. Figure `issue_share` (not a term): the SIMD issue slots one loop iteration of
its W waves takes, W * issued instructions, over the round's clocks max(W * pipe, alone), as if a
SIMD issued one instruction per clock in all -- a pessimistic bound (RDNA issues from several waves
per clock to different units; dual issue is VOPD, one encoded pair of VALU ops). It stays far below
1 whenever a v_wmma holds the pipe 32 clocks (gfx11 f16: "A single WMMA instruction coordinates
32 clocks", gpuopen.com/learn/wmma_on_rdna3): v_wmma per issued instruction ("loop density")
alone does not limit the WMMA pipe there (gfx1100 f16 4096^3: 0.18 at density 0.17, 0.11 at 0.27).
`lds_exposed` (params.py, fitted on the published library tiles: ops/calibration_ranking.py) is the share
of the CU's LDS time the WMMAs of the other waves do not hide -- without it LDS and WMMA overlap fully
and a wave tile of 4x2 fragments (0.75 fragment loads per WMMA) ranked above the 4x4 (0.5) that every
published tuned library picks (issue 38).
The L0 path counts the 128-byte lines each A/B load touches ([RDNA]: the L0 reads one line per clock;
l0_lines.py): a one-wave 128x32 tile without LDS reads each A fragment as 16 rows per load, 16 lines for
64 bytes of data per row pair, and 16 such waves per CU keep the L0 busier than their WMMAs (issue 38).
Loads outside the loop (prologue) keep the lane-byte count.
Assumptions and their sources: params.py; traffic model: traffic.py.
Calibration (calibration.py): clocks are the target's sustained WMMA clock, the compute terms
(rounds, peak floor) are divided by the fitted GEMM efficiency, and est_low / est_high are the
TFLOP/s figure times the calibration band -- still an estimate (source "model").
"""
from __future__ import annotations

import math

from ...errors import ScheduleError
from ...model.calibration import bounds, factors
from ...model.estimate import TAIL_THRESHOLD, Estimate, Resources, loop_stats, vmem_clocks
from ...model.isa_loop import LoopStats, wave_iteration_clocks
from ...model.occupancy import busiest_simd_waves, occupancy
from ...model.params import params_for, wmma_cycles
from ...targets import Target, get_target
from . import banks, l0_lines
from .directive import GemmDirective
from .problem import as_problem
from .schedule import Schedule
from .traffic import traffic, workgroups


def estimate(kernel, directive: GemmDirective, schedule: Schedule, target: Target | str,
             problem) -> Estimate:
    """Estimate for a compiled kernel (a build.GemmKernel or compiler.CompiledKernel) on
    `problem` (a GemmProblem)."""
    c = getattr(kernel, "compiled", kernel)
    md = c.metadata
    threads = md.reqd_workgroup_size[0] if md.reqd_workgroup_size else schedule.threads
    res = Resources(md.vgpr_count, md.lds_bytes, threads, md.vgpr_spill_count, md.sgpr_spill_count)
    return estimate_from(loop_stats(c.isa), res, directive, schedule, target, problem)


def estimate_from(loop: LoopStats, res: Resources, d: GemmDirective, s: Schedule, target: Target | str,
                  problem) -> Estimate:
    t = get_target(target) if isinstance(target, str) else target
    size = as_problem(problem)
    flops = 2 * size.m * size.n * size.k * size.batch
    p = params_for(t.arch)
    ins = t.instr(d.dtype, d.acc)
    cyc = wmma_cycles(t, d.dtype, d.acc)
    cal = factors(t, "gemm")
    clock = cal.clock_ghz * 1e9
    occ = occupancy(res.vgprs, res.lds_bytes, res.threads, t, p)
    if occ.workgroups_per_cu < 1:
        raise ScheduleError.rejected("occupancy", f"no workgroup fits on a CU: limits {occ.limits}", s.to_dict())

    # --- per wave, per iteration --------------------------------------------------------
    k_wg = math.ceil(math.ceil(size.k / s.split_k) / s.block_k) * s.block_k
    wmma_per_wave = s.frags_m * s.frags_n * k_wg // ins.k
    implied = s.frags_m * s.frags_n * s.block_k // ins.k
    # iterations from the WMMA work the schedule implies, so partial unrolling counts right;
    # a fully unrolled kernel (no loop) is one "iteration" of all its code
    # (WMMAs outside the loop -- a peeled last tile of a double-buffered kernel -- are costed
    # with the epilogue, not as loop iterations)
    outside_wmma = sum(o.kind == "wmma" for o in loop.outside)
    iters = (max(0, wmma_per_wave - outside_wmma) / loop.wmma if loop.wmma
             else (k_wg / s.block_k if loop.found else 1))
    cost = {"wmma": cyc, "valu": p.valu_clk, "hint": 0.0}
    pipe = loop.count("wmma") * cyc + loop.count("valu") * p.valu_clk
    alone = wave_iteration_clocks(loop.ops, cost, p.vmem_latency_clk, p.lds_latency_clk)
    # L0 line reads the lane-byte count misses (l0_lines.py: [RDNA] one 128-byte line per clock), per K tile
    lines = l0_lines.extra_clocks(d, s, t, size, p)
    tiles_per_iter = loop.wmma * ins.k / (s.frags_m * s.frags_n * s.block_k) if loop.wmma else k_wg / s.block_k
    vmem = vmem_clocks(loop.ops, p) + lines["extra"] * tiles_per_iter
    if s.lds != "none":
        deg = banks.loop_degrees(s, d, t, loop.widths("ds_read"), loop.widths("ds_write"), p.lds_banks, p.lds_bank_bytes)
        lds = deg["ds_read"]["clocks"] + deg["ds_write"]["clocks"]
    else:
        deg = {}
        lds = sum(math.ceil(32 * o.bits / 8 / p.lds_bytes_per_clk) for o in loop.ops if o.kind in ("ds_read", "ds_write"))
    # prologue + epilogue once per wave; spill code outside the loop: one scratch store and
    # load per spilled register, each paying the VMEM floor and a load latency per 16 spills
    spills = res.vgpr_spills + res.sgpr_spills
    epi_alone = (wave_iteration_clocks(loop.outside, cost, p.vmem_latency_clk, p.lds_latency_clk, passes=1)
                 + p.vmem_latency_clk + spills * 2 * p.vmem_min_clk + math.ceil(spills / 16) * p.vmem_latency_clk)
    epi_pipe = sum(cost.get(o.kind, 1.0) for o in loop.outside) + 2 * spills
    epi_vmem = vmem_clocks(loop.outside, p) + spills * 2 * p.vmem_min_clk

    def round_clk(n: int) -> tuple[float, str]:
        w = busiest_simd_waves(n, occ.waves_per_workgroup, t.simds_per_cu)   # model/occupancy.py
        l_lds = iters * n * occ.waves_per_workgroup * lds
        simd = iters * max(w * pipe, alone) + max(w * epi_pipe, epi_alone) + p.lds_exposed * l_lds
        simd_kind = "latency" if alone > w * pipe else "wmma_issue"
        l_l0 = (iters * vmem + epi_vmem) * n * occ.waves_per_workgroup
        terms = {simd_kind: simd, "lds_bandwidth": l_lds, "global_memory": l_l0}
        kind = max(terms, key=terms.get)
        return terms[kind], kind

    # --- rounds of workgroups on the busiest CU ----------------------------------------------
    n_wg = workgroups(d, s, size)
    busiest = -(-n_wg // t.cus)
    full, rem = divmod(busiest, occ.workgroups_per_cu)
    t_full, kind_full = round_clk(occ.workgroups_per_cu)
    if full == 0:
        t_full, kind_full = round_clk(rem)
        rounds_clk, full, rem = t_full, 1, 0
    else:
        rounds_clk = full * t_full + (round_clk(rem)[0] if rem else 0.0)
    balanced = n_wg / t.cus / occ.workgroups_per_cu * round_clk(occ.workgroups_per_cu)[0]
    tail = max(0.0, 1.0 - balanced / rounds_clk) if rounds_clk else 0.0

    concurrent = min(n_wg, t.cus * occ.workgroups_per_cu)
    tr = traffic(d, s, t, concurrent, p.l2_bytes, p.mall_bytes, problem=size)
    peak = t.peak_tflops(d.dtype)
    executed_flops = 2.0 * n_wg * s.block_m * s.block_n * k_wg
    times = {
        "compute_rounds": rounds_clk / clock / cal.efficiency,
        "l2": tr.l2_bytes / (p.l2_bytes_per_clk * clock),
        "mall": (tr.l2_miss_bytes / (p.mall_bw_gbs * 1e9)) if p.mall_bytes else 0.0,
        "dram": tr.dram_bytes / (t.mem_bw_gbs * 1e9 * p.dram_efficiency),
        "peak_floor": max(executed_flops, flops) / (peak * 1e12 * cal.clock_ghz / t.boost_ghz * cal.efficiency),
        "roofline_floor": tr.compulsory_bytes / (t.mem_bw_gbs * 1e9),
    }
    top = max(times, key=times.get)
    if top == "compute_rounds":
        limiter = "tail" if tail > TAIL_THRESHOLD else kind_full
    else:
        limiter = {"l2": "global_memory", "mall": "global_memory", "dram": "global_memory", "peak_floor": "wmma_issue",
                   "roofline_floor": "global_memory"}[top]
    seconds = times[top] + p.launch_overhead_us * 1e-6
    tflops = flops / seconds / 1e12
    figures = {
        "loop": loop.summary(), "occupancy": occ.to_dict(), "traffic": tr.to_dict(),
        "iterations_per_workgroup": iters, "wmma_per_iteration_implied": implied,
        "unroll": (loop.wmma / implied) if implied else 0.0, "wmma_cycles": cyc,
        "clocks_per_wave_iteration": {"valu_pipe": pipe, "wmma": loop.count("wmma") * cyc, "alone": alone,
                                      "vmem_path": vmem, "lds": lds},
        "l0_lines_per_k_tile": lines, "lds_conflicts": deg, "epilogue_clocks": {"alone": epi_alone, "pipe": epi_pipe, "vmem": epi_vmem},
        "workgroups": n_wg, "workgroups_busiest_cu": busiest, "rounds": full + (1 if rem else 0),
        "round_limiter": kind_full, "tail_fraction": tail, "times_s": times, "peak_tflops": peak,
        "issue_share": _issue_share(loop, busiest_simd_waves(occ.workgroups_per_cu, occ.waves_per_workgroup,
                                                             t.simds_per_cu), pipe, alone),
        "spills": spills, "params": p.to_dict(), "calibration": cal.to_dict(),
    }
    low, high = bounds(tflops, t, d.dtype, cal)
    return Estimate(seconds, tflops, tflops / peak, limiter, figures, est_low=low, est_high=high)


def _issue_share(loop: LoopStats, w: int, pipe: float, alone: float) -> float:
    """W waves' issued instructions per loop iteration over the iteration's SIMD clocks (module doc)."""
    clocks = max(w * pipe, alone)
    return w * loop.issued / clocks if clocks else 0.0
