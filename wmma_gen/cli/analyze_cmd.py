"""`wmma-gen analyze`: compile (or take from cache) one kernel and print the model's view of
it: main-loop analysis, occupancy, traffic and the time estimate with its limiter.
Every number printed is an estimate (source=model), never a measurement."""
from __future__ import annotations

from ..targets import get_target
from .op_options import add_op_options, attention_directive, directive_from, op_spec, schedule_for, window_of
from .options import add_json, add_target, emit


def register(sub) -> None:
    p = sub.add_parser("analyze", help="main-loop analysis, occupancy, traffic and an estimate (model, not measured)")
    add_target(p)
    add_op_options(p, shape_default="4096x4096x4096")
    add_json(p)
    p.set_defaults(func=run)


def _widths(w: dict) -> str:
    return ", ".join(f"{n}x b{b}" for b, n in w.items()) or "none"


def render(arch: str, d, s, e) -> str:
    f = e.figures
    L, o, tr, clk = f["loop"], f["occupancy"], f["traffic"], f["clocks_per_wave_iteration"]
    conf = f["lds_conflicts"]
    lines = [
        f"kernel    gemm {d.dtype}/{d.acc} {d.layout} {d.m}x{d.n}x{d.k} on {arch}  schedule {s.to_json()}",
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


def run(args) -> int:
    spec = op_spec(args)
    if spec.name == "attention":
        return run_attention(args, spec)
    if spec.name == "attention_bwd":
        return run_attention_bwd(args, spec)
    from ..ops.gemm import default_schedule
    from ..ops.gemm.build import compile_gemm
    from ..ops.gemm.model import estimate
    d = directive_from(args)
    s = schedule_for(args, spec, base=default_schedule(d, args.arch))
    t = get_target(args.arch)
    k = compile_gemm(d, s, args.arch)
    e = estimate(k, d, s, t)
    data = {"arch": args.arch, "directive": d.to_dict(), "schedule": s.to_dict(), "kernel_key": k.compiled.key,
            "metadata": k.compiled.metadata.to_dict(), "estimate": e.to_dict()}
    emit(args, data, render(args.arch, d, s, e))
    return 0


def run_attention(args, spec) -> int:
    """--op attention: the forward kernel's loop, occupancy and the model's estimate."""
    from ..ops.attention.api import compile_attention
    from ..ops.attention.model import estimate_attention
    window = window_of(args)
    d = attention_directive(args, "attention")
    s = schedule_for(args, spec, base=spec.default_schedule(d, args.arch))
    _, ck = compile_attention(d, s, args.arch)
    p = dict(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, seq_q=args.seq_q, seq_k=args.seq_k)
    if window:
        p.update(window_left=window[0], window_right=window[1])
    e = estimate_attention(ck, d, s, p, args.arch)
    f = e.figures
    L, o, clk = f["loop"], f["occupancy"], f["clocks_per_wave_trip"]
    text = "\n".join([
        f"kernel    attention {d.dtype} hd{d.head_dim}{' causal' if d.causal else ''} B{args.batch} "
        f"H{args.heads}/{args.kv_heads} Sq {args.seq_q} Sk {args.seq_k} on {args.arch}  schedule {s!r}",
        f"main loop (per wave, per key tile): {L['instructions']} instructions, v_wmma {L['wmma']} "
        f"({L['wmma'] / max(L['instructions'], 1):.3f} per instruction), VALU {L['valu']} "
        f"(transcendental {f['transcendental_per_trip']}), DS {L['ds_read']}+{L['ds_write']}, "
        f"global loads {_widths(L['global_load_widths'])}",
        f"  clocks: VALU pipe {clk['valu_pipe']:.0f}, one wave alone {clk['alone']:.0f}, LDS {clk['lds']:.0f}",
        f"occupancy  {o['vgprs']} VGPRs, {o['waves_per_workgroup']} waves/workgroup, {o['workgroups_per_cu']} "
        f"workgroups/CU ({o['limiter']}); {f['workgroups']} workgroups, {f['total_trips']} key-tile trips",
        "times      " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in f["times_s"].items()),
        f"estimate (model)  {e.seconds * 1e3:.3f} ms  {e.tflops:.1f} TFLOP/s (band {e.est_low:.1f}-{e.est_high:.1f}, "
        f"results/model_calibration.md)  {e.fraction_of_peak:.0%} of {f['peak_tflops']:.1f} nominal peak  "
        f"limiter: {e.limiter}   [source=model, not a measurement; FLOPs = 4*D per visible (query, key) pair]",
    ])
    data = {"arch": args.arch, "op": "attention", "directive": d.to_dict(), "schedule": repr(s), "problem": p,
            "metadata": ck.metadata.to_dict(), "estimate": e.to_dict()}
    emit(args, data, text)
    return 0


def run_attention_bwd(args, spec) -> int:
    """--op attention_bwd: the three backward kernels' estimates (model), summed."""
    window = window_of(args)
    d = attention_directive(args, "attention_bwd")
    s = schedule_for(args, spec, base=spec.default_schedule(d, args.arch))
    p = dict(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, seq_q=args.seq_q, seq_k=args.seq_k)
    if window:
        p.update(window_left=window[0], window_right=window[1])
    e = spec.estimate_of(d, s, p, args.arch)
    from ..model.calibration import band_bounds
    low, high = band_bounds(args.arch, spec.family, d.dtype, e.tflops)
    text = (f"kernels   attention_bwd {d.dtype} hd{d.head_dim}{' causal' if d.causal else ''} B{args.batch} "
            f"H{args.heads}/{args.kv_heads} Sq {args.seq_q} Sk {args.seq_k} on {args.arch} (pre-pass, dK/dV, dQ)\n"
            f"estimate (model)  {e.seconds * 1e3:.3f} ms  {e.tflops:.1f} TFLOP/s (band {low:.1f}-{high:.1f}, "
            f"results/model_calibration.md)  slowest kernel/limiter {e.limiter}"
            f"   [source=model, not a measurement; FLOPs = 2.5x the forward's]")
    emit(args, {"arch": args.arch, "op": "attention_bwd", "directive": d.to_dict(), "problem": p,
                "schedule": s.to_dict(), "estimate": {"seconds": e.seconds, "tflops": e.tflops, "limiter": e.limiter,
                                                      "source": e.source, "est_low": low, "est_high": high}}, text)
    return 0
