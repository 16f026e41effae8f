"""Rows of a problems file: the row type of an op without its own row reader (autotune/problems.py
SpecReader reads it; an op's recorded.py makes it from a device call) and the writer
(`dump`: wmma_gen.torch.record_problems; the reader is autotune/problems.py)."""
from __future__ import annotations

import dataclasses
import json
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


def dumps(problems, path="problems.yaml") -> str:
    items = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in problems]
    if str(path).endswith(".json"):
        return json.dumps(items, indent=1) + "\n"
    import yaml

    class _Plain(yaml.SafeDumper):          # never anchors/aliases: the reader refuses them (loads)
        def ignore_aliases(self, data):
            return True
    return HEADER + "".join(f"- {yaml.dump(i, Dumper=_Plain, sort_keys=False, default_flow_style=True, width=1 << 16)}"
                            for i in items)


def dump(problems, path: str | Path) -> Path:
    """Write problems (Problem objects or their dicts) as YAML, or JSON for a .json path."""
    path = Path(path)
    path.write_text(dumps(problems, path), encoding="utf-8")
    return path
