"""Problem files: the exact problems a sweep tunes (`wmma-gen sweep --problems FILE`).

A YAML or JSON list (JSON for a .json file, YAML otherwise); one item per problem: its `op`
and that op's fields, read by the op's own row reader (FIELDS, REQUIRED, read, from_fields: the
module its spec declares as LIGHT_MODULES["problem_file"], registry.light_module), e.g.

    - {op: gemm, dtype: f16, m: 4096, n: 4096, k: 1024, layout: NT [NN], batch: 8 [1],
       epilogue: {bias: true [false], activation: gelu [null]}, out_dtype: f16 [the accumulator's]}
    - {op: attention | attention_bwd, dtype: f16, head_dim: 128, heads: 32, seq_q: 1024,
       seq_k: 4096, batch: 2 [1], kv_heads: 8 [heads], causal: true [false],
       window: [256, 0] [null], varlen: false [false], layout: bshd [bshd]}

Each item becomes one study tuned on exactly that problem (the op's Tuning `items`, ops/<op>/tuning.py); a
problem listed twice is tuned once. Legality is the op's own (its directive's checks, the sizes
its kernels can index); here: the fields the op's reader names, the required ones, the dtypes
the target's WMMA takes. A refused file is one ProblemFileError line naming the item, field,
value and what is allowed:

    problems.yaml: problems[2].layout = 'XY' is not allowed: one of NN, NT, TN, TT

`wmma_gen.torch.record_problems()` writes this format (`dump`) from a model's calls.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path
from typing import Optional

from wmma_gen.errors import ScheduleError
from wmma_gen.tuner.rows import MAX_BYTES, MAX_ITEMS, ROW_BYTES, SpecProblem  # limits: the writer's (tuner/rows.py)

MAX_DEPTH = 8                  # a problem file nests 3 deep (list, problem, epilogue / window)
MAX_NODES = 64 * MAX_ITEMS     # YAML values after alias expansion (a paged row with every field has 40; `_bounded`)


class ProblemFileError(ScheduleError):
    """A problem file was refused: names the file, the item, the field, the value and what is allowed."""

    def __init__(self, path, index: Optional[int], field: str, value: object, allowed: str):
        where = field if index is None else f"problems[{index}].{field}" if field else f"problems[{index}]"
        super().__init__(where, value, allowed)
        text = repr(value) if len(repr(value)) <= 120 else repr(value)[:120] + "..."
        self.args = (f"{path}: {where} = {text} is not allowed: {allowed}",)

    def __str__(self) -> str:
        return self.args[0]


# the two ops' rows, re-exported where wmma_gen.torch.record_problems() imports them from; a row
# is the directive's fields plus the sizes of the op's one Problem (row.problem: ops/<op>/spec.py)
from wmma_gen.attention_common.problem_file import AttentionRow  # noqa: E402,F401
from wmma_gen.ops.gemm.problem_file import GemmRow  # noqa: E402,F401

Problem = object          # any op's problem: frozen, with op, dtype, directive(), sizes(), to_dict()


def reader(op: str):
    """The op's problem-file row reader: its own (its spec's LIGHT_MODULES), else the one derived
    from its OpSpec (SpecReader below: the directive's fields plus the Problem's); None for an op
    the tuner cannot sweep."""
    from wmma_gen.ops import registry
    if op not in registry.tunable():
        return None
    return registry.light_module(op, "problem_file") or spec_reader(op)


def readable() -> tuple[str, ...]:
    """Ops a problems file may name: the sweepable ones."""
    from wmma_gen.ops import registry
    return tuple(op for op in registry.tunable() if reader(op) is not None)


def from_fields(fields_: dict) -> Problem:
    """A problem from its dataclass fields (dataclasses.asdict: sweep worker processes)."""
    return reader(fields_["op"]).from_fields(fields_)


# ---- reading and checking -------------------------------------------------------------------
def load(path: str | Path, arch: Optional[str] = None) -> tuple[Problem, ...]:
    """The problems of a file (duplicates dropped, file order kept); with `arch`, each dtype is
    checked against the target. Raises ProblemFileError."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ProblemFileError(path, None, "<file>", f"{size} bytes", f"at most {MAX_BYTES} bytes ({MAX_ITEMS} "
                                   f"problems of up to {ROW_BYTES} bytes each)")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ProblemFileError(path, None, "<file>", e.reason, "UTF-8 YAML or JSON text") from None
    except OSError as e:
        raise ProblemFileError(path, None, "<file>", e.strerror or type(e).__name__, "a readable file") from None
    return parse(loads(text, path), path, arch)


def loads(text: str, path="<memory>"):
    if str(path).endswith(".json"):
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ProblemFileError(path, None, "<json>", str(e).splitlines()[0], "a JSON list of problems") from None
    fast = _json_shaped(text)
    if fast is not None:
        return fast
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)     # libyaml's parser when present
    try:
        _bounded(yaml.parse(text, Loader=loader), path)
        return yaml.load(text, Loader=loader)
    except (yaml.YAMLError, RecursionError) as e:
        raise ProblemFileError(path, None, "<yaml>", " ".join(str(e).split())[:200],
                               "a YAML list of problems") from None


def _json_shaped(text: str):
    """The document when it has one of three simple shapes -- comment lines around one JSON list;
    one flow mapping per line (`- {op: gemm, m: 64, epilogue: {bias: false}}`, what `dumps` writes);
    or block mappings of single-token values (_block_as_flow, what yaml.safe_dump writes) -- whose
    plain scalars PyYAML's own resolver and constructor type (_plain); else None, and PyYAML reads
    the whole text. Same values as PyYAML's, without its Python-level parser and constructor (a 1 MB,
    10,000-problem file: well under 1 s instead of several); none of the shapes has aliases."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        if lines and lines[0].lstrip().startswith("["):
            return json.loads("\n".join(lines))
        if lines and not lines[0].startswith("- {"):
            lines = _block_as_flow(lines) or []
        if 0 < len(lines) <= MAX_ITEMS and all(ln.startswith("- {") for ln in lines):   # more: _bounded says so
            flow = "[" + ",".join(ln[2:] for ln in lines) + "]"
            if _FLOW_CHARS.fullmatch(flow) and not _GLUED_COLON.search(flow):
                return _typed(json.loads(_PLAIN_EDGE.sub('"', flow), object_pairs_hook=_typed_mapping))
    except (json.JSONDecodeError, RecursionError, _NotSimple):
        return None
    return None


_BLOCK = re.compile(r"(- |  |    )([A-Za-z_][A-Za-z0-9_]*):(?: +(\S.*?))? *|(  |    )- +(\S.*?) *")
# a token or one inline collection; a lone "-" is a block sequence indicator, not a scalar, in block context
_ONE_VALUE = re.compile(r"(?!-$)(?:[A-Za-z0-9_.+-]+|\[[^\[\]{}]*\]|\{[^\[\]{}]*\})")


def _block_as_flow(lines: list) -> list | None:
    """A list of block mappings, each `- key: value` then `  key: value` lines, one level of nesting
    (`  key:` then `    key: value` lines, or `  - value` / `    - value` items), every value one
    plain token or one inline [..] / {..} collection, as the equal flow lines `- {key: value, ...}`;
    None for any other shape (a multi-word value, a comment after a value, deeper nesting, ...)."""
    items, item, nested = [], None, None        # item: [(key, value)]; nested: (kind, [parts]) being filled
    for ln in lines:
        m = _BLOCK.fullmatch(ln)
        if m is None:
            return None
        lead, key, value, seq_lead, seq_value = m.groups()
        if seq_lead is not None:                # `  - v` or `    - v`: an item of the open nested list
            if nested is None or nested[0] == "map" or not _ONE_VALUE.fullmatch(seq_value):
                return None
            nested = ("seq", nested[1] + [seq_value])
            item[-1] = (item[-1][0], nested)
            continue
        if value is not None and not _ONE_VALUE.fullmatch(value):
            return None
        if lead == "    ":                      # an entry of the open nested mapping
            if nested is None or nested[0] == "seq" or value is None:
                return None
            nested = ("map", nested[1] + [f"{key}: {value}"])
            item[-1] = (item[-1][0], nested)
            continue
        if nested is not None and not nested[1]:
            return None                         # `key:` with nothing under it: a null PyYAML types itself
        if lead == "- ":
            item = []
            items.append(item)
        elif item is None:
            return None
        nested = None if value is not None else ("open", [])
        item.append((key, value if value is not None else nested))
    if nested is not None and not nested[1]:
        return None

    def text(v):
        return v if isinstance(v, str) else ("[" if v[0] == "seq" else "{") + ", ".join(v[1]) + \
            ("]" if v[0] == "seq" else "}")
    return ["- {" + ", ".join(f"{k}: {text(v)}" for k, v in it) + "}" for it in items]


class _NotSimple(Exception):
    """A scalar the fast path does not carry (PyYAML reads the file)."""


# the flow shape: indicators, blanks and plain scalars of characters no quote or indicator uses;
# a mapping's colon is followed by a blank (YAML's rule for a plain key); the JSON text that
# results is refused by json.loads where YAML would read something else (`{a b: 1}`, `{a}`)
_FLOW_CHARS = re.compile(r"[ \t{}\[\],:A-Za-z0-9_.+-]*")
_GLUED_COLON = re.compile(r":(?![ \t])")
_PLAIN_EDGE = re.compile(r"(?<![A-Za-z0-9_.+-])(?=[A-Za-z0-9_.+-])|(?<=[A-Za-z0-9_.+-])(?![A-Za-z0-9_.+-])")   # quote here


def _typed_mapping(pairs) -> dict:
    return {_plain(k): _typed(v) for k, v in pairs}


def _typed(v):
    """Every scalar of the flow shape is plain (no quotes pass _FLOW_CHARS), read as a JSON string: typed here."""
    return _plain(v) if isinstance(v, str) else [_typed(x) for x in v] if isinstance(v, list) else v


@functools.lru_cache(maxsize=4096)
def _plain(token: str):
    """A plain scalar as PyYAML's SafeLoader types it (its implicit resolvers: int, float, bool,
    null, else str); anything JSON cannot carry (a timestamp) is not simple."""
    import yaml
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, token, (True, False))
    value = yaml.constructor.SafeConstructor().construct_object(yaml.ScalarNode(tag, token))
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise _NotSimple(token)
    return value


def _bounded(events, path) -> None:
    """Refuse, from the event stream alone (nothing constructed), a document whose aliases would
    expand past MAX_NODES values (the 1 KB "billion laughs" alias bomb expands to 9**12) or that
    lists more than MAX_ITEMS problems. Linear in the events: an anchor's expanded size is kept
    when its node ends, an alias adds it."""
    import yaml
    sizes, stack, items, per_item = {}, [], 0, 1
    for ev in events:
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if not stack:
                per_item = 1 if isinstance(ev, yaml.SequenceStartEvent) else 2    # a mapping: keys and values
            if len(stack) >= MAX_DEPTH:
                line = ev.start_mark.line + 1 if ev.start_mark else "?"
                raise ProblemFileError(path, None, "<yaml>", f"nesting deeper than {MAX_DEPTH} at line {line}",
                                       f"YAML nested at most {MAX_DEPTH} deep (a problem file nests 3 deep)")
            stack.append([ev.anchor, 1])
            continue
        if isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent)):
            n = 1 if isinstance(ev, yaml.ScalarEvent) else sizes.get(ev.anchor, 1)
            if isinstance(ev, yaml.ScalarEvent) and ev.anchor:
                sizes[ev.anchor] = 1
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, n = stack.pop()
            if anchor:
                sizes[anchor] = n
        else:
            continue
        if not stack:
            continue
        stack[-1][1] += n
        if len(stack) == 1:
            items += 1
        if stack[0][1] > MAX_NODES or items > per_item * MAX_ITEMS:
            line = ev.start_mark.line + 1 if ev.start_mark else "?"
            what = (f"more than {MAX_NODES} values once aliases are expanded (at line {line})"
                    if stack[0][1] > MAX_NODES else f"more than {MAX_ITEMS} problems (at line {line})")
            raise ProblemFileError(path, None, "<yaml>", what, f"at most {MAX_ITEMS} problems of at most "
                                   f"{MAX_NODES // MAX_ITEMS} values each (aliases expanded)")


def parse(doc: object, path="<memory>", arch: Optional[str] = None) -> tuple[Problem, ...]:
    if not isinstance(doc, list) or not doc:
        raise ProblemFileError(path, None, "<root>", doc if not isinstance(doc, (dict, list)) else type(doc).__name__,
                               "a non-empty list of problems (one mapping per problem)")
    if len(doc) > MAX_ITEMS:
        raise ProblemFileError(path, None, "<root>", f"{len(doc)} problems", f"at most {MAX_ITEMS}")
    codecs: dict = {}              # each op's reader, looked up once per file
    out = [_item(item, i, path, arch, codecs) for i, item in enumerate(doc)]
    return tuple(dict.fromkeys(out))


def _item(item: object, i: int, path, arch: Optional[str], codecs: dict) -> Problem:
    def bad(field, value, allowed):
        raise ProblemFileError(path, i, field, value, allowed)

    if not isinstance(item, dict):
        bad("", type(item).__name__, "a mapping of fields (op, dtype, ...)")
    op = item.get("op")
    if isinstance(op, str) and op not in codecs:
        codecs[op] = reader(op)
    codec = codecs.get(op) if isinstance(op, str) else None
    if codec is None:
        bad("op", op, f"one of {', '.join(readable())} (ops the tuner can sweep from a problems file)")
    for name in item:
        if name not in codec.FIELDS:
            bad(str(name), item[name], f"a field of {op}: one of {', '.join(codec.FIELDS)}")
    for name in codec.REQUIRED:
        if name not in item:
            bad(name, None, f"given: {op} needs {', '.join(codec.REQUIRED)}")
    try:
        p = codec.read(item, op, bad, lambda name, default=None, lo=1, hi=None: _int(item, name, bad, default, lo, hi),
                       lambda value, field: _bool(value, field, bad))
    except ProblemFileError:
        raise
    except ScheduleError as e:          # the op's own directive refused it
        bad(codec.RENAMED.get(e.field, e.field), e.value, e.allowed)
    if arch is not None:
        _on_target(p, arch, bad)
    return p


def _int(item: dict, name: str, bad, default=None, lo: int = 1, hi: Optional[int] = None) -> int:
    v = item.get(name, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
        bad(name, v, f"an integer >= {lo}" + (f" and <= {hi}" if hi is not None else ""))
    return v


def _bool(value, field: str, bad) -> bool:
    if not isinstance(value, bool):
        bad(field, value, "true or false")
    return value


def _on_target(p: Problem, arch: str, bad) -> None:
    allowed = _target_dtypes(p.op, arch)
    if p.dtype not in allowed:
        bad("dtype", p.dtype, f"{p.op} on {arch} takes {', '.join(allowed)}")


@functools.lru_cache(maxsize=64)
def _target_dtypes(op: str, arch: str) -> tuple[str, ...]:
    """The dtypes the op tunes that the target's WMMA takes (asked once per (op, arch), not per row)."""
    from wmma_gen.ops.registry import tuning
    from wmma_gen.targets import get_target
    return tuple(dt for dt in tuning(op).dtypes if dt in get_target(arch).dtypes)


# ---- a row read from the op's OpSpec alone ------------------------------------------------------
# For an op without its own ops/<op>/problem_file.py the row is {op, <the directive's fields>,
# <the Problem's fields>}; the directive and spec.make_problem check it, the problem axes typed
# int are integers >= 1. E.g. the contract's dummy op: {op: dummy, dtype: f16, n: 300}.
def _required(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls)
                 if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)


def _hashable(v):
    return tuple(_hashable(x) for x in v) if isinstance(v, (list, tuple)) else v


class SpecReader:
    """The problem_file interface (FIELDS, REQUIRED, RENAMED, read, from_fields) from an OpSpec."""

    def __init__(self, op: str):
        from wmma_gen.ops import registry
        spec = registry.get(op)
        self.op, self.spec = op, spec
        self.directive_names = tuple(f.name for f in dataclasses.fields(spec.directive))
        self.problem_names = tuple(f.name for f in dataclasses.fields(spec.problem))
        self.FIELDS = tuple(dict.fromkeys(("op",) + self.directive_names + self.problem_names))
        self.REQUIRED = tuple(dict.fromkeys(_required(spec.directive) + _required(spec.problem)))
        self.RENAMED: dict = {}

    def read(self, item: dict, op: str, bad, number, flag) -> SpecProblem:
        ints = {a.name for a in self.spec.problem_axes if a.type is int}
        values = {n: number(n) if n in ints else _hashable(item[n]) for n in self.problem_names if n in item}
        p = SpecProblem(op, tuple((n, _hashable(item[n])) for n in self.directive_names if n in item),
                        tuple(values.items()))
        p.directive()           # the op's own checks
        p.sizes()               # spec.make_problem's
        return p

    @staticmethod
    def from_fields(fields_: dict) -> SpecProblem:
        return SpecProblem(fields_["op"], _hashable(fields_["directive_fields"]), _hashable(fields_["problem_fields"]))


_SPEC_READERS: dict = {}


def spec_reader(op: str) -> SpecReader:
    if op not in _SPEC_READERS:
        _SPEC_READERS[op] = SpecReader(op)
    return _SPEC_READERS[op]


# ---- writing ---------------------------------------------------------------------------------
