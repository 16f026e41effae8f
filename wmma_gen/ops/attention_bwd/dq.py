"""dQ kernel: one workgroup per (query tile, query head, sequence); the softmax and dP are
recomputed here (schedule.py documents why: determinism without atomics). Wave w owns
queries qs = 16*(w % WQ) of the tile and head-dim columns [dp*DD, (dp+1)*DD) of dQ
(WQ = dq_waves/dq_d_split, dp = w // WQ, DD = 16*ceil(D/16/dq_d_split); an uneven split's
last part repeats its last block: blocks.head_cols). Everything is computed transposed, so keys run
down the accumulator rows and the per-query LSE and Di are one scalar per lane:

    stage Q, dO tile (natural [query][d]) in LDS; lse2 = LSE*log2e, Di of the lane's query
    dQ^T = 0                                          # (DD x 16 queries) f32 per wave
    for n0 in key tiles the query tile sees:          # masked tiles first/last, full ones
      stage K, V [n][d] and K^T [d][slot(n)]
      S^T = K Q^T,  dP^T = V dO^T                     # WMMA, rows = keys (slot order)
      P^T = exp2(S^T*scale*log2e - lse2)  (0 where masked);  dS^T = P^T (dP^T - Di)
      dQ^T += K^T dS^T                                # dS^T as the B operand
    dQ = scale * dQ -> global                          # rows >= Sq dropped
"""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import gpu_ops as gpu
from ...compiler.mlir_api import arith, scf

from ...kernels import irb
from ...kernels.attention_mask import key_tiles_seen
from ...kernels.signature import KernelSource
from .args import BwdSpec, build_module, kernel_args, signature
from .blocks import (LOG2E, Ranges, Shifted, block_id, head_cols, idx, load_row_value, seq_bounds, stage_rows,
                     tensor, thread_id, visibility)
from .operands import (GlobalRows, cap_factors, opaque_uniform, element_mask, frag, mma, softmax_grad, splat, store_transposed_acc,
                       to_b_operand, zero_acc)
from .schedule import GLOBAL_WINDOW, PAD, AttentionBwdSchedule, blocks_per_wave


class _K:
    """Values every phase reads (a plain bag, built once per kernel)."""


def _lds_shapes(spec: BwdSpec, s: AttentionBwdSchedule):
    d, m, n, dt = spec.head_dim, s.dq_block_m, s.dq_block_n, spec.dtype
    natural = [([1, m, d + PAD], dt), ([1, m, d + PAD], dt),     # Q, dO
               ([1, n, d + PAD], dt), ([1, n, d + PAD], dt)]     # K, V
    return (natural if s.operands == "lds" else []) + [([1, d, n + PAD], dt)]   # K^T (slot order)


def build_dq(spec: BwdSpec, s: AttentionBwdSchedule, name: str = "attn_bwd_dq") -> KernelSource:
    args = kernel_args(spec, "dq")
    text = build_module(name, spec.arch, args, _lds_shapes(spec, s), s.dq_threads,
                        lambda vals, lds: _body(spec, s, vals, lds))
    sig = signature(spec, s, "dq", name)
    return KernelSource(name, text, spec.arch, sig)


def _body(spec: BwdSpec, s: AttentionBwdSchedule, vals, lds) -> None:
    k = _K()
    k.spec, k.s, k.fam, k.dt = spec, s, spec.family, spec.dtype
    if s.operands == "lds":
        k.lds_q, k.lds_do, k.lds_k, k.lds_v, k.lds_kt = lds
    else:   # natural tiles read from global memory (operands.GlobalRows): only K^T in LDS
        k.lds_q = k.lds_do = k.lds_k = k.lds_v = None
        (k.lds_kt,) = lds
    k.Q, k.K, k.V, k.dO = (tensor(vals, n, spec.dtype) for n in ("q", "k", "v", "do"))
    k.lse, k.delta = tensor(vals, "lse", "f32"), tensor(vals, "delta", "f32")
    k.dQ = tensor(vals, "dq", spec.out_dtype)
    k.tid = thread_id()
    k.lane, wave = irb.rem(k.tid, 32), irb.div(k.tid, 32)
    wq = s.dq_waves // s.dq_d_split
    k.qs = irb.mul(irb.rem(wave, wq), 16)
    k.dd = blocks_per_wave(spec.head_dim, s.dq_d_split)
    k.dpart = irb.div(wave, wq)
    k.b, k.h = block_id("z"), block_id("y")
    k.hk = irb.div(k.h, irb.div(idx(vals["heads"]), idx(vals["kv_heads"])))
    k.m0 = irb.mul(block_id("x"), s.dq_block_m)
    k.seq = seq_bounds(spec, vals, k.b)
    k.vis = visibility(spec, vals)
    k.scale = vals["scale"]
    k.scale_log2e = arith.mulf(k.scale, irb.cf(LOG2E, ir.F32Type.get()))
    k.cap = cap_factors(vals) if spec.softcap else None
    k.query = irb.add(irb.add(k.m0, k.qs), irb.rem(k.lane, 16))   # this lane's query row
    scf_if = scf.IfOp(irb.lt(k.m0, k.seq.sq))   # varlen: this sequence may have fewer queries
    with ir.InsertionPoint(scf_if.then_block):
        _store(k, _query_tile(k))
        scf.YieldOp([])


def _ranges(k) -> Ranges:
    return key_tiles_seen(k.vis.band, k.m0, k.s.dq_block_m, k.s.dq_block_n, k.seq.sq, k.seq.sk)


def _query_tile(k) -> list:
    s, spec, seq = k.s, k.spec, k.seq
    d = spec.head_dim
    if s.operands == "lds":
        stage_rows(k.Q, k.fam, k.b, k.h, seq.q0, k.m0, seq.sq, s.dq_block_m, d, k.tid, s.dq_threads, natural=k.lds_q,
                   select_offset=True)
        stage_rows(k.dO, k.fam, k.b, k.h, seq.q0, k.m0, seq.sq, s.dq_block_m, d, k.tid, s.dq_threads,
                   natural=k.lds_do, select_offset=True)

    k.neg_lse2 = splat(load_row_value(k.lse, k.b, k.h, seq.q0, k.query, seq.sq, -LOG2E))
    k.di = splat(load_row_value(k.delta, k.b, k.h, seq.q0, k.query, seq.sq))
    r = _ranges(k)
    accs = [zero_acc() for _ in range(k.dd)]
    masked = scf.ForOp(irb.c(0), r.masked, irb.c(1), accs)
    with ir.InsertionPoint(masked.body):
        n0 = irb.mul(r.masked_tile(masked.induction_variable), s.dq_block_n)
        scf.YieldOp(_key_tile(k, n0, list(masked.inner_iter_args), True))
    full = scf.ForOp(r.f_lo, r.f_hi, irb.c(1), list(masked.results))
    with ir.InsertionPoint(full.body):
        n0 = irb.mul(full.induction_variable, s.dq_block_n)
        scf.YieldOp(_key_tile(k, n0, list(full.inner_iter_args), False))
    return list(full.results)


def _key_tile(k, n0, accs: list, masked: bool) -> list:
    s, spec, fam, dt, lane, seq = k.s, k.spec, k.fam, k.dt, k.lane, k.seq
    d, fn = spec.head_dim, s.dq_block_n // 16
    gpu.BarrierOp()   # Q/dO staged (first tile) / the previous key tile has been read
    nat = s.operands == "lds"
    stage_rows(k.K, fam, k.b, k.hk, seq.k0, n0, seq.sk, s.dq_block_n, d, k.tid, s.dq_threads,
               natural=k.lds_k if nat else None, transposed=k.lds_kt, select_offset=True)   # register pressure: staging.rows
    if nat:
        stage_rows(k.V, fam, k.b, k.hk, seq.k0, n0, seq.sk, s.dq_block_n, d, k.tid, s.dq_threads, natural=k.lds_v,
                   select_offset=True)
    src_k, src_v, src_q, src_do = k.lds_k, k.lds_v, k.lds_q, k.lds_do
    if not nat:
        src_k, src_v = (GlobalRows(t, k.b, k.hk, seq.k0, n0, seq.sk) for t in (k.K, k.V))
        m0 = opaque_uniform(k.m0)       # the query tile's fragments re-read per key tile, not hoisted
        src_q, src_do = (GlobalRows(t, k.b, k.h, seq.q0, m0, seq.sq) for t in (k.Q, k.dO))
    gpu.BarrierOp()
    dsb = []
    for i in range(fn):
        sacc, dpacc = zero_acc(), zero_acc()
        for kk in range(0, d, 16):
            sacc = mma(frag(src_k, dt, fam, 16 * i, kk, lane), frag(src_q, dt, fam, k.qs, kk, lane), sacc)
            dpacc = mma(frag(src_v, dt, fam, 16 * i, kk, lane), frag(src_do, dt, fam, k.qs, kk, lane), dpacc)
            if s.operands == "global" and kk % GLOBAL_WINDOW == GLOBAL_WINDOW - 16:
                irb.sched_barrier("none")   # bound the global fragment loads in flight (else all D/16 are hoisted)
        mask = element_mask(fam, lane, k.vis, seq, irb.add(n0, 16 * i), k.query, False) if masked else None
        _, ds = softmax_grad(sacc, dpacc, k.neg_lse2, k.di, k.scale_log2e, mask, k.cap)
        dsb.append(to_b_operand(fam, dt, ds, lane))
    out = list(accs)
    for j in range(k.dd):
        drow = irb.add(*head_cols(k.dpart, k.dd, j, d // 16))
        for i in range(fn):
            out[j] = mma(frag(k.lds_kt, dt, fam, drow, 16 * i, lane), dsb[i], out[j])
    return out


def _store(k, accs: list) -> None:
    for j in range(k.dd):
        part, d0 = head_cols(k.dpart, k.dd, j, k.spec.head_dim // 16)
        store_transposed_acc(k.fam, Shifted(k.dQ, part), accs[j], k.scale, k.b, k.h, k.seq.q0, k.query,
                             k.seq.sq, d0, k.lane)
