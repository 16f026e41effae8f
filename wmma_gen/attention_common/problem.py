"""The Problem both attention ops share (forward and backward: spec.py of each names it), in
its own light module so the input readers (inputs.py) and the set runner (run_set.py) read it
without importing the op's spec."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttentionProblem:
    """Sizes of one attention call (dense; varlen studies use batch sequences of these lengths).
    window_left/right: the sliding window of a windowed directive (-1 = unbounded)."""
    batch: int
    heads: int
    kv_heads: int
    seq_q: int
    seq_k: int
    window_left: int = -1
    window_right: int = -1

    @property
    def window(self):
        return (self.window_left, self.window_right)


def as_problem(p) -> AttentionProblem:
    if isinstance(p, AttentionProblem):
        return p
    return AttentionProblem(**{k: p[k] for k in AttentionProblem.__dataclass_fields__ if k in p})
