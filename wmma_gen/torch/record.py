"""record_problems: the distinct problems a block of wmma_gen.torch calls issues, written as a
`wmma-gen sweep --problems` file, so the sweep tunes exactly what a model calls.

    with wmma_gen.torch.record_problems() as rec:
        model(x).float().sum().backward()           # forward and backward
    rec.save("problems.yaml")                        # (.json for JSON)
    # wmma-gen sweep --problems problems.yaml --arch gfx1100 ; wmma-gen export --arch gfx1100

Every op call asks ops/plans.cached_plan for its plan (the kernels and the problem); inside the
block an observer there keeps each distinct problem: GEMMs with their layouts (linear's forward
NT, its backward NN and TN, the f32 recompute of a smooth activation's input), batch, bias and
activation; attention forward and backward with batch, heads, kv heads, Sq, Sk, mask, window,
softcap, varlen and layout; paged attention (ops/paged_attention/device.py plans: flash_attn_
with_kvcache, the paged varlen call) with its directive (dtype, KV-cache dtype, head dim, block
size, mask, window, softcap, fp8_wmma) and batch, heads, kv heads, Sq and the context length the
block table holds (max_blocks * block_size: what lookup.py buckets a call by). A packed chunked
prefill is recorded in its dense form (Sq = the longest chunk, varlen off: what the sweep tunes
and lookup falls back to) when its chunks are at most 16 tokens; longer chunks cannot be swept
yet and are counted in `rec.skipped` instead. A repeat call of a known shape skips planning
(ops/device_calls.py remembers call shapes); entering the block forgets those shapes, so each
shape is planned -- and seen -- once in the block (the plans and compiled kernels stay cached).
Outside any block the hook is an empty list. Problems are those of autotune/problems.py; the
arch is not part of them (`rec.archs` says which ran; the sweep takes --arch).
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

ACC = {"f16": "f32", "bf16": "f32", "fp8": "f32", "bf8": "f32", "i8": "i32", "i4": "i32"}


def _gemm(call: dict, p: dict):
    from autotune.problems import GemmRow
    dtype = call["dtype"]
    out = call["out"] if call["out"] != ACC.get(dtype) else ""
    return GemmRow(dtype, p["m"], p["n"], p["k"], layout=call["layout"], batch=p["batch"],
                       bias=call["bias"] is not None, activation=call["activation"] or "", out_dtype=out)


def _attention(op: str, call: dict, p: dict):
    from autotune.problems import AttentionRow
    window = (p["window_left"], p["window_right"])
    return AttentionRow(op, call["dtype"], p["head_dim"], p["heads"], p["seq_q"], p["seq_k"], batch=p["batch"],
                        kv_heads=p["kv_heads"], causal=call["causal"],
                        window=None if window == (-1, -1) else window, varlen=call["seqlens"] is not None,
                        layout=call["layout"], softcap="softcap" in p)


def _paged(call: dict, p: dict):
    """The paged call's problems-file row (autotune/problems.py SpecProblem), or None when its
    query chunks are longer than the dense form takes (module doc)."""
    from autotune.problems import SpecProblem

    from ..ops.paged_attention.device import KV_FROM_STORAGE, _kv_dtype
    from ..ops.paged_attention.inputs import MAX_SQ, directive_for
    if p["seq_q"] > MAX_SQ:
        return None
    named = call["named"]
    q_dtype = KV_FROM_STORAGE.get(named["q"].dtype, "")     # fp8 Q bytes (dense fp8): O holds the dtype
    dt = named["o"].dtype if q_dtype else named["q"].dtype
    dense = {k: v for k, v in p.items() if k != "total_q"}
    d = directive_for(dt, _kv_dtype(named, dt, call["kv_dtype"]), dense, call["causal"], call["return_lse"],
                      call.get("fp8_wmma", False), q_dtype)
    fields = {k: v for k, v in d.to_dict().items() if k != "varlen" and (k != "q_dtype" or v != d.dtype)}
    sizes = {"batch": p["batch"], "heads": p["heads"], "kv_heads": p["kv_heads"], "seq_q": p["seq_q"],
             "seq_len": p["max_blocks"] * p["block_size"]}
    if d.window:
        sizes.update(window_left=p["window_left"], window_right=p["window_right"])
    return SpecProblem("paged_attention", tuple(fields.items()), tuple(sizes.items()))


class ProblemRecording:
    """What `record_problems()` yields: `problems` (dicts in the file format, first-call order),
    `save(path)`, `archs` (the archs the calls ran on), `skipped` (calls no sweep can take yet)."""

    def __init__(self):
        self._seen: dict = {}
        self.archs: set[str] = set()
        self.skipped = 0

    def observe(self, op: str, arch: str, call: dict, plan) -> None:
        """ops/plans.py observer: one call's problem (cheap: no checks, no compile)."""
        read = {"gemm": _gemm, "paged_attention": _paged}.get(op)
        p = read(call, plan.problem) if read else _attention(op, call, plan.problem)
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
        from autotune.problems import dump
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
