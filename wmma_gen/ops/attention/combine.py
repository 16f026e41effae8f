"""Split-KV combine kernel: O and LSE from the per-split partial results (deterministic).

Each split s of a query row wrote O_s (already divided by its own softmax sum) and its
natural-log LSE_s (-inf when its key range was empty or fully masked). Then

    L = max_s LSE_s;   w_s = exp(LSE_s - L);   O = sum_s w_s O_s / sum_s w_s;
    LSE = L + log(sum_s w_s)                    (O = 0 and LSE = -inf when L = -inf)

summed in split order 0, 1, ... by one thread per (row, head, 8 head-dim values): the
result never depends on scheduling. With directive.sinks the head's sink logit s_h is one more
term with no value: L = max(max_s LSE_s, s_h), sum_s w_s + exp(s_h - L) in the denominator and
in LSE (the partials are sink-free). Arguments, in order:

    O_part (in, f32 (split, H, rows, D)), LSE_part (in, f32 (split, H, rows)), O (out),
    [LSE (out)], [sinks (in, f32 (H,))], heads, rows, seq_q, o_sb, o_sh, o_ss, lse_sb, lse_sh     (i32 scalars)

Row r is (b, i) = (r // seq_q, r % seq_q); varlen passes seq_q = total_q (b = 0, i = r:
the packed row) and *_sb = 0. Grid: (ceil(rows * D / 8 / 256), heads, 1), block 256.
"""
from __future__ import annotations

import math

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import _gpu_ops_gen as gpu
from ...compiler.mlir_api import _rocdl_ops_gen as rocdl
from ...compiler.mlir_api import arith, memref, scf, vector

from ...kernels import attention_blocks as ab
from ...kernels import irb
from ...kernels.attention_blocks import iadd, imul
from ...kernels.module import gpu_module_text
from ...kernels.signature import KernelSource
from .combine_signature import COMBINE_SCALARS, THREADS, combine_signature  # noqa: F401  (declared there: no MLIR)
LOG2E = 1.0 / math.log(2.0)


def build_attention_combine(d, s, t) -> KernelSource:
    """The combine kernel matching build_attention(d, s, t) with s.split_kv > 1."""
    from .kernel import kernel_name
    name = kernel_name(d, s) + "_combine"
    text = gpu_module_text(name, t.arch, lambda: _combine_kernel(d, s, name))
    return KernelSource(name, text, t.arch, combine_signature(d, s, name))


def _combine_kernel(d, s, name: str) -> None:
    bufs = [("O_part", "f32"), ("LSE_part", "f32"), ("O", d.dtype)] + ([("LSE", "f32")] if d.return_lse else [])
    bufs += [("sinks", "f32")] if d.sinks else []
    types = [ab.pointer_type(dt) for _, dt in bufs] + [ab.i32_type()] * len(COMBINE_SCALARS)
    f = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(types, [])),
                      known_block_size=ir.DenseI32ArrayAttr.get([THREADS, 1, 1]))
    f.attributes["sym_name"] = ir.StringAttr.get(name)
    f.attributes["gpu.kernel"] = ir.UnitAttr.get()
    block = f.body.blocks.append(*types)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        ptr = {n: ab.flat_view(a, dt) for (n, dt), a in zip(bufs, args, strict=False)}
        x = {n: arith.index_cast(irb.index(), a) for n, a in zip(COMBINE_SCALARS, args[len(bufs):], strict=True)}
        _combine_body(d, s, ptr, x)
        gpu.ReturnOp([])


def _combine_body(d, s, ptr, x) -> None:
    f32 = ab.f32_type()
    chunks = d.head_dim // 8
    tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    wg = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    h = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
    item = iadd(imul(wg, THREADS), tid)
    row, chunk = irb.div(item, chunks), irb.rem(item, chunks)
    ok = scf.IfOp(irb.lt(row, x["rows"]))
    with ir.InsertionPoint(ok.then_block):
        def part(sp):  # flat (split, head, row) index
            return iadd(imul(iadd(imul(irb.c(sp), x["heads"]), h), x["rows"]), row)
        lses = [memref.load(ptr["LSE_part"], [part(sp)]) for sp in range(s.split_kv)]
        sink = memref.load(ptr["sinks"], [h]) if d.sinks else None
        top = lses[0]
        for v in lses[1:] + ([sink] if sink is not None else []):
            top = arith.MaximumFOp(top, v).result
        dead = arith.cmpf(arith.CmpFPredicate.OEQ, top, irb.cf(float("-inf"), f32))
        top = arith.select(dead, irb.cf(0.0, f32), top)
        acc = irb.zeros(irb.vec(8, f32))
        total = irb.cf(0.0, f32)
        for sp, v in enumerate(lses):
            w = ab.exp2(arith.mulf(arith.subf(v, top), irb.cf(LOG2E, f32)))
            o = vector.load(irb.vec(8, f32), ptr["O_part"], [iadd(imul(part(sp), d.head_dim), imul(chunk, 8))])
            acc = vector.FMAOp(o, ab.splat(w, 8), acc).result
            total = arith.addf(total, w)
        if sink is not None:
            total = arith.addf(total, ab.exp2(arith.mulf(arith.subf(sink, top), irb.cf(LOG2E, f32))))
        seen = arith.cmpf(arith.CmpFPredicate.OGT, total, irb.cf(0.0, f32))
        safe = arith.select(seen, total, irb.cf(1.0, f32))
        inv = arith.select(seen, arith.divf(irb.cf(1.0, f32), safe), irb.cf(0.0, f32))
        b, i = irb.div(row, x["seq_q"]), irb.rem(row, x["seq_q"])
        o_idx = iadd(iadd(imul(b, x["o_sb"]), iadd(imul(h, x["o_sh"]), imul(i, x["o_ss"]))), imul(chunk, 8))
        vector.store(ab.to_dtype_out(arith.mulf(acc, ab.splat(inv, 8)), d.dtype), ptr["O"], [o_idx])
        if d.return_lse:
            first = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, chunk, irb.c(0)).result)
            with ir.InsertionPoint(first.then_block):
                lse = arith.addf(top, arith.mulf(rocdl.ROCDLLog(f32, safe).result, irb.cf(math.log(2.0), f32)))
                lse = arith.select(seen, lse, irb.cf(float("-inf"), f32))
                memref.store(lse, ptr["LSE"], [iadd(iadd(imul(b, x["lse_sb"]), imul(h, x["lse_sh"])), i)])
                scf.YieldOp([])
        scf.YieldOp([])
