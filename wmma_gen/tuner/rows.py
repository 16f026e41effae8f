"""Rows of a problems file: the row type of an op without its own row reader (autotune/problems.py
SpecReader reads it; an op's recorded.py makes it from a device call) and the writer
(`dump`: wmma_gen.torch.record_problems; the reader is autotune/problems.py)."""
from __future__ import annotations

import dataclasses
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SpecProblem:
    """One row: the op, its directive's fields and its Problem's fields (as (name, value) pairs)."""
    op: str
    directive_fields: tuple
    problem_fields: tuple

    @property
    def dtype(self) -> str:
        return dict(self.directive_fields).get("dtype", "")

    def _spec(self):
        from wmma_gen.ops import registry
        return registry.get(self.op)

    def directive(self):
        return self._spec().directive(**dict(self.directive_fields))

    def sizes(self) -> dict:
        return dataclasses.asdict(self._spec().make_problem(dict(self.problem_fields)))

    def to_dict(self) -> dict:
        return {"op": self.op, **dict(self.directive_fields), **dict(self.problem_fields)}


HEADER = ("# wmma_gen problems: `wmma-gen sweep --problems FILE` tunes one study per item\n"
          "# (format: autotune/problems.py)\n")

# The limits a problems file is held to, here with its writer so `dump` never writes a file the reader
# (autotune/problems.py) refuses. MAX_ITEMS is the real one: one sweep study per problem. The byte cap
# only bounds what the reader parses: the widest row `dumps` writes -- a paged row with every field, 19 of
# them -- is 309 bytes of YAML (401 of JSON), and a hand-written block-style file of the same row about
# twice that, so ROW_BYTES per problem holds any legal file of MAX_ITEMS problems. (It was 1 MiB: 10,000
# GEMM rows fit, 10,000 attention rows -- 160 bytes each -- did not.)
MAX_ITEMS = 10_000
ROW_BYTES = 1024
MAX_BYTES = MAX_ITEMS * ROW_BYTES
_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def dumps(problems, path="problems.yaml") -> str:
    """The file text: YAML (one flow mapping per line), or JSON (one object per line) for a .json path.
    Raises ScheduleError naming `problems` past MAX_ITEMS problems or MAX_BYTES bytes."""
    from ..errors import ScheduleError
    items = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in problems]
    if len(items) > MAX_ITEMS:
        raise ScheduleError("problems", f"{len(items)} problems", f"at most {MAX_ITEMS} per file (one sweep study "
                            "each): split the list over several files")
    if str(path).endswith(".json"):
        text = "[\n" + ",\n".join(" " + json.dumps(i) for i in items) + "\n]\n"
    else:
        text = HEADER + "".join(f"- {_flow_line(i)}\n" for i in items)
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise ScheduleError("problems", f"{size} bytes", f"at most {MAX_BYTES} bytes ({ROW_BYTES} per problem): a "
                            "row this long is not one the ops write")
    return text


def _flow_line(item: dict) -> str:
    """`item` as one YAML flow mapping, exactly as yaml.dump(default_flow_style=True) writes it, without
    PyYAML's Python emitter when every value is a plain token (10,000 rows: 6.7 s -> well under 1 s)."""
    try:
        return _flow(item)
    except _NotPlain:
        import yaml

        class _Plain(yaml.SafeDumper):          # never anchors/aliases: the reader refuses them (loads)
            def ignore_aliases(self, data):
                return True
        return yaml.dump(item, Dumper=_Plain, sort_keys=False, default_flow_style=True, width=1 << 16).rstrip("\n")


class _NotPlain(Exception):
    """A value PyYAML would quote or type differently; the emitter writes the item."""


def _flow(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str) and _TOKEN.fullmatch(v) and _plain_str(v):
        return v
    if isinstance(v, dict) and v and all(isinstance(k, str) for k in v):
        return "{" + ", ".join(f"{_flow(k)}: {_flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)) and v:
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    raise _NotPlain(v)


@functools.lru_cache(maxsize=1024)
def _plain_str(token: str) -> bool:
    """A plain token YAML reads back as this string (not 'true', 'null', '1e3', '0x10', ...)."""
    import yaml
    return yaml.resolver.Resolver().resolve(yaml.ScalarNode, token, (True, False)) == "tag:yaml.org,2002:str"


def dump(problems, path: str | Path) -> Path:
    """Write problems (Problem objects or their dicts) as YAML, or JSON for a .json path."""
    path = Path(path)
    path.write_text(dumps(problems, path), encoding="utf-8")
    return path
