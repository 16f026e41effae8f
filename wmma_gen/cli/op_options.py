"""One per-op option model for `check`, `compile` and `analyze` (issues 24 item 3, 39 item 1),
generated from the registry -- no op is named here. Each registered op brings:
  * its problem axes (OpSpec.problem_axes, contract.Axis): one flag per axis, or one flag that
    several axes share (GEMM's m, n, k: --shape MxNxK); type, bounds, default and help are the Axis's;
  * its directive's fields declared with `option(...)` (contract.Flag, next to the field in the
    directive's module): --acc, --layout, --head-dim, --causal, ...;
  * its knob table (OpSpec.space): one flag per knob; --schedule-json belongs to every op.
Ops sharing a flag (--batch, --head-dim, --block-m) get one argparse flag whose help names what
each op makes of it; two ops reading one flag differently is a ValueError when the parser is built.
After parsing, `op_spec(args)` looks the op up and refuses every flag given on the command line
that the op does not take, naming the op and the flags it takes. So `--shape` or `--block-k` with
--op attention, or `--causal` with --op gemm, is an error, and `--block-m 48` with --op attention
is checked against attention's block_m domain, not GEMM's.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from ..errors import ScheduleError
from .options import f32_exact, int_at_least, schedule_json

if TYPE_CHECKING:
    from ..ops.registry import OpSpec

EVERY_OP = "*"        # owner of --schedule-json
READERS = {"f32_exact": f32_exact, "upper": str.upper}   # the shared readers a Flag.value may name
_TYPES = {"int": int, "float": float, "str": str, "bool": bool}   # annotations are text (future annotations)


def _recording(base: type) -> type:
    """An argparse action class like `base` that also records the flag as given."""
    class Recorded(base):
        def __call__(self, parser, namespace, values, option_string=None):
            given = getattr(namespace, "given_flags", None)
            if given is None:
                given = {}
                setattr(namespace, "given_flags", given)
            given[self.dest] = option_string or self.option_strings[0]   # as typed: --no-causal
            super().__call__(parser, namespace, values, option_string)
    Recorded.__name__ = f"Recorded{base.__name__}"
    return Recorded


_STORE, _TRUE = _recording(argparse._StoreAction), _recording(argparse._StoreTrueAction)
_BOTH = _recording(argparse.BooleanOptionalAction)   # --NAME / --no-NAME: a switch some op defaults on


def flag_of(f: dataclasses.Field, fl) -> str:
    """The command-line flag of a directive field declared with `option` (Flag.flag or --field-name)."""
    return fl.flag or "--" + f.name.replace("_", "-")


def dest_of(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


@dataclasses.dataclass
class _Entry:
    """One flag being generated: how it is read and what each op that declares it makes of it."""
    flag: str
    switch: bool
    reading: tuple                 # what decides the argparse type: ops sharing a flag must agree
    kw: dict                       # argparse keywords (type, choices, default)
    group: str
    owners: dict = dataclasses.field(default_factory=dict)       # op -> (help, default shown)
    kernel_args: list = dataclasses.field(default_factory=list)  # ops whose size it is, refused by compile


def _axis_entries(op: str, axes: tuple, joined_default: str, compile_cmd: bool):
    """(dest, _Entry, takes, (help, default)) per flag of the op's problem axes; takes: the command
    accepts it (compile refuses an axis declared compile_flag=False)."""
    by_flag: dict[str, list] = {}
    for a in axes:
        by_flag.setdefault(a.flag, []).append(a)
    for flag, group in by_flag.items():
        takes = not compile_cmd or all(a.compile_flag for a in group)
        if len(group) > 1:     # one flag, several axes: "AxBxC" (contract.joined_sizes reads it)
            names = "x".join(a.name.upper() for a in group)
            example = "x".join(str(a.default) for a in group)
            text = f"{names} (e.g. {example}); {','.join(a.name.upper() for a in group)} >= 1"
            yield dest_of(flag), _Entry(flag, False, ("joined", tuple(a.name for a in group)),
                                        {"default": joined_default}, ""), takes, (text, None)
            continue
        a = group[0]
        reader = int_at_least(*a.bounds) if a.bounds else a.type
        yield a.name, _Entry(flag, False, ("axis", a.type, a.bounds), {"type": reader, "default": None}, ""), \
            takes, (a.help or a.name, a.default)


def _directive_entries(directive: type):
    """(dest, _Entry, True, (help, default)) per field of the directive declared with `option`."""
    from ..ops.contract import flags_of
    for f, fl in flags_of(directive):
        if f.name == "dtype":            # the common --dtype (add_op_options lists its choices)
            continue
        flag = flag_of(f, fl)
        kind = _TYPES.get(f.type, f.type) if isinstance(f.type, str) else f.type
        if isinstance(fl.value, str) and fl.value not in READERS or fl.value is None and not callable(kind):
            raise ValueError(f"{directive.__name__}.{f.name}: option(value={fl.value!r}) is not allowed: a "
                             f"callable or one of {', '.join(READERS)} (needed unless the field is int, float, "
                             "str or bool)")
        switch = kind is bool and fl.value is None
        reader = READERS.get(fl.value, fl.value) if fl.value is not None else kind
        kw = {"default": None} if switch else {"type": reader, "default": None,
                                               **({"choices": list(fl.choices)} if fl.choices else {})}
        default = None if fl.raw else fl.cli_default if fl.cli_default is not dataclasses.MISSING else f.default
        yield dest_of(flag), _Entry(flag, switch, ("field", switch, fl.value if fl.value else kind, fl.choices), kw,
                                    ""), True, (fl.help, "required" if default is dataclasses.MISSING else default)


def _help(e: _Entry) -> str:
    """The help of each op that takes the flag (one text when they agree), then the defaults."""
    texts: dict[str, list] = {}
    for op, (text, _) in e.owners.items():
        texts.setdefault(text, []).append(op)
    out = "; ".join(t if len(texts) == 1 else f"{', '.join(ops)}: {t}" for t, ops in texts.items() if t)
    shown: dict[str, list] = {}
    for op, (_, d) in e.owners.items():
        if d not in (None, "") and not (e.switch and d is False):
            shown.setdefault("on" if d is True else str(d), []).append(op)
    if shown:
        every = len(shown) == 1 and len(next(iter(shown.values()))) == len(e.owners)
        out += (f" (default {next(iter(shown))})" if every else
                " (default " + "; ".join(f"{d} for {', '.join(ops)}" for d, ops in shown.items()) + ")")
    return out.replace("%", "%%")


def add_op_options(p: argparse.ArgumentParser, *, ops: tuple | None = None, joined_default: str = "",
                   compile_cmd: bool = False) -> None:
    """--op, --dtype, every op's problem-axis and directive flags, and every op's schedule flags.
    `joined_default`: the text of a flag several axes share when it is not given (GEMM's --shape;
    "" = it must be given). `compile_cmd`: axes with compile_flag=False are refused (still known:
    a clear error, not "unrecognized")."""
    from ..ops import registry
    ops = registry.names() if ops is None else ops
    p.add_argument("--op", default=ops[0] if ops else None, choices=list(ops),
                   help="op from the registry (wmma_gen/ops/registry.py); a flag of another op is an error")
    directives = {op: registry.directive_of(op) for op in ops}
    sharing: dict[type, list] = {}
    for op, d in directives.items():
        sharing.setdefault(d, []).append(op)
    p.add_argument("--dtype", required=True, help="input dtype: " + _dtypes(sharing))
    entries: dict[str, _Entry] = {}
    for op in ops:
        ops_of_d = sharing[directives[op]]
        group = f"{ops_of_d[0]} (--op {' | '.join(ops_of_d)})"
        made = list(_axis_entries(op, registry.axes_of(op), joined_default, compile_cmd))
        for dest, e, takes, shown in made + list(_directive_entries(directives[op])):
            have = entries.setdefault(dest, dataclasses.replace(e, group=group))
            if (have.flag, have.switch, have.reading) != (e.flag, e.switch, e.reading):
                raise ValueError(f"flag {e.flag} (dest {dest}) of --op {op} is read as {e.reading}, but another op "
                                 f"declares {have.flag} read as {have.reading}: one reading per flag")
            if takes:
                have.owners[op] = shown
            else:
                have.kernel_args.append(op)
    groups: dict[str, argparse._ArgumentGroup] = {}
    table = {}
    for dest, e in entries.items():
        g = groups.get(e.group) or groups.setdefault(e.group, p.add_argument_group(e.group))
        kw = dict(e.kw, help=_help(e) if e.owners else argparse.SUPPRESS)
        g.add_argument(e.flag, dest=dest, action=_switch_action(e) if e.switch else _STORE, **kw)
        table[dest] = (e.flag, tuple(e.owners), tuple(e.kernel_args))
    _add_schedule(p, ops, table)
    p.set_defaults(op_flags=table)


def _switch_action(e: _Entry) -> type:
    """A switch that an op defaults on also gets --no-NAME (else it could not be turned off:
    paged_attention's --causal); the others stay a plain --NAME."""
    return _BOTH if any(d is True for _, d in e.owners.values()) else _TRUE


def _dtypes(sharing: dict) -> str:
    """--dtype's help: each directive's dtype choices (its `dtype` field's option), with its ops."""
    from ..ops.contract import flags_of
    by_choices: dict[tuple, list] = {}
    for d, ops in sharing.items():
        choices = next((fl.choices for f, fl in flags_of(d) if f.name == "dtype"), ())
        if choices:
            by_choices.setdefault(tuple(choices), []).extend(ops)
    return "; ".join(f"{', '.join(c)} ({', '.join(ops)})" for c, ops in by_choices.items()) or "see the op's directive"


def _add_schedule(p, ops, table: dict) -> None:
    from ..ops import registry
    g = p.add_argument_group("schedule (default: the op's tuned or default schedule; each flag is a knob of "
                             "the ops named in its help)")
    g.add_argument("--schedule-json", action=_STORE, type=schedule_json, default=None,
                   help="a schedule of --op as JSON text or a path to a JSON file")
    table["schedule_json"] = ("--schedule-json", (EVERY_OP,), ())
    knobs: dict[str, dict] = {}
    for op in ops:
        for k in registry.space_of(op):
            knobs.setdefault(k.name, {})[op] = k
    for name, per_op in knobs.items():
        if name in table:
            raise ValueError(f"knob {name} of --op {', '.join(per_op)} has the dest of flag {table[name][0]}: "
                             "rename one")
        kinds = {type(k.domain[0]) for k in per_op.values()}
        text = "; ".join(f"{op}: {k.doc.splitlines()[0]} ({'|'.join(map(str, k.domain))})" for op, k in per_op.items())
        flag = f"--{name.replace('_', '-')}"
        g.add_argument(flag, dest=name, action=_STORE, type=kinds.pop() if len(kinds) == 1 else str, default=None,
                       help=text.replace("%", "%%"))
        table[name] = (flag, tuple(per_op), ())


def _takes(owners: tuple, spec: "OpSpec") -> bool:
    return spec.name in owners or EVERY_OP in owners


def op_spec(args) -> "OpSpec":
    """The registry's OpSpec of --op, after refusing every given flag that does not belong to it."""
    from ..ops import registry
    spec = registry.get(args.op)
    table, given = args.op_flags, getattr(args, "given_flags", None) or {}
    bad = [given[d] for d in given if d in table and not _takes(table[d][1], spec)]
    if bad:
        takes = [flag for flag, owners, _ in table.values() if _takes(owners, spec)]
        e = ScheduleError("--op", args.op, f"flags of {args.op}: {', '.join(takes)}")
        sizes = [table[d][0] for d in given if d in table and spec.name in table[d][2]]
        note = (f" ({', '.join(sizes)}: {spec.name} sizes are kernel arguments, so one code object serves every "
                "size)" if sizes else "")
        e.args = (f"{', '.join(bad)} {'does' if len(bad) == 1 else 'do'} not apply to --op {args.op}; "
                  f"--op {args.op} takes {', '.join(takes)} (besides the common flags: see --help){note}",)
        raise e
    return spec


def given_knobs(args, spec: "OpSpec") -> dict:
    return {k.name: getattr(args, k.name) for k in spec.space if getattr(args, k.name, None) is not None}


def schedule_for(args, spec: "OpSpec", base):
    """`base` (the op's default schedule) updated by --schedule-json, then by the knob flags;
    a value outside the op's domain names the flag, the op and the allowed values."""
    fields = base.to_dict()
    if args.schedule_json:
        try:
            fields.update(spec.schedule.from_dict({**fields, **args.schedule_json}).to_dict())
        except (ScheduleError, TypeError) as e:
            raise ScheduleError("--schedule-json", args.schedule_json,
                                f"fields of a {spec.schedule.__name__} (--op {spec.name}): {e}") from None
    for name, value in given_knobs(args, spec).items():
        dom = spec.schedule.KNOBS[name].domain
        if value not in dom or type(value) is not type(dom[0]):
            raise ScheduleError(f"--{name.replace('_', '-')}", value,
                                f"one of {', '.join(map(str, dom))} for --op {spec.name}")
        fields[name] = value
    return spec.schedule.from_dict(fields)
