"""The GEMM's CLI hooks (OpSpec.cli_from): `check`, `compile` and `analyze` with the GEMM's
own flags (--shape, --layout, ...) and report lines; the commands (wmma_gen/cli/) call these
for --op gemm and their generic path for an op without hooks."""
from __future__ import annotations

import time

from ..check_cmd import host_budget
from ..op_options import directive_from, gemm_problem_from, schedule_for
from ..options import emit
from ...device.select import get_device
from ...errors import ScheduleError
from ...targets import get_target


def check(args, spec) -> int:
    """`wmma-gen check --op gemm`: check_gemm on --shape with its own report lines."""
    from ...ops.gemm.api import default_schedule
    from ...ops.gemm.check import check_gemm
    if not args.shape:
        raise ScheduleError("--shape", "", "MxNxK (e.g. --shape 256x256x256) for --op gemm")
    d, p = directive_from(args), gemm_problem_from(args)
    host_budget(f"{p.m}x{p.n}x{p.k} batch {p.batch}", 8 * p.batch * (2 * (p.m * p.k + p.k * p.n) + 4 * p.m * p.n))
    s = schedule_for(args, spec, base=default_schedule(d, args.arch, p))
    device = get_device(args.device)
    t0 = time.perf_counter()
    r = check_gemm(d, s, args.arch, p, device, seed=args.seed)
    total = time.perf_counter() - t0
    verdict = "PASS" if r.passed else "FAIL"
    data = {"op": "gemm", "arch": args.arch, "device": device.name, "directive": d.to_dict(),
            "problem": p.as_dict(), "schedule": s.to_dict(), "seed": args.seed, **r.to_dict(), "verdict": verdict,
            "total_seconds": round(total, 4)}
    when = "emulator wall time, not GPU time" if r.source == "emulator" else "GPU time between hipEvents"
    shape = f"{p.m}x{p.n}x{p.k}" + (f" batch {p.batch}" if p.batch > 1 else "")
    lines = [
        f"gemm {d.dtype}/{d.acc}->{d.out_dtype} {d.layout} {shape} on {args.arch}, device {device.name}, seed {args.seed}",
        f"  max abs error {r.max_abs:.3e}   max rel error {r.max_rel:.3e} (of max|ref|)   "
        f"tolerance {'exact' if d.is_int else f'{r.tol:.3e}'}",
        f"  kernel time {r.seconds:.4f} s ({when}); total {total:.2f} s",
        verdict if r.passed else f"{verdict}: worst element (batch, row, col) = {r.worst}",
    ]
    emit(args, data, "\n".join(lines))
    return 0 if r.passed else 1



def compile(args, spec):
    """`wmma-gen compile --op gemm`: (directive, schedule, CompiledKernel, grid, block, MLIR text)."""
    from ...ops.gemm.api import default_schedule
    from ...ops.gemm.build import compile_gemm
    d, p = directive_from(args), gemm_problem_from(args)
    s = schedule_for(args, spec, base=default_schedule(d, args.arch, p))
    k = compile_gemm(d, s, args.arch, p)  # raises before anything is written
    return d.to_dict(), s.to_dict(), k.compiled, k.grid, k.block, k.source.mlir


def _widths(w: dict) -> str:
    return ", ".join(f"{n}x b{b}" for b, n in w.items()) or "none"


def render(arch: str, d, s, e, p) -> str:
    """The analyze report of `d` with `s` on the GemmProblem `p` (estimate `e`)."""
    f = e.figures
    L, o, tr, clk = f["loop"], f["occupancy"], f["traffic"], f["clocks_per_wave_iteration"]
    conf = f["lds_conflicts"]
    lines = [
        f"kernel    gemm {d.dtype}/{d.acc} {d.layout} {p.m}x{p.n}x{p.k} on {arch}  schedule {s.to_json()}",
        "main loop (per wave, per iteration)" + ("" if L["found"] else "  [no back-edge: whole kernel counted once]"),
        f"  label {L['label'] or '-'}: {L['instructions']} instructions ({L['issued']} issued), "
        f"v_wmma {L['wmma']} (schedule implies {f['wmma_per_iteration_implied']}, unroll x{f['unroll']:g})",
        f"  VALU {L['valu']}  SALU {L['salu']}  SMEM {L['smem']}  s_waitcnt {L['waitcnt']}  s_barrier {L['barrier']}",
        f"  global loads {_widths(L['global_load_widths'])}; stores {_widths(L['global_store_widths'])}; "
        f"scratch {L['scratch_load']}+{L['scratch_store']}",
        f"  DS reads {_widths(L['ds_read_widths'])}; DS writes {_widths(L['ds_write_widths'])}",
        f"  clocks: VALU pipe {clk['valu_pipe']:.0f} (wmma {clk['wmma']:.0f}), one wave alone {clk['alone']:.0f}, "
        f"VMEM path {clk['vmem_path']:.0f}, LDS {clk['lds']:.0f}",
    ]
    if conf:
        lines.append("  LDS bank conflicts (layout assumption, ops/gemm/banks.py): "
                     + ", ".join(f"{k} x{v['degree']:.2f}" for k, v in conf.items()))
    lines += [
        f"occupancy  {o['vgprs']} VGPRs (allocated {o['vgprs_allocated']}), {o['waves_per_workgroup']} waves/workgroup, "
        f"{o['waves_per_simd']} waves/SIMD, {o['workgroups_per_cu']} workgroups/CU, limited by {o['limiter']} {o['limits']}",
        f"traffic    {tr['workgroups']} workgroups, {tr['bytes_per_workgroup'] / 1e6:.3f} MB each; L2 {tr['l2_bytes'] / 1e9:.3f} GB, "
        f"DRAM {tr['dram_bytes'] / 1e9:.3f} GB (compulsory {tr['compulsory_bytes'] / 1e9:.3f} GB)",
        f"           arithmetic intensity {tr['arithmetic_intensity']:.1f} flop/B; roofline {tr['roofline_tflops']:.1f} TFLOP/s, "
        f"model bound {tr['model_bound_tflops']:.1f} TFLOP/s",
        "times      " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in f["times_s"].items())
        + f"; tail {f['tail_fraction']:.0%} over {f['rounds']} round(s)",
        f"estimate (model)  {e.seconds * 1e3:.3f} ms  {e.tflops:.1f} TFLOP/s (band {e.est_low:.1f}-{e.est_high:.1f}, "
        f"results/model_calibration.md)  {e.fraction_of_peak:.0%} of {f['peak_tflops']:.1f} nominal peak  "
        f"limiter: {e.limiter}   [source=model, not a measurement]",
    ]
    return "\n".join(lines)


def analyze(args, spec) -> int:
    """`wmma-gen analyze --op gemm`: main loop, occupancy, traffic and the estimate (model)."""
    from ...ops.gemm.api import default_schedule
    from ...ops.gemm.build import compile_gemm
    from ...ops.gemm.model import estimate
    d, p = directive_from(args), gemm_problem_from(args)
    s = schedule_for(args, spec, base=default_schedule(d, args.arch, p))
    t = get_target(args.arch)
    k = compile_gemm(d, s, args.arch, p)
    e = estimate(k, d, s, t, p)
    data = {"arch": args.arch, "directive": d.to_dict(), "problem": p.as_dict(), "schedule": s.to_dict(), "kernel_key": k.compiled.key,
            "metadata": k.compiled.metadata.to_dict(), "estimate": e.to_dict()}
    emit(args, data, render(args.arch, d, s, e, p))
    return 0


