"""`wmma-gen analyze`: compile (or take from cache) one kernel and print the model's view of
it: main-loop analysis, occupancy, traffic and the time estimate with its limiter.
Every number printed is an estimate (source=model), never a measurement."""
from __future__ import annotations

import dataclasses

from .op_options import add_op_options, op_spec
from .options import add_json, add_target, emit


def register(sub) -> None:
    p = sub.add_parser("analyze", help="main-loop analysis, occupancy, traffic and an estimate (model, not measured)")
    add_target(p)
    add_op_options(p, joined_default="4096x4096x4096")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    spec = op_spec(args)
    from ..model.calibration import band_bounds
    from . import op_generic
    d, p, s, cs = op_generic.compiled(args, spec)
    if spec.report is not None:      # the op's own view of its code objects (source=model)
        text, data = spec.report(cs, d, s, p, args.arch)
        emit(args, data, text)
        return 0
    e = spec.estimate(cs, d, s, p, args.arch)
    low, high = band_bounds(args.arch, spec.family, d.dtype, e.tflops)
    text = (f"kernels   {spec.name} {op_generic.text(d, p)} on {args.arch} ({', '.join(cs.names)})\n"
            f"estimate (model)  {e.seconds * 1e3:.3f} ms  {e.tflops:.1f} TFLOP/s (band {low:.1f}-{high:.1f}, "
            f"results/model_calibration.md)  limiter {e.limiter}   [source=model, not a measurement]")
    emit(args, {"arch": args.arch, "op": spec.name, "directive": dataclasses.asdict(d),
                "problem": dataclasses.asdict(p), "schedule": s.to_dict(), "isa_hash": cs.isa_hash,
                "estimate": {"seconds": e.seconds, "tflops": e.tflops, "limiter": e.limiter, "source": e.source,
                             "est_low": low, "est_high": high}}, text)
    return 0
