"""record_problems: the distinct problems a block of wmma_gen.torch calls issues, written as a
`wmma-gen sweep --problems` file, so the sweep tunes exactly what a model calls.

    with wmma_gen.torch.record_problems() as rec:
        model(x).float().sum().backward()           # forward and backward
    rec.save("problems.yaml")                        # (.json for JSON)
    # wmma-gen sweep --problems problems.yaml --arch gfx1100 ; wmma-gen export --arch gfx1100

Every op call asks ops/plans.cached_plan for its plan (the kernels and the problem); inside the
block an observer there keeps each distinct problem, as the op's folder reads it (recorded.py
beside its spec: `problem_row(call, problem)`, found through the registry): GEMMs with their
layouts (linear's forward NT, its backward NN and TN, the f32 recompute of a smooth activation's
input), batch, bias and activation; attention forward and backward with batch, heads, kv heads,
Sq, Sk, mask, window, softcap, varlen and layout; paged attention (flash_attn_with_kvcache, the
paged varlen call) with its directive and batch, heads, kv heads, Sq and the context length the
block table holds. A call the op cannot write as a sweepable row (a paged prefill with chunks
longer than 16 tokens; an op without recorded.py) is counted in `rec.skipped` instead. A repeat call of a known shape skips planning
(ops/device_calls.py remembers call shapes); entering the block forgets those shapes, so each
shape is planned -- and seen -- once in the block (the plans and compiled kernels stay cached).
Outside any block the hook is an empty list. Problems are those of autotune/problems.py; the
arch is not part of them (`rec.archs` says which ran; the sweep takes --arch).
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from ..ops import registry


class ProblemRecording:
    """What `record_problems()` yields: `problems` (dicts in the file format, first-call order),
    `save(path)`, `archs` (the archs the calls ran on), `skipped` (calls no sweep can take yet)."""

    def __init__(self):
        self._seen: dict = {}
        self.archs: set[str] = set()
        self.skipped = 0

    def observe(self, op: str, arch: str, call: dict, plan) -> None:
        """ops/plans.py observer: one call's problem (cheap: no checks, no compile)."""
        reader = registry.light_module(op, "recorded")
        p = reader.problem_row(call, plan.problem) if reader is not None else None
        self.archs.add(arch)
        if p is None:
            self.skipped += 1
            return
        self._seen.setdefault(p, None)

    @property
    def problems(self) -> list[dict]:
        return [p.to_dict() for p in self._seen]

    def save(self, path: str | Path) -> Path:
        """Write the problems as YAML (JSON for a .json path) for `wmma-gen sweep --problems`."""
        from ..tuner.rows import dump
        return dump(list(self._seen), path)

    def __len__(self) -> int:
        return len(self._seen)


@contextlib.contextmanager
def record_problems() -> Iterator[ProblemRecording]:
    """Record the distinct problems the wmma_gen.torch ops (and any device-resident call)
    issue inside the block, forward and backward; see the module doc."""
    from ..ops import device_calls, plans
    rec = ProblemRecording()
    device_calls.forget_call_shapes()       # remembered call shapes skip planning: plan each shape once more
    plans.observers.append(rec.observe)
    try:
        yield rec
    finally:
        plans.observers.remove(rec.observe)
