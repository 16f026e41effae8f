"""GPU-less estimate of a kernel whose workgroups each run one main loop a known number of
times (source = "model", never a measurement). Shared by the attention ops; the op supplies
what only it knows (loop trips per workgroup, bytes per trip, FLOPs) -- this file knows no op.

    per wave, per loop trip (from the ISA, isa_loop.py):
        pipe  = n_wmma * wmma_cycles + (n_valu + 3 * n_trans) * valu_clk   VALU pipe occupancy
                (v_exp/v_log/v_rcp/v_sqrt are quarter rate: LLVM SISchedule.td
                 "F16 or F32 transcendental instructions (these are quarter rate)")
        alone = issue + stalls at s_waitcnt                                one wave's critical path
        lds   = DS bytes / LDS bytes per clock (no bank-conflict model)
    r = workgroups resident per CU = min(n occupancy limit, ceil(workgroups / CUs))
    a CU running r workgroups (W = ceil(r * waves per workgroup / SIMDs) waves on its busiest SIMD,
    occupancy.py): trip = max(W * pipe, alone, lds)     (+ lds_exposed x CU LDS clocks on the first two
    when the caller asks: a GEMM under the gemm family, ops/gemm/model.py)
    compute = total trips / min(workgroups, CUs * n) * trip + rounds * epilogue   (work spread evenly)
    kernel  = max(compute, L2 bytes / L2 bandwidth, compulsory bytes / DRAM bandwidth) + launch
Assumptions beyond GEMM's (model/params.py): trips spread evenly over CUs (no tail term); the
dispatcher spreads a grid over all CUs before stacking workgroups on one (so a small grid's
busiest CU holds ceil(workgroups / CUs)); no bank conflicts; L2 traffic = the bytes the op says
each trip loads.
Calibration (calibration.py): the clock is the target's sustained WMMA clock, the compute time
is divided by the fitted loop-kernel efficiency, and est_low / est_high carry the loop band.
"""
from __future__ import annotations

import math

from ..errors import ScheduleError
from ..targets import Target
from .calibration import bounds, factors
from .estimate import Estimate, loop_stats, vmem_clocks
from .isa_loop import wave_iteration_clocks
from .occupancy import busiest_simd_waves, occupancy
from .params import params_for, wmma_cycles


def estimate_loop_kernel(compiled, t: Target, dtype: str, *, total_trips: float, workgroups: int,
                         l2_bytes: float, compulsory_bytes: float, flops: float,
                         lds_exposed: bool = False) -> Estimate:
    """lds_exposed: charge the SIMD terms the GEMM model's exposed share of the CU's LDS clocks
    (params.ModelParams.lds_exposed, fitted on GEMM tiles; ops/gemm/model.py) -- for a GEMM estimated
    here under the gemm family's calibration (bench/peers.py's Triton GEMM); the attention ops, fitted
    without it, leave it off."""
    c = getattr(compiled, "compiled", compiled)
    md = c.metadata
    p = params_for(t.arch)
    loop = loop_stats(c.isa)
    threads = md.reqd_workgroup_size[0] if md.reqd_workgroup_size else md.max_flat_workgroup_size
    occ = occupancy(md.vgpr_count, md.lds_bytes, threads, t, p)
    if occ.workgroups_per_cu < 1:
        raise ScheduleError("occupancy", occ.limits, "a workgroup that fits on a CU")
    cyc = wmma_cycles(t, dtype, "i32" if dtype in ("i8", "i4") else "f32")   # integer WMMA accumulates in i32
    trans = loop.transcendental   # over the body the other terms read (the whole kernel when no loop is found)
    pipe = loop.count("wmma") * cyc + (loop.count("valu") + 3 * trans) * p.valu_clk
    cost = {"wmma": cyc, "valu": p.valu_clk, "hint": 0.0}
    alone = wave_iteration_clocks(loop.ops, cost, p.vmem_latency_clk, p.lds_latency_clk)
    lds = 32 * (loop.lane_bytes("ds_read") + loop.lane_bytes("ds_write")) / p.lds_bytes_per_clk
    vmem = vmem_clocks(loop.ops, p)
    n = occ.workgroups_per_cu
    resident = resident_workgroups_per_cu(n, workgroups, t.cus)
    # a trip's pipe, LDS and VMEM are shared by the workgroups actually on the CU, not by the limit;
    # the pipe by the waves on the busiest of its SIMDs (occupancy.busiest_simd_waves)
    w = busiest_simd_waves(resident, occ.waves_per_workgroup, t.simds_per_cu)
    cu_lds = resident * occ.waves_per_workgroup * lds
    exposed = p.lds_exposed * cu_lds if lds_exposed else 0.0
    terms = {"wmma_issue": w * pipe + exposed, "latency": alone + exposed, "lds_bandwidth": cu_lds,
             "global_memory": resident * occ.waves_per_workgroup * vmem}
    kind = max(terms, key=terms.get)
    # Rounds and tail stay on the occupancy limit n. A grid of >= CUs x n workgroups has resident == n;
    # its partial last round (r < n per CU) costs r / n of a round where a throughput term bounds the
    # trip, which spreading total_trips over the CUs x n slots already charges, so its estimate is
    # unchanged (a latency-bound tail is under-charged: the "no tail term" assumption above).
    # A smaller grid runs in one round with `workgroups` slots busy.
    concurrent = min(workgroups, t.cus * n)
    epi = wave_iteration_clocks(loop.outside, cost, p.vmem_latency_clk, p.lds_latency_clk, passes=1)
    cal = factors(t, "loop")
    clock = cal.clock_ghz * 1e9
    rounds = math.ceil(workgroups / max(concurrent, 1))
    # each of the `concurrent` workgroup slots runs total_trips / concurrent trips at `trip` clocks
    compute = (total_trips / max(concurrent, 1)) * terms[kind] + rounds * epi
    times = {"compute": compute / clock / cal.efficiency,
             "l2": l2_bytes / (p.l2_bytes_per_clk * clock),
             "dram": compulsory_bytes / (t.mem_bw_gbs * 1e9 * p.dram_efficiency)}
    top = max(times, key=times.get)
    limiter = kind if top == "compute" else "global_memory"
    seconds = times[top] + p.launch_overhead_us * 1e-6
    tflops = flops / seconds / 1e12
    peak = t.peak_tflops(dtype)
    figures = {"loop": loop.summary(), "transcendental_per_trip": trans, "occupancy": occ.to_dict(),
               "clocks_per_wave_trip": {"valu_pipe": pipe, "alone": alone, "lds": lds, "vmem": vmem},
               "resident_workgroups_per_cu": resident, "clocks_per_trip": terms[kind], "epilogue_clocks": epi,
               "total_trips": total_trips, "workgroups": workgroups, "times_s": times, "peak_tflops": peak,
               "calibration": cal.to_dict()}
    low, high = bounds(tflops, t, dtype, cal)
    return Estimate(seconds, tflops, tflops / peak, limiter, figures, est_low=low, est_high=high)


def resident_workgroups_per_cu(limit: int, workgroups: int, cus: int) -> int:
    """Workgroups sharing the busiest CU: the occupancy limit, or fewer when the grid cannot fill
    every CU that deep (spread-first dispatch is the model's assumption; at least 1)."""
    return max(1, min(limit, -(-workgroups // cus)))

