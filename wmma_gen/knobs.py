"""Knob: one tunable of an op's schedule, declared once in the op's `SPACE` table (STYLE rule 6).

From an op's SPACE come the Optuna suggest calls (autotune/space.py), the CLI flags, the JSON
schema and the hypothesis strategies; every op's schedule (ops/<op>/schedule.py) uses this type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Knob:
    name: str
    domain: tuple
    doc: str
    when: Optional[Callable[[object], bool]] = None  # knob matters only when true (given the schedule)
