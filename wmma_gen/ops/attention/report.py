"""The attention forward's `wmma-gen analyze` view (OpSpec.report): the forward kernel's key loop,
occupancy and the model's estimate on the problem. Every number is the model's (source=model)."""
from __future__ import annotations


def report(cs, d, s, p, arch: str) -> tuple[str, dict]:
    """(text, data) of `wmma-gen analyze --op attention` for the set's forward kernel on p."""
    from ...attention_common.spec_parts import sizes
    from .model import estimate_attention
    ck = cs.kernel("attention")
    e = estimate_attention(ck, d, s, sizes(d, p), arch)
    f = e.figures
    L, o, clk = f["loop"], f["occupancy"], f["clocks_per_wave_trip"]
    text = "\n".join([
        f"kernel    attention {d.dtype} hd{d.head_dim}{' causal' if d.causal else ''} B{p.batch} "
        f"H{p.heads}/{p.kv_heads} Sq {p.seq_q} Sk {p.seq_k} on {arch}  schedule {s!r}",
        f"main loop (per wave, per key tile): {L['instructions']} instructions, v_wmma {L['wmma']} "
        f"({L['wmma'] / max(L['instructions'], 1):.3f} per instruction), VALU {L['valu']} "
        f"(transcendental {f['transcendental_per_trip']}), DS {L['ds_read']}+{L['ds_write']}, "
        f"global loads {widths(L['global_load_widths'])}",
        f"  clocks: VALU pipe {clk['valu_pipe']:.0f}, one wave alone {clk['alone']:.0f}, LDS {clk['lds']:.0f}",
        f"occupancy  {o['vgprs']} VGPRs, {o['waves_per_workgroup']} waves/workgroup, {o['workgroups_per_cu']} "
        f"workgroups/CU ({o['limiter']}); {f['workgroups']} workgroups, {f['total_trips']} key-tile trips",
        "times      " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in f["times_s"].items()),
        f"estimate (model)  {e.seconds * 1e3:.3f} ms  {e.tflops:.1f} TFLOP/s (band {e.est_low:.1f}-{e.est_high:.1f}, "
        f"results/model_calibration.md)  {e.fraction_of_peak:.0%} of {f['peak_tflops']:.1f} nominal peak  "
        f"limiter: {e.limiter}   [source=model, not a measurement; FLOPs = 4*D per visible (query, key) pair]",
    ])
    problem = {k: v for k, v in sizes(d, p).items() if k not in ("head_dim", "softcap")}
    data = {"arch": arch, "op": "attention", "directive": d.to_dict(), "schedule": repr(s), "problem": problem,
            "metadata": ck.metadata.to_dict(), "estimate": e.to_dict()}
    return text, data


def widths(w: dict) -> str:
    return ", ".join(f"{n}x b{b}" for b, n in w.items()) or "none"
