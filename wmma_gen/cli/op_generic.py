"""What `check`, `compile` and `analyze` do for an op from its OpSpec alone (ops/contract.py):
the directive from --dtype and the flags named after its fields, the Problem from its axes'
flags, the schedule from its default and the knob flags, the code objects from compile_op.
An op with its own hooks (OpSpec.cli_from) keeps its own flags and report lines instead."""
from __future__ import annotations

import dataclasses

from ..errors import ScheduleError
from .op_options import schedule_for


def directive_of(args, spec):
    """The op's directive: --dtype, then every field whose flag was given on the command line
    (another op's default for a flag of the same name does not count)."""
    given = getattr(args, "given_flags", None) or {}
    kw = {}
    for f in dataclasses.fields(spec.directive):
        if f.name == "dtype":
            kw["dtype"] = args.dtype
        elif f.name in given:
            kw[f.name] = getattr(args, f.name)
    try:
        return spec.directive(**kw)
    except TypeError as e:
        raise ScheduleError("--op", spec.name, f"the fields of {spec.directive.__name__} as flags ({e})") from None


def problem_of(args, spec):
    return spec.problem_of_args(args)


def compiled(args, spec):
    """(directive, problem, schedule, CompiledSet) of the flags given."""
    from ..ops.compile_op import compile_op
    d, p = directive_of(args, spec), problem_of(args, spec)
    s = schedule_for(args, spec, base=spec.default_schedule(d, args.arch, p))
    return d, p, s, compile_op(spec, d, s, spec.key_of(d, s, p), args.arch)


def text(d, p) -> str:
    return " ".join(f"{k}={v}" for k, v in {**dataclasses.asdict(d), **dataclasses.asdict(p)}.items())
