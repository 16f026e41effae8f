"""The attention backward's CLI hooks (OpSpec.cli_from): the forward's `check` with the
backward's gradients, and `analyze` summing the three kernels' estimates (model)."""
from __future__ import annotations

from functools import partial

from ..op_options import attention_directive, schedule_for, window_of
from ..options import emit
from . import attention as fwd

check = partial(fwd.check, backward=True)


def analyze(args, spec) -> int:
    """--op attention_bwd: the three backward kernels' estimates (model), summed."""
    window = window_of(args)
    d = attention_directive(args, "attention_bwd")
    s = schedule_for(args, spec, base=spec.default_schedule(d, args.arch))
    p = dict(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, seq_q=args.seq_q, seq_k=args.seq_k)
    if window:
        p.update(window_left=window[0], window_right=window[1])
    e = spec.estimate_of(d, s, p, args.arch)
    from ...model.calibration import band_bounds
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
