"""Split-KV combine of the MLA kernel's partials (deterministic; one thread per (row, head,
8 of the Dv values)). Each split s wrote O_s (already divided by its own softmax sum) and
its natural-log LSE_s (-inf for an empty or fully masked key range). Then

    L = max_s LSE_s;   w_s = exp(LSE_s - L);   O = sum_s w_s O_s / sum_s w_s;
    LSE = L + log(sum_s w_s)                    (O = 0 and LSE = -inf when L = -inf)

summed in split order. O (batch, seq_q, heads, Dv) and LSE (batch, heads, seq_q) are written
contiguous (FlashMLA's layouts); row = b * seq_q + i. Arguments: signature.combine_signature.
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
from ...targets import Target
from .signature import COMBINE_SCALARS, THREADS_COMBINE, combine_signature

LOG2E = 1.0 / math.log(2.0)


def build_combine(d, s, t: Target) -> KernelSource:
    from .kernel import kernel_name
    name = kernel_name(d, s) + "_combine"
    text = gpu_module_text(name, t.arch, lambda: _kernel(d, s, name))
    return KernelSource(name, text, t.arch, combine_signature(d, s, name))


def _kernel(d, s, name: str) -> None:
    bufs = [("O_part", "f32"), ("LSE_part", "f32"), ("O", d.dtype), ("LSE", "f32")]
    types = [ab.pointer_type(dt) for _, dt in bufs] + [ab.i32_type()] * len(COMBINE_SCALARS)
    f = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(types, [])),
                      known_block_size=ir.DenseI32ArrayAttr.get([THREADS_COMBINE, 1, 1]))
    f.attributes["sym_name"] = ir.StringAttr.get(name)
    f.attributes["gpu.kernel"] = ir.UnitAttr.get()
    block = f.body.blocks.append(*types)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        ptr = {n: ab.flat_view(a, dt) for (n, dt), a in zip(bufs, args, strict=False)}
        x = {n: arith.index_cast(irb.index(), a) for n, a in zip(COMBINE_SCALARS, args[len(bufs):], strict=True)}
        _body(d, s, ptr, x)
        gpu.ReturnOp([])


def _body(d, s, ptr, x) -> None:
    f32 = ab.f32_type()
    dv = d.head_dim_v
    chunks = dv // 8
    tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    wg = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    h = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
    item = iadd(imul(wg, THREADS_COMBINE), tid)
    row, chunk = irb.div(item, chunks), irb.rem(item, chunks)
    ok = scf.IfOp(irb.lt(row, x["rows"]))
    with ir.InsertionPoint(ok.then_block):
        def part(sp):  # flat (split, head, row) index
            return iadd(imul(iadd(imul(irb.c(sp), x["heads"]), h), x["rows"]), row)
        lses = [memref.load(ptr["LSE_part"], [part(sp)]) for sp in range(s.split_kv)]
        top = lses[0]
        for v in lses[1:]:
            top = arith.MaximumFOp(top, v).result
        dead = arith.cmpf(arith.CmpFPredicate.OEQ, top, irb.cf(float("-inf"), f32))
        top = arith.select(dead, irb.cf(0.0, f32), top)
        acc, total = irb.zeros(irb.vec(8, f32)), irb.cf(0.0, f32)
        for sp, v in enumerate(lses):
            w = ab.exp2(arith.mulf(arith.subf(v, top), irb.cf(LOG2E, f32)))
            o = vector.load(irb.vec(8, f32), ptr["O_part"], [iadd(imul(part(sp), dv), imul(chunk, 8))])
            acc = vector.FMAOp(o, ab.splat(w, 8), acc).result
            total = arith.addf(total, w)
        seen = arith.cmpf(arith.CmpFPredicate.OGT, total, irb.cf(0.0, f32))
        safe = arith.select(seen, total, irb.cf(1.0, f32))
        inv = arith.select(seen, arith.divf(irb.cf(1.0, f32), safe), irb.cf(0.0, f32))
        o_idx = iadd(imul(iadd(imul(row, x["heads"]), h), dv), imul(chunk, 8))
        vector.store(ab.to_dtype_out(arith.mulf(acc, ab.splat(inv, 8)), d.dtype), ptr["O"], [o_idx])
        first = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, chunk, irb.c(0)).result)
        with ir.InsertionPoint(first.then_block):
            lse = arith.addf(top, arith.mulf(rocdl.ROCDLLog(f32, safe).result, irb.cf(math.log(2.0), f32)))
            lse = arith.select(seen, lse, irb.cf(float("-inf"), f32))
            b, i = irb.div(row, x["seq_q"]), irb.rem(row, x["seq_q"])
            memref.store(lse, ptr["LSE"], [iadd(imul(iadd(imul(b, x["heads"]), h), x["seq_q"]), i)])
            scf.YieldOp([])
        scf.YieldOp([])
