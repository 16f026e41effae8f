"""The GEMM's Problem: the sizes of one call (ops/contract.py). A leaf module, so the checker,
the legality rules, the lookup and the plan read it without importing the OpSpec (spec.py)."""
from __future__ import annotations

import numbers
from dataclasses import dataclass

from ...errors import ScheduleError


@dataclass(frozen=True)
class GemmProblem:
    """Sizes of one GEMM call: C (batch, m, n) = A (batch, m, k) @ B (batch, k, n)."""
    m: int
    n: int
    k: int
    batch: int = 1

    def __post_init__(self):
        for name in ("m", "n", "k", "batch"):
            v = getattr(self, name)
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
                raise ScheduleError(name, v, "a positive integer")
            object.__setattr__(self, name, int(v))   # numpy/pandas integers from ladders and files

    def as_dict(self) -> dict:
        return {"m": self.m, "n": self.n, "k": self.k, "batch": self.batch}


def as_problem(p) -> GemmProblem:
    """A GemmProblem from itself or a mapping holding its fields (a study's stored problem)."""
    if isinstance(p, GemmProblem):
        return p
    return GemmProblem(**{f: p[f] for f in GemmProblem.__dataclass_fields__ if f in p})
