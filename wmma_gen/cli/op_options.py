"""One per-op option model for `check`, `compile` and `analyze` (issue 24 item 3).

Every op-specific flag is declared once, tagged with what it belongs to:
  * the directive flags of an op family, tagged with the directive class (GemmDirective:
    --shape, --layout, --acc, ...; AttentionDirective: --head-dim, --causal, --seq-q, ...);
  * the schedule flags, one per knob of any op's SPACE table (ops/<op>/schedule.py), tagged
    with the knob name; --schedule-json belongs to every op.
After parsing, `op_spec(args)` looks the op up in the registry and refuses any flag given on
the command line whose tag the op does not have -- its directive class (OpSpec.directive) or
its knob table (OpSpec.space) -- naming the op and the flags it takes. So `--shape` or
`--block-k` with --op attention, or `--causal` with --op gemm, is an error, and `--block-m 48`
with --op attention is checked against attention's block_m domain, not GEMM's.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import ScheduleError
from ..attention_common.directive import AttentionDirective
from ..ops.gemm.directive import ACTIVATIONS, IN_DTYPES, LAYOUTS, GemmDirective
from .options import f32_exact, int_at_least, parse_shape, schedule_json

if TYPE_CHECKING:
    from ..ops.registry import OpSpec

INT32_MAX = 2**31 - 1       # sequence lengths and head counts are i32 kernel arguments
SCHEDULE_JSON = "schedule_json"
KERNEL_ARG = "kernel_arg"   # owner of attention sizes in `compile`: no op takes them there


def _recording(base: type) -> type:
    """An argparse action class like `base` that also records the flag as given."""
    class Recorded(base):
        def __call__(self, parser, namespace, values, option_string=None):
            given = getattr(namespace, "given_flags", None)
            if given is None:
                given = {}
                setattr(namespace, "given_flags", given)
            given[self.dest] = self.option_strings[0]
            super().__call__(parser, namespace, values, option_string)
    Recorded.__name__ = f"Recorded{base.__name__}"
    return Recorded


_STORE, _TRUE = _recording(argparse._StoreAction), _recording(argparse._StoreTrueAction)


def _flag(p, group, owners: tuple, *names, **kw) -> None:
    """Add a flag to `group` whose owners (directive classes, ("knob", name) or SCHEDULE_JSON)
    are recorded in the parser's op-flag table."""
    kw["action"] = _TRUE if kw.get("action") == "store_true" else _STORE
    a = group.add_argument(*names, **kw)
    table = dict(p.get_default("op_flags") or {})
    table[a.dest] = (a.option_strings[0], owners)
    p.set_defaults(op_flags=table)


def add_op_options(p: argparse.ArgumentParser, *, ops: tuple | None = None, shape_default: str = "",
                   attention_sizes: bool = True) -> None:
    """--op, --dtype, the GEMM and attention flags and every op's schedule flags.
    `attention_sizes`: the command uses attention problem sizes (compile does not: they are
    kernel arguments, so --heads/--seq-q/... are not offered there)."""
    from ..ops import registry
    ops = registry.names() if ops is None else ops
    p.add_argument("--op", default="gemm", choices=list(ops),
                   help="op from the registry (wmma_gen/ops/registry.py); a flag of another op is an error")
    p.add_argument("--dtype", required=True, help=f"input dtype: {', '.join(IN_DTYPES)} (attention: f16, bf16)")
    gemm = (GemmDirective,)
    batch_owners = gemm + ((AttentionDirective,) if attention_sizes else (KERNEL_ARG,))
    g = p.add_argument_group("gemm (--op gemm)")
    _flag(p, g, gemm, "--shape", default=shape_default, help="MxNxK (e.g. 256x256x256); M,N,K >= 1")
    _flag(p, g, gemm, "--layout", default="NN", help=f"{'|'.join(LAYOUTS)}: first letter A, second B; T = transposed")
    _flag(p, g, batch_owners, "--batch", type=int_at_least(1, INT32_MAX), default=1,
          help="batch (gemm" + (" and attention)" if attention_sizes else ")"))
    _flag(p, g, gemm, "--acc", default="", help="accumulator: f32 (default for floats), f16/bf16 (gfx11), i32")
    _flag(p, g, gemm, "--out-dtype", default="", help="output dtype (default: the accumulator)")
    _flag(p, g, gemm, "--alpha", type=f32_exact, default=1.0, help="scale of A@B (exact in f32)")
    _flag(p, g, gemm, "--beta", type=f32_exact, default=0.0, help="scale of C0 (exact in f32)")
    _flag(p, g, gemm, "--bias", default="", choices=["", "n", "m"], help="bias along N (per column) or M (per row)")
    _flag(p, g, gemm, "--activation", default="", choices=[""] + list(ACTIVATIONS),
          help="as torch: gelu = exact erf (nn.GELU()), gelu_tanh = GELU(approximate='tanh')")
    _flag(p, g, gemm, "--unsigned", action="store_true", help="integer inputs are unsigned")
    att = (AttentionDirective,)
    g = p.add_argument_group("attention (--op attention | attention_bwd)")
    _flag(p, g, att, "--head-dim", type=int, default=64, help="a multiple of 16 from 16 to 512")
    # without attention_sizes the size flags are still known, owned by no op: a clear error, not "unrecognized"
    sizes, hide = (att, {}) if attention_sizes else ((KERNEL_ARG,), {"help": argparse.SUPPRESS})
    _flag(p, g, sizes, "--heads", type=int_at_least(1, INT32_MAX), default=2, **{"help": "query heads", **hide})
    _flag(p, g, sizes, "--kv-heads", type=int_at_least(1, INT32_MAX), default=1,
          **{"help": "key/value heads (divides --heads: GQA/MQA)", **hide})
    _flag(p, g, sizes, "--seq-q", type=int_at_least(0, INT32_MAX), default=40,
          **{"help": "query length (0 allowed)", **hide})
    _flag(p, g, sizes, "--seq-k", type=int_at_least(0, INT32_MAX), default=72,
          **{"help": "key length (0 allowed)", **hide})
    _flag(p, g, att, "--causal", action="store_true", help="bottom-right aligned causal mask")
    _flag(p, g, att, "--window", default="",
          help="LEFT,RIGHT sliding window (-1 = unbounded; write --window=-1,0 when LEFT is negative)")
    _flag(p, g, att, "--attn-layout", default="bshd", choices=["bshd", "bhsd"])
    _add_axes(p, ops)
    _add_schedule(p, ops)


def _add_axes(p, ops) -> None:
    """A flag per problem axis of any op that no flag above declares (an op registered beyond
    gemm and attention), owned by that op: its name, type, default and help come from the Axis."""
    from ..ops import registry
    table = dict(p.get_default("op_flags") or {})
    dest_of = {flag: dest for dest, (flag, _) in table.items()}
    g = None
    for op in ops:
        for a in registry.axes_of(op):
            if a.flag in dest_of:     # a flag declared above (e.g. --batch): this op takes it too
                flag, owners = table[dest_of[a.flag]]
                if dest_of[a.flag] == a.name and KERNEL_ARG not in owners:
                    table[a.name] = (flag, owners + (("axis", op),))
                    p.set_defaults(op_flags=table)
                continue
            g = g or p.add_argument_group("problem sizes of other ops (their Problem's axes)")
            _flag(p, g, (("axis", op),), a.flag, dest=a.name, type=a.type, default=None,
                  help=f"{op}: {a.help or a.name} (default {a.default})".replace("%", "%%"))
            table = dict(p.get_default("op_flags"))
            dest_of[a.flag] = a.name


def _spaces(ops) -> dict[str, tuple]:
    """op -> its SPACE, from the light spec modules (the registry's loaders import MLIR)."""
    from ..ops import registry
    return {op: registry.space_of(op) for op in ops}


def _add_schedule(p, ops) -> None:
    g = p.add_argument_group("schedule (default: the op's tuned or default schedule; each flag is a knob of "
                             "the ops named in its help)")
    _flag(p, g, (SCHEDULE_JSON,), "--schedule-json", type=schedule_json, default=None,
          help="a schedule of --op as JSON text or a path to a JSON file")
    knobs: dict[str, dict] = {}
    for op, space in _spaces(ops).items():
        for k in space:
            knobs.setdefault(k.name, {})[op] = k
    for name, per_op in knobs.items():
        kinds = {type(k.domain[0]) for k in per_op.values()}
        text = "; ".join(f"{op}: {k.doc.splitlines()[0]} ({'|'.join(map(str, k.domain))})" for op, k in per_op.items())
        _flag(p, g, (("knob", name),), f"--{name.replace('_', '-')}", dest=name,
              type=kinds.pop() if len(kinds) == 1 else str, default=None, help=text.replace("%", "%%"))


def _applies(owners: tuple, spec: "OpSpec", dest: str = "") -> bool:
    """The flag belongs to the op: its directive class, its knobs, one of its problem axes or
    --schedule-json; for an op on the generic commands (no cli_from hooks) also a flag named
    after a field of its directive (--head-dim, --causal, ...)."""
    import dataclasses
    if dest and not spec.cli_from and dataclasses.is_dataclass(spec.directive) and \
            dest in {f.name for f in dataclasses.fields(spec.directive)} and KERNEL_ARG not in owners:
        return True
    knobs = {k.name for k in spec.space}
    return any(o is spec.directive or o == SCHEDULE_JSON or o == ("axis", spec.name)
               or (isinstance(o, tuple) and o[0] == "knob" and o[1] in knobs) for o in owners)


def op_spec(args) -> "OpSpec":
    """The registry's OpSpec of --op, after refusing every given flag that does not belong to it."""
    from ..ops import registry
    spec = registry.get(args.op)
    table, given = args.op_flags, getattr(args, "given_flags", None) or {}
    bad = [table[d][0] for d in given if d in table and not _applies(table[d][1], spec, d)]
    if bad:
        takes = [flag for d, (flag, owners) in table.items() if _applies(owners, spec, d)]
        e = ScheduleError("--op", args.op, f"flags of {args.op}: {', '.join(takes)}")
        sizes = [table[d][0] for d in given if d in table and KERNEL_ARG in table[d][1]]
        note = (f" ({', '.join(sizes)}: attention sizes are kernel arguments, so one code object serves every "
                "size)" if sizes and spec.directive is AttentionDirective else "")
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


def gemm_problem_from(args):
    """The GemmProblem of `--shape MxNxK` and `--batch` (what `--op gemm` passes down)."""
    from ..ops.gemm.problem import GemmProblem
    m, n, k = parse_shape(args.shape)
    return GemmProblem(m, n, k, args.batch)


def directive_from(args) -> GemmDirective:
    return GemmDirective(args.dtype, acc=args.acc, layout=args.layout.upper(), out_dtype=args.out_dtype,
                         alpha=args.alpha, beta=args.beta, bias=args.bias,
                         activation=args.activation, unsigned=args.unsigned)


def window_of(args):
    """--window LEFT,RIGHT -> (left, right) or None."""
    text = args.window
    if not text:
        return None
    try:
        left, right = (int(x) for x in text.split(","))
    except ValueError:
        raise ScheduleError("--window", text, "LEFT,RIGHT integers >= -1 (e.g. 128,0)") from None
    if min(left, right) < -1 or max(left, right) > INT32_MAX:
        raise ScheduleError("--window", text, f"LEFT,RIGHT integers in [-1, {INT32_MAX}] (-1 = unbounded)")
    return left, right


def attention_directive(args, op: str) -> AttentionDirective:
    return AttentionDirective(args.dtype, args.head_dim, causal=args.causal, window=window_of(args) is not None,
                              layout=args.attn_layout, op=op)
