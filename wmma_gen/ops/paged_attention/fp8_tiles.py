"""fp8_wmma (directive.py): both products of the paged kernel on gfx12's 8-bit float WMMA,
the cache's bytes never widened (the operand layouts, the fp8 types and the Q / P quantisation:
kernels/fp8_wmma.py, shared with MLA decode):

  * K tile  [key][d] bytes: the lane's A run is 8 consecutive d of key row a_row(l) (one
    ds_load_b64); Q^T's B run is the same 8 d of its query (the 16-bit loads, converted).
  * V^T tile [d][key] bytes: the A run is 8 consecutive keys of head-dim row a_row(l).
  * P^T: the S^T accumulator is the lane's B run (kernels/fp8_wmma.p_operand).

Q is quantised per query row in the kernel (a caller's static q_scale would either clip rows
above it or waste range below it; the dynamic scale costs one max and one divide per lane per
kernel), or given as fp8 bytes (q_dtype, dense fp8 attention).
"""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import vector

from ...kernels import attention_blocks as ab
from ...kernels import irb
from ...kernels.attention_blocks import iadd
from ...kernels.fp8_wmma import (P_SHIFT, a_run, cache_type, f32s, p_operand, quantize_row, row_amax,
                                 store_transposed)

__all__ = ["P_SHIFT", "p_operand", "pv", "q_operand", "quantize_q", "scores", "store_transposed"]   # kernel.py's


def q_operand(d, raw) -> ir.Value:
    """A Q^T B operand given as fp8 bytes (q_dtype fp8e4m3 / fp8e5m2: dense fp8 attention): the
    lane's 8 bytes are its run as they are -- the K tile's A operand and this B operand then pick
    the v_wmma form (fp8_fp8, fp8_bf8, bf8_fp8, bf8_bf8)."""
    return vector.bitcast(irb.vec(8, cache_type(d.q_dtype)), raw)


def quantize_q(c, q: list):
    """Q^T B operands [f][kd] (16-bit) -> (E4M3 operands [f][kd], s_q per f): the row's scale
    from amax over the lane's runs and the other half-wave's (kernels/fp8_wmma.row_amax)."""
    out, scales = [], []
    for frags in q:
        vals = [f32s(x) for x in frags]
        q8, s_q = quantize_row(vals, row_amax(c.fam, vals))
        out.append(q8)
        scales.append(s_q)
    return out, scales


def scores(c, q8: list) -> list:
    """S^T[f][kt] = K8[kt] @ Q8^T[f] from the byte tile LDS_K [key][d + pad]."""
    fam, kt_n, dts = c.fam, c.s.block_n // 16, c.d.head_dim // 16
    t = cache_type(c.d.kv_dtype)
    acc = [[irb.zeros(irb.vec(8, ab.f32_type())) for _ in range(kt_n)] for _ in range(c.s.frags_q)]
    row, col = ab.a_row(fam, c.lane), ab.run_offset(fam, c.lane)
    for kt in range(kt_n):
        for kd in range(dts):
            a = a_run(c.lds_k, iadd(row, 16 * kt), iadd(col, 16 * kd), t)
            for f in range(c.s.frags_q):
                acc[f][kt] = ab.wmma(a, q8[f][kd], acc[f][kt])
    return acc


def pv(c, p8: list, o: list) -> list:
    """O^T[f][dt] += V8^T[dt][kt] @ P8^T[f][kt] from the byte tile LDS_V [d][key + pad]."""
    fam, kt_n, dts = c.fam, c.s.block_n // 16, c.d.head_dim // 16
    t = cache_type(c.d.kv_dtype)
    row, col = ab.a_row(fam, c.lane), ab.run_offset(fam, c.lane)
    o = [list(x) for x in o]
    for dt in range(dts):
        for kt in range(kt_n):
            a = a_run(c.lds_v, iadd(row, 16 * dt), iadd(col, 16 * kt), t)
            for f in range(c.s.frags_q):
                o[f][dt] = ab.wmma(a, p8[f][kt], o[f][dt])
    return o
