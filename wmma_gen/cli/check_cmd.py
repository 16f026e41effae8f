"""`wmma-gen check`: run one kernel of --op on seeded random inputs and compare with numpy.

Prints max abs / max rel error, the tolerance (check.py explains each) and PASS or FAIL;
exit status 0 on PASS, 1 on FAIL (2 on an error such as a rejected schedule, a flag of
another op, or a problem whose host-side inputs and float64 reference would not fit
HOST_BUDGET bytes).
"""
from __future__ import annotations

import dataclasses
import time

from ..device.select import KINDS, get_device
from ..errors import ScheduleError
from .op_options import add_op_options, op_spec
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


def host_budget(what: str, nbytes: int) -> None:
    """Refuse a check whose host-side inputs and float64 reference would not fit HOST_BUDGET."""
    if nbytes > HOST_BUDGET:
        raise ScheduleError("problem size", what, f"a check whose random inputs and float64 reference fit "
                            f"{HOST_BUDGET >> 30} GiB of host memory (this one needs about {nbytes / 2**30:.3g} GiB)")


def run(args) -> int:
    spec = op_spec(args)
    from . import op_generic
    d, p = op_generic.directive_of(args, spec), op_generic.problem_of(args, spec)
    if spec.host_bytes is not None:
        host_budget(op_generic.text(d, p), spec.host_bytes(d, p))
    device = get_device(args.device)
    t0 = time.perf_counter()
    d, p, s, cs = op_generic.compiled(args, spec, d, p)
    r = spec.check(cs, d, p, device, args.seed)
    total = time.perf_counter() - t0
    verdict = "PASS" if r.passed else "FAIL"
    data = {"op": spec.name, "arch": args.arch, "device": device.name, "directive": dataclasses.asdict(d),
            "problem": dataclasses.asdict(p), "schedule": s.to_dict(), "seed": args.seed, "isa_hash": cs.isa_hash,
            **r.to_dict(), "verdict": verdict, "total_seconds": round(total, 4)}
    emit(args, data, "\n".join(report(spec, args, device, d, p, r, total)))
    return 0 if r.passed else 1


def report(spec, args, device, d, p, r, total: float) -> list[str]:
    """The check's lines, from the result's fields: the errors it measured (max_rel when it has
    one) against its tolerance, the kernel time when it has one, the verdict and the worst element."""
    from . import op_generic
    errors = f"max abs error {r.max_abs:.3e}" + (f"   max rel error {r.max_rel:.3e} (of max|ref|)"
                                                 if hasattr(r, "max_rel") else "")
    exact = getattr(d, "is_int", False)
    lines = [f"{spec.name} {op_generic.text(d, p)} on {args.arch}, device {device.name} ({r.source}), seed {args.seed}",
             f"  {errors}   tolerance {'exact' if exact else f'{r.tol:.3e}'} ({spec.tolerance})"]
    if hasattr(r, "seconds"):
        when = "emulator wall time, not GPU time" if r.source == "emulator" else "GPU time between hipEvents"
        lines.append(f"  kernel time {r.seconds:.4f} s ({when}); total {total:.2f} s (host wall time)")
    else:
        lines.append(f"  total {total:.2f} s (host wall time)")
    worst = getattr(r, "worst", None)
    if not r.passed and worst is not None:
        lines.append(f"  worst element {worst}")
    return lines + ["PASS" if r.passed else "FAIL"]
