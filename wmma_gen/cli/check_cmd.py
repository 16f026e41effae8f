"""`wmma-gen check`: run one GEMM kernel on seeded random inputs and compare with numpy.

Prints max abs / max rel error, the tolerance (check.py explains each) and PASS or FAIL;
exit status 0 on PASS, 1 on FAIL (2 on an error such as a rejected schedule).
"""
from __future__ import annotations

import time

from ..device.select import KINDS, get_device
from .options import (add_attention, add_directive, add_json, add_schedule, add_target, directive_from, emit,
                      schedule_from)


def register(sub) -> None:
    p = sub.add_parser("check", help="run a kernel on random inputs (fixed seed) and compare with numpy; "
                                     "exit 1 on FAIL")
    add_target(p)
    add_directive(p)
    p.add_argument("--device", default="auto", choices=list(KINDS),
                   help="where to run: auto (a visible GPU through hip-python, else the emulator), emu, hip")
    p.add_argument("--seed", type=int, default=0, help="random input seed (default 0)")
    add_schedule(p)
    add_attention(p)
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.op != "gemm":
        return run_attention(args)
    from ..ops.gemm import default_schedule
    from ..ops.gemm.check import check_gemm
    if not args.shape:
        from ..errors import ScheduleError
        raise ScheduleError("shape", "", "MxNxK (e.g. --shape 256x256x256)")
    d = directive_from(args)
    s = schedule_from(args, base=default_schedule(d, args.arch))
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


def _window(text: str):
    if not text:
        return None
    try:
        left, right = (int(x) for x in text.split(","))
    except ValueError:
        from ..errors import ScheduleError
        raise ScheduleError("window", text, "LEFT,RIGHT integers >= -1 (e.g. 128,0)") from None
    return left, right


def run_attention(args) -> int:
    """--op attention | attention_bwd: the registry's check on a dense random problem."""
    from ..ops import registry
    spec = registry.get(args.op)
    device = get_device(args.device)
    problem = dict(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, seq_q=args.seq_q,
                   seq_k=args.seq_k, head_dim=args.head_dim)
    t0 = time.perf_counter()
    r = spec.check(problem, dtype=args.dtype, layout=args.attn_layout, causal=args.causal,
                   window=_window(args.window), arch=args.arch, device=device, seed=args.seed)
    total = time.perf_counter() - t0
    verdict = "PASS" if r.passed else "FAIL"
    data = {"op": args.op, "arch": args.arch, "device": device.name, "problem": problem, "dtype": args.dtype,
            "causal": args.causal, "window": args.window, **r.to_dict(), "verdict": verdict,
            "total_seconds": round(total, 4)}
    lines = [f"{args.op} {args.dtype} hd{args.head_dim} B{args.batch} H{args.heads}/{args.kv_heads} "
             f"Sq {args.seq_q} Sk {args.seq_k}{' causal' if args.causal else ''} on {args.arch}, "
             f"device {device.name} ({r.source}), seed {args.seed}",
             f"  largest error {r.max_abs:.3e} in {r.worst} (tolerance {r.tol:.3e}; {spec.tolerance})",
             f"  total {total:.2f} s (host wall time)", verdict]
    emit(args, data, "\n".join(lines))
    return 0 if r.passed else 1
