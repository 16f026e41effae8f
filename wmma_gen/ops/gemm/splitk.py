"""Split-K with a deterministic reduction, in one launch.

Grid y is the split index s. Workgroup (tile, s, batch) accumulates its share of the K
tiles and writes the partial sums to workspace[s, batch, m, n] (f32; i32 for integer
GEMM). Thread 0 then adds 1 to counters[batch, tile] atomically; the workgroup that sees
split_k - 1 arrived last. It sums workspace[0], ..., workspace[split_k - 1] in that fixed
order -- so the result never depends on which workgroup finished last -- applies the
epilogue, writes C and resets the counter to 0 for the next launch.

Ordering: every thread's partial stores precede the workgroup barrier (gpu.barrier waits for
outstanding stores), the counter update is a system-scope acq_rel atomic (memref.atomic_rmw),
and the last workgroup reads the partials after it. Verified on the emulator, which runs
waves in program order; on hardware this follows the AMDGPU memory model (AMDGPUUsage
"Memory Model GFX11") but has not been run here.
"""
from __future__ import annotations

from ...compiler.mlir_api import gpu_ops as gpu, arith, ir, memref, scf
from ...kernels import irb
from ...kernels.globalmem import write
from .directive import GemmDirective
from .epilogue import for_each_output, fused_value


def partial_dtype(d: GemmDirective) -> str:
    return "i32" if d.is_int else "f32"


def _to_partial(d: GemmDirective, v):
    if d.acc in ("f16", "bf16"):
        return arith.extf(ir.F32Type.get(), v)
    return v


def write_partials(d, family, W, split, b, row0, col0, lane, accs, fm, fn, m_bound, n_bound) -> None:
    def store(val, row, col):
        memref.store(_to_partial(d, val), W, [split, b, row.total(), col.total()])
    for_each_output(d, family, row0, col0, lane, accs, fm, fn, m_bound, n_bound, store)


def arrived_last(counters, flag, b, tile, tid, split_k: int):
    """i1: this workgroup is the last of its tile's splits (after a barrier)."""
    gpu.BarrierOp()
    first = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tid, irb.c(0)).result)
    with ir.InsertionPoint(first.then_block):
        old = memref.AtomicRMWOp(arith.AtomicRMWKind.addi, irb.ci(1, 32), counters, [b, tile]).result
        memref.store(old, flag, [irb.c(0)])
        scf.YieldOp([])
    gpu.BarrierOp()
    seen = memref.load(flag, [irb.c(0)])
    return arith.CmpIOp(arith.CmpIPredicate.eq, seen, irb.ci(split_k - 1, 32)).result


def reduce_and_store(d, family, split_k, W, C, C0, bias, counters, b, tile, tid, row0, col0, lane, accs,
                     fm, fn, m_bound, n_bound, last) -> None:
    add = arith.addi if d.is_int else arith.addf

    def store(_val, rpos, cpos):
        row, col = rpos.total(), cpos.total()
        total = memref.load(W, [irb.c(0), b, row, col])
        for s in range(1, split_k):
            total = add(total, memref.load(W, [irb.c(s), b, row, col]))
        write(C, b, rpos, cpos, fused_value(d, total, C0, bias, b, row, col, acc_type=partial_dtype(d)))

    branch = scf.IfOp(last)
    with ir.InsertionPoint(branch.then_block):
        for_each_output(d, family, row0, col0, lane, accs, fm, fn, m_bound, n_bound, store)
        reset = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tid, irb.c(0)).result)
        with ir.InsertionPoint(reset.then_block):
            memref.store(irb.ci(0, 32), counters, [b, tile])
            scf.YieldOp([])
        scf.YieldOp([])
