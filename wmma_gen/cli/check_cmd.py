"""`wmma-gen check`: run one kernel of --op on seeded random inputs and compare with numpy.

Prints max abs / max rel error, the tolerance (check.py explains each) and PASS or FAIL;
exit status 0 on PASS, 1 on FAIL (2 on an error such as a rejected schedule, a flag of
another op, or a problem whose host-side inputs and float64 reference would not fit
HOST_BUDGET bytes).
"""
from __future__ import annotations

import time

from ..device.select import KINDS, get_device
from ..errors import ScheduleError
from .op_options import (add_op_options, attention_directive, directive_from, given_knobs, op_spec, schedule_for,
                         window_of)
from .options import add_json, add_target, emit, int_at_least

HOST_BUDGET = 16 << 30  # bytes of host memory a check may use (inputs, outputs, float64 reference): 8192^3 fits


def register(sub) -> None:
    p = sub.add_parser("check", help="run a kernel on random inputs (fixed seed) and compare with numpy; "
                                     "exit 1 on FAIL")
    add_target(p)
    add_op_options(p)
    p.add_argument("--device", default="auto", choices=list(KINDS),
                   help="where to run: auto (a visible GPU through hip-python, else the emulator), emu, hip")
    p.add_argument("--seed", type=int_at_least(0, 2**32 - 1), default=0, help="random input seed (default 0)")
    add_json(p)
    p.set_defaults(func=run)


def _budget(what: str, nbytes: int) -> None:
    if nbytes > HOST_BUDGET:
        raise ScheduleError("problem size", what, f"a check whose random inputs and float64 reference fit "
                            f"{HOST_BUDGET >> 30} GiB of host memory (this one needs about {nbytes / 2**30:.3g} GiB)")


def run(args) -> int:
    spec = op_spec(args)
    if spec.name != "gemm":
        return run_attention(args, spec)
    from ..ops.gemm import default_schedule
    from ..ops.gemm.check import check_gemm
    if not args.shape:
        raise ScheduleError("--shape", "", "MxNxK (e.g. --shape 256x256x256) for --op gemm")
    d = directive_from(args)
    _budget(f"{d.m}x{d.n}x{d.k} batch {d.batch}", 8 * d.batch * (2 * (d.m * d.k + d.k * d.n) + 4 * d.m * d.n))
    s = schedule_for(args, spec, base=default_schedule(d, args.arch))
    device = get_device(args.device)
    t0 = time.perf_counter()
    r = check_gemm(d, s, args.arch, device, seed=args.seed)
    total = time.perf_counter() - t0
    verdict = "PASS" if r.passed else "FAIL"
    data = {"op": "gemm", "arch": args.arch, "device": device.name, "directive": d.to_dict(),
            "schedule": s.to_dict(), "seed": args.seed, **r.to_dict(), "verdict": verdict,
            "total_seconds": round(total, 4)}
    when = "emulator wall time, not GPU time" if r.source == "emulator" else "GPU time between hipEvents"
    shape = f"{d.m}x{d.n}x{d.k}" + (f" batch {d.batch}" if d.batch > 1 else "")
    lines = [
        f"gemm {d.dtype}/{d.acc}->{d.out_dtype} {d.layout} {shape} on {args.arch}, device {device.name}, seed {args.seed}",
        f"  max abs error {r.max_abs:.3e}   max rel error {r.max_rel:.3e} (of max|ref|)   "
        f"tolerance {'exact' if d.is_int else f'{r.tol:.3e}'}",
        f"  kernel time {r.seconds:.4f} s ({when}); total {total:.2f} s",
        verdict if r.passed else f"{verdict}: worst element (batch, row, col) = {r.worst}",
    ]
    emit(args, data, "\n".join(lines))
    return 0 if r.passed else 1


def run_attention(args, spec) -> int:
    """--op attention | attention_bwd: the registry's check on a dense random problem; the
    schedule is the API's choice unless --schedule-json or a knob flag is given."""
    window = window_of(args)
    d = attention_directive(args, spec.name)
    problem = dict(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, seq_q=args.seq_q,
                   seq_k=args.seq_k, head_dim=args.head_dim)
    b, h, hk, sq, sk, dim = problem.values()
    per_pair = 32 if spec.name == "attention" else 80       # float64 score, mask, exp (+ dP, dS backward)
    _budget(f"B{b} H{h}/{hk} Sq {sq} Sk {sk} D {dim}",
            per_pair * sq * sk + 48 * b * dim * (sq * h + 2 * sk * hk) * (1 if spec.name == "attention" else 2))
    s = (schedule_for(args, spec, base=spec.default_schedule(d, args.arch))
         if args.schedule_json or given_knobs(args, spec) else None)
    device = get_device(args.device)
    t0 = time.perf_counter()
    if s is None:      # the API's choice (tuned file or default), exactly as a user's call would make it
        from ..ops.attention.check import check_attention
        r = check_attention(problem, dtype=args.dtype, layout=args.attn_layout, causal=args.causal, window=window,
                            backward=spec.name != "attention", arch=args.arch, device=device, seed=args.seed)
    else:              # the given schedule's code objects, handed to the spec's check
        from ..ops.compile_op import compile_op
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
