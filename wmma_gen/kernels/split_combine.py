"""The split-KV combine kernel: O and LSE from per-split partial results (deterministic), shared by
dense / paged attention (ops/attention/combine.py) and MLA decode (ops/mla/combine.py).

Each split s of a query row wrote O_s (already divided by its own softmax sum) and its
natural-log LSE_s (-inf when its key range was empty or fully masked). Then

    L = max_s LSE_s;   w_s = exp(LSE_s - L);   O = sum_s w_s O_s / sum_s w_s;
    LSE = L + log(sum_s w_s)                    (O = 0 and LSE = -inf when L = -inf)

summed in split order 0, 1, ... by one thread per (row, head, 8 of the row's `width` values):
the result never depends on scheduling. With sinks the head's sink logit s_h is one more term
with no value: L = max(max_s LSE_s, s_h), sum_s w_s + exp(s_h - L) in the denominator and in
LSE (the partials are sink-free).

Buffers (in this order; `ptr` names): O_part (in, f32 (split, H, rows, width)), LSE_part (in, f32
(split, H, rows)), O (out, dtype), [LSE (out, f32)], [sinks (in, f32 (H,))], then the op's i32
scalars (at least heads and rows). Grid (ceil(rows * width / 8 / threads), heads, 1). Where O
and LSE live is the op's `Layout`: `coords(row)` once per thread (after the weights), then
`o_index(coords, h)` (O's element index of the row's first value) and `lse_index(coords, h)`
(inside the LSE store's branch).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import gpu_ops as gpu
from ..compiler.mlir_api import rocdl_ops as rocdl
from ..compiler.mlir_api import arith, memref, scf, vector

from . import attention_blocks as ab
from . import irb
from .module import kernel_func
from .attention_blocks import iadd, imul

LOG2E = 1.0 / math.log(2.0)


@dataclass(frozen=True)
class Layout:
    coords: Callable      # (row, x) -> what o_index / lse_index take (e.g. (b, i))
    o_index: Callable     # (coords, h, x) -> element index of O[row, h, 0]
    lse_index: Callable   # (coords, h, x) -> element index of LSE[row, h]


def combine_function(name: str, bufs: list, scalars: tuple, threads: int, body: Callable) -> None:
    """The gpu.func `name` (inside gpu_module_text's builder): pointer arguments `bufs` ((name,
    dtype) pairs), i32 `scalars`, block (threads, 1, 1); body(ptr, x) fills it (x: index values)."""
    types = [ab.pointer_type(dt) for _, dt in bufs] + [ab.i32_type()] * len(scalars)
    block = kernel_func(name, types, threads)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        ptr = {n: ab.flat_view(a, dt) for (n, dt), a in zip(bufs, args, strict=False)}
        x = {n: arith.index_cast(irb.index(), a) for n, a in zip(scalars, args[len(bufs):], strict=True)}
        body(ptr, x)
        gpu.ReturnOp([])


def combine_body(ptr, x, *, splits: int, width: int, dtype: str, threads: int, layout: Layout) -> None:
    """The merge of the module doc; LSE is written when ptr has "LSE", the sink term added when
    it has "sinks"."""
    f32 = ab.f32_type()
    chunks = width // 8
    tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    wg = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    h = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
    item = iadd(imul(wg, threads), tid)
    row, chunk = irb.div(item, chunks), irb.rem(item, chunks)
    ok = scf.IfOp(irb.lt(row, x["rows"]))
    with ir.InsertionPoint(ok.then_block):
        def part(sp):  # flat (split, head, row) index
            return iadd(imul(iadd(imul(irb.c(sp), x["heads"]), h), x["rows"]), row)
        lses = [memref.load(ptr["LSE_part"], [part(sp)]) for sp in range(splits)]
        sink = memref.load(ptr["sinks"], [h]) if "sinks" in ptr else None
        top = lses[0]
        for v in lses[1:] + ([sink] if sink is not None else []):
            top = arith.MaximumFOp(top, v).result
        dead = arith.cmpf(arith.CmpFPredicate.OEQ, top, irb.cf(float("-inf"), f32))
        top = arith.select(dead, irb.cf(0.0, f32), top)
        acc = irb.zeros(irb.vec(8, f32))
        total = irb.cf(0.0, f32)
        for sp, v in enumerate(lses):
            w = ab.exp2(arith.mulf(arith.subf(v, top), irb.cf(LOG2E, f32)))
            o = vector.load(irb.vec(8, f32), ptr["O_part"], [iadd(imul(part(sp), width), imul(chunk, 8))])
            acc = vector.FMAOp(o, ab.splat(w, 8), acc).result
            total = arith.addf(total, w)
        if sink is not None:
            total = arith.addf(total, ab.exp2(arith.mulf(arith.subf(sink, top), irb.cf(LOG2E, f32))))
        seen = arith.cmpf(arith.CmpFPredicate.OGT, total, irb.cf(0.0, f32))
        safe = arith.select(seen, total, irb.cf(1.0, f32))
        inv = arith.select(seen, arith.divf(irb.cf(1.0, f32), safe), irb.cf(0.0, f32))
        where = layout.coords(row, x)
        o_idx = iadd(layout.o_index(where, h, x), imul(chunk, 8))
        vector.store(ab.to_dtype_out(arith.mulf(acc, ab.splat(inv, 8)), dtype), ptr["O"], [o_idx])
        if "LSE" in ptr:
            first = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, chunk, irb.c(0)).result)
            with ir.InsertionPoint(first.then_block):
                lse = arith.addf(top, arith.mulf(rocdl.ROCDLLog(f32, safe).result, irb.cf(math.log(2.0), f32)))
                lse = arith.select(seen, lse, irb.cf(float("-inf"), f32))
                memref.store(lse, ptr["LSE"], [layout.lse_index(where, h, x)])
                scf.YieldOp([])
        scf.YieldOp([])
