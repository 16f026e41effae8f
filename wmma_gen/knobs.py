"""Knob: one tunable of an op's schedule, declared once in the op's `SPACE` table (STYLE rule 6),
and `KnobSchedule`, what every op's frozen schedule dataclass shares: each field checked against
its knob's domain, JSON/dict round trips, and legality by the op's named `CONSTRAINTS`.

From an op's SPACE come the Optuna suggest calls (wmma_gen/tuner/space.py), the CLI flags, the JSON
schema and the hypothesis strategies. An op declares its schedule as

    @dataclass(frozen=True)
    class MySchedule(KnobSchedule):
        block_m: int = 64
        ...
    CONSTRAINTS = (named_check, ...)      # (schedule, *context) -> None | reason
    MySchedule.bind(SPACE, CONSTRAINTS)

where *context is what the op's checks need (GEMM and attention: directive, target).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Callable, ClassVar, Optional

from .errors import ScheduleError


@dataclass(frozen=True)
class Knob:
    name: str
    domain: tuple
    doc: str
    when: Optional[Callable[[object], bool]] = None  # knob matters only when true (given the schedule)


class KnobSchedule:
    """Base of the ops' schedule dataclasses (fields = the op's knobs; see the module doc)."""
    SPACE: ClassVar[tuple] = ()
    KNOBS: ClassVar[dict] = {}
    CONSTRAINTS: ClassVar[tuple] = ()
    RETIRED: ClassVar[dict] = {}     # knob removed -> the one value it ever had (older files still load)

    @classmethod
    def bind(cls, space: tuple, constraints: tuple) -> None:
        """Attach the op's knob table and legality checks (called once, after both are defined)."""
        names = [f.name for f in fields(cls)]
        if names != [k.name for k in space]:
            raise TypeError(f"{cls.__name__} fields {names} must be its SPACE's knobs in order")
        cls.SPACE, cls.KNOBS, cls.CONSTRAINTS = space, {k.name: k for k in space}, tuple(constraints)

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            dom = self.KNOBS[f.name].domain
            if v not in dom or type(v) is not type(dom[0]):
                raise ScheduleError(f.name, v, f"one of {', '.join(map(str, dom))}")

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict):
        """A schedule from its fields (missing ones take the defaults). A retired knob (RETIRED) is
        accepted and dropped when it carries the one value it ever had -- files written before it
        was removed still load -- and refused naming it otherwise."""
        for name, only in cls.RETIRED.items():
            if name in d and (d[name] != only or type(d[name]) is not type(only)):
                raise ScheduleError(name, d[name], f"{only!r} or absent (a retired knob: every {cls.__name__} "
                                    f"runs as {name}={only!r})")
        d = {k: v for k, v in d.items() if k not in cls.RETIRED}
        unknown = set(d) - set(cls.KNOBS)
        if unknown:
            raise ScheduleError("schedule", sorted(unknown), f"known fields are {', '.join(cls.KNOBS)}")
        return cls(**d)

    def replace(self, **kw):
        return replace(self, **kw)

    def problems(self, *context) -> list[str]:
        """Reasons this schedule is illegal for `context` (empty when legal)."""
        return [r for c in self.CONSTRAINTS if (r := c(self, *context)) is not None]

    def validate(self, *context):
        """Self, or ScheduleError naming the first failing check."""
        return self.check(self.CONSTRAINTS, *context)

    def check(self, checks, *context):
        for c in checks:
            reason = c(self, *context)
            if reason is not None:
                raise ScheduleError.rejected(c.__name__, reason, self.to_dict())
        return self


class JsonRecord:
    """The dict / JSON round trip of a frozen dataclass of plain fields (the ops' directives)."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict):
        return cls(**d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def as_schedule(cls: type, value, field: str = "schedule"):
    """What an API's `schedule=` argument may be, as a `cls` (an op's KnobSchedule): None (the
    caller picks its default), a `cls`, or a dict of its fields (missing ones take the defaults;
    unknown fields and values outside a knob's domain are refused). Anything else -- a string, a
    list, another op's schedule -- is a ScheduleError naming `field`, the value and what is
    allowed (never an AttributeError further down). Legality for a directive and target is the
    caller's `validate(...)`."""
    if value is None or isinstance(value, cls):
        return value
    article = "an" if cls.__name__[:1] in "AEIOU" else "a"
    allowed = (f"{article} {cls.__name__}, a dict of its fields ({', '.join(cls.KNOBS)}) or None for the default")
    if isinstance(value, KnobSchedule):
        raise ScheduleError(field, value, f"{allowed}; got a {type(value).__name__}, another op's schedule")
    if not isinstance(value, dict):
        hint = " (a JSON text: pass json.loads(text))" if isinstance(value, (str, bytes)) else ""
        raise ScheduleError(field, value, f"{allowed}; got a {type(value).__name__}{hint}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ScheduleError(field, value, f"{allowed}; keys must be field names (strings), got {bad[0]!r}")
    return cls.from_dict(value)
