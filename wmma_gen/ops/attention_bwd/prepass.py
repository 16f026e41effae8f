"""Pre-pass: Di = rowsum(dO * O) in f32 for every query row (FA-2 backward, Algorithm 2
line 4 of Dao 2023: D_i = rowsum(dO_i o O_i)). One thread per row:

    for each query row i of the workgroup's `prepass_rows` rows (head h, sequence b):
        acc = 0
        for d0 in range(0, D, 8):                 # unrolled; 16-byte loads of O and dO
            acc += sum(f32(O[i, d0:d0+8]) * f32(dO[i, d0:d0+8]))
        delta[b, h, i] = acc                      # rows >= Sq write nothing
"""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import arith, vector

from ...kernels import irb
from ...kernels.signature import KernelSource
from .args import BwdSpec, build_module, kernel_args, signature
from .blocks import block_id, if_then, seq_bounds, tensor, thread_id
from .schedule import AttentionBwdSchedule


def build_prepass(spec: BwdSpec, s: AttentionBwdSchedule, name: str = "attn_bwd_prepass") -> KernelSource:
    args = kernel_args(spec, "prepass")
    rows = s.prepass_rows
    text = build_module(name, spec.arch, args, [], rows, lambda vals, lds: _body(spec, rows, vals))
    sig = signature(spec, s, "prepass", name)
    return KernelSource(name, text, spec.arch, sig)


def _body(spec: BwdSpec, rows: int, vals) -> None:
    O, dO = tensor(vals, "o", spec.dtype), tensor(vals, "do", spec.dtype)
    delta = tensor(vals, "delta", "f32")
    b, h = block_id("z"), block_id("y")
    row0, tid = irb.mul(block_id("x"), rows), thread_id()
    i = irb.add(row0, tid)
    seq = seq_bounds(spec, vals, b)
    f32 = ir.F32Type.get()

    def row():
        # saddr reads: the workgroup's first row is the uniform base, the thread's row the lane
        # offset, the column the immediate (kernels/global_tensor.py)
        first = irb.add(seq.q0, row0)
        base_o, base_do = O.row_base(b, first, h), dO.row_base(b, first, h)
        lane_o, lane_do = irb.mul(tid, O.strides[1]), irb.mul(tid, dO.strides[1])
        acc = irb.zeros(irb.vec(8, f32))
        for d0 in range(0, spec.head_dim, 8):
            o = arith.extf(irb.vec(8, f32), O.read(base_o, lane_o, 8, d0))
            g = arith.extf(irb.vec(8, f32), dO.read(base_do, lane_do, 8, d0))
            acc = arith.addf(acc, arith.mulf(o, g))
        total = vector.reduction(f32, vector.CombiningKind.ADD, acc)
        delta.write(delta.row_base(b, first, h), tid, total)   # saddr store, like the reads
    if_then(irb.lt(i, seq.sq), row)
