"""The attention forward's CLI hooks (OpSpec.cli_from): `check` (also the backward's),
`compile` and `analyze` with the attention flags (--head-dim, --seq-q, ...) and report lines."""
from __future__ import annotations

import time

from ..check_cmd import host_budget
from ..op_options import attention_directive, given_knobs, schedule_for, window_of
from ..options import emit
from ...device.select import get_device


def check(args, spec, backward: bool = False) -> int:
    """--op attention | attention_bwd: the registry's check on a dense random problem; the
    schedule is the API's choice unless --schedule-json or a knob flag is given."""
    window = window_of(args)
    d = attention_directive(args, spec.name)
    problem = dict(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, seq_q=args.seq_q,
                   seq_k=args.seq_k, head_dim=args.head_dim)
    b, h, hk, sq, sk, dim = problem.values()
    per_pair = 80 if backward else 32       # float64 score, mask, exp (+ dP, dS backward)
    host_budget(f"B{b} H{h}/{hk} Sq {sq} Sk {sk} D {dim}",
            per_pair * sq * sk + 48 * b * dim * (sq * h + 2 * sk * hk) * (2 if backward else 1))
    s = (schedule_for(args, spec, base=spec.default_schedule(d, args.arch))
         if args.schedule_json or given_knobs(args, spec) else None)
    device = get_device(args.device)
    t0 = time.perf_counter()
    if s is None:      # the API's choice (tuned file or default), exactly as a user's call would make it
        from ...attention_common.check import check_attention
        r = check_attention(problem, dtype=args.dtype, layout=args.attn_layout, causal=args.causal, window=window,
                            backward=backward, arch=args.arch, device=device, seed=args.seed)
    else:              # the given schedule's code objects, handed to the spec's check
        from ...ops.compile_op import compile_op
        p = spec.problem_from({**problem, **({"window_left": window[0], "window_right": window[1]} if window else {})})
        r = spec.check(compile_op(spec, d, s, spec.key_of(d, s, p), args.arch), d, p, device, args.seed)
    total = time.perf_counter() - t0
    verdict = "PASS" if r.passed else "FAIL"
    data = {"op": args.op, "arch": args.arch, "device": device.name, "problem": problem, "dtype": args.dtype,
            "causal": args.causal, "window": args.window, "schedule": None if s is None else s.to_dict(),
            **r.to_dict(), "verdict": verdict, "total_seconds": round(total, 4)}
    lines = [f"{args.op} {args.dtype} hd{args.head_dim} B{args.batch} H{args.heads}/{args.kv_heads} "
             f"Sq {args.seq_q} Sk {args.seq_k}{' causal' if args.causal else ''} on {args.arch}, "
             f"device {device.name} ({r.source}), seed {args.seed}",
             f"  largest error {r.max_abs:.3e} in {r.worst} (tolerance {r.tol:.3e}; {spec.tolerance})",
             f"  total {total:.2f} s (host wall time)", verdict]
    emit(args, data, "\n".join(lines))
    return 0 if r.passed else 1


def compile(args, spec):
    """--op attention: the forward kernel of the flags given (default schedule, or the knob
    flags); sizes are kernel arguments, so the artifacts serve every batch, head count and
    sequence length."""
    from ...ops.attention.api import compile_attention
    d = attention_directive(args, "attention")
    s = schedule_for(args, spec, base=spec.default_schedule(d, args.arch))
    src, c = compile_attention(d, s, args.arch)
    return d.to_dict(), s.to_dict(), c, "(ceil(seq_q/BLOCK_M) * split_kv, heads, batch)", src.signature.block, src.mlir


def analyze(args, spec) -> int:
    """--op attention: the forward kernel's loop, occupancy and the model's estimate."""
    from ...ops.attention.api import compile_attention
    from ...ops.attention.model import estimate_attention
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
        f"global loads {widths(L['global_load_widths'])}",
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




def widths(w: dict) -> str:
    return ", ".join(f"{n}x b{b}" for b, n in w.items()) or "none"
