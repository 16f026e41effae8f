"""What `check`, `compile` and `analyze` do for an op from its OpSpec alone (ops/contract.py):
the directive from --dtype and the flags its fields declare (contract.option), the Problem from its axes'
flags, the schedule from its default and the knob flags (refused when illegal: the OpSpec's
schedule_problems), the code objects from compile_op."""
from __future__ import annotations

import dataclasses

from ..errors import ScheduleError
from .op_options import dest_of, flag_of, schedule_for


def _own_values(args, spec) -> tuple[dict, dict]:
    """(directive fields, problem fields) the op reads from its flags given (OpSpec.cli_values)."""
    if spec.cli_values is None:
        return {}, {}
    given = getattr(args, "given_flags", None) or {}
    return spec.cli_values(spec.name, {dest: getattr(args, dest) for dest in given})


def directive_of(args, spec):
    """The op's directive: --dtype, then each field declared with `option` (contract.Flag) from its
    flag when given on the command line, else the option's CLI default, else the field's default
    (a field with neither must be given), then what the op reads from its raw flags (OpSpec.cli_values)."""
    from ..ops.contract import flags_of
    given = getattr(args, "given_flags", None) or {}
    kw = {"dtype": args.dtype} if "dtype" in {f.name for f in dataclasses.fields(spec.directive)} else {}
    for f, fl in flags_of(spec.directive):
        dest = dest_of(flag_of(f, fl))
        if f.name == "dtype" or fl.raw:
            continue
        if dest in given:
            kw[f.name] = getattr(args, dest)
        elif fl.cli_default is not dataclasses.MISSING:
            kw[f.name] = fl.cli_default
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ScheduleError(flag_of(f, fl), None, f"a value for --op {spec.name} ({fl.help})")
    kw.update(_own_values(args, spec)[0])
    try:
        return spec.directive(**kw)
    except TypeError as e:
        raise ScheduleError("--op", spec.name, f"the fields of {spec.directive.__name__} as flags ({e})") from None


def problem_of(args, spec):
    extra = _own_values(args, spec)[1]
    p = spec.problem_of_args(args)
    return spec.make_problem({**dataclasses.asdict(p), **extra}) if extra else p


def schedule_of(args, spec, d, p):
    """The op's default schedule for (d, p) updated by --schedule-json and the knob flags, refused
    (naming the schedule's failing checks) when illegal for d on p -- before anything compiles."""
    from ..targets import get_target
    s = schedule_for(args, spec, base=spec.default_schedule(d, args.arch, p))
    t = get_target(args.arch)
    if spec.schedule_problems is not None:
        problems = spec.schedule_problems(d, s, p, t)
    else:
        problems = s.problems(d, t) if hasattr(s, "problems") else []
    if problems:
        raise ScheduleError.rejected("schedule", "; ".join(problems), s.to_dict())
    return s


def compiled(args, spec, d=None, p=None):
    """(directive, problem, schedule, CompiledSet) of the flags given (d, p: already read)."""
    from ..ops.compile_op import compile_op
    d = directive_of(args, spec) if d is None else d
    p = problem_of(args, spec) if p is None else p
    s = schedule_of(args, spec, d, p)
    return d, p, s, compile_op(spec, d, s, spec.key_of(d, s, p), args.arch)


def text(d, p) -> str:
    """The directive's dtype and the fields not at their defaults, then the problem's sizes."""
    shown = {f.name: getattr(d, f.name) for f in dataclasses.fields(d)
             if f.name == "dtype" or f.default is dataclasses.MISSING or getattr(d, f.name) != f.default}
    return " ".join(f"{k}={v}" for k, v in {**shown, **dataclasses.asdict(p)}.items())
