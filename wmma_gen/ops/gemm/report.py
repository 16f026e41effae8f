"""The GEMM's `wmma-gen analyze` view (OpSpec.report): main loop, occupancy, traffic and the
model's estimate of the compiled kernel on the problem. Every number is the model's (source=model),
never a measurement."""
from __future__ import annotations


def report(k, d, s, p, arch: str) -> tuple[str, dict]:
    """(text, data) of `wmma-gen analyze --op gemm` for the compiled kernel k (spec.kernel_of) on
    the GemmProblem p."""
    from .model import estimate
    e = estimate(k, d, s, arch, p)
    data = {"arch": arch, "directive": d.to_dict(), "problem": p.as_dict(), "schedule": s.to_dict(),
            "kernel_key": k.compiled.key, "metadata": k.compiled.metadata.to_dict(), "estimate": e.to_dict()}
    return render(arch, d, s, e, p), data


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
    if (ln := f.get("l0_lines_per_k_tile")) and ln["loads"]:
        lines.append(f"  L0 lines per A/B load {ln['lines'] / ln['loads']:.1f} (ops/gemm/l0_lines.py: one L0 line "
                     f"per clock), +{ln['extra']:.0f} clocks per wave and K tile over the lane bytes")
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
