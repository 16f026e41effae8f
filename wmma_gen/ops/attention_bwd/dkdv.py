"""dK/dV kernel: one workgroup per (key tile, kv head, sequence), FA-2 backward with the
softmax recomputed from the forward LSE. Wave w owns keys ks = 16*(w % WK) of the tile and
head-dim columns [dp*DD, (dp+1)*DD) of dK, dV (WK = waves/d_split, dp = w // WK,
DD = 16*ceil(D/16/d_split); an uneven split's last part repeats its last block: blocks.head_cols).

    stage K, V tile (natural [key][d]) in LDS
    dK^T, dV^T = 0                                   # (DD x 16 keys) f32 per wave
    for h in query heads of the kv head:             # GQA: the group accumulates in place
      for m0 in query tiles that see the key tile:   # masked tiles first/last, full ones
        stage Q, dO [m][d] and Q^T, dO^T [d][slot(m)]; LSE*log2e, Di [slot(m)]
        S  = Q K^T,  dP = dO V^T                     # WMMA, rows = queries (slot order)
        P  = exp2(S*scale*log2e - LSE*log2e)  (0 where masked)
        dS = P * (dP - Di)
        dV^T += dO^T P,   dK^T += Q^T dS             # P, dS as B operands (operands.py)
    dK = scale * dK, dV -> global                    # rows >= Sk dropped

Query tiles are visited in increasing order for every key tile, and each output element is
written by exactly one workgroup: no atomics, bit-identical for any dispatch order.
"""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import gpu_ops as gpu
from ...compiler.mlir_api import arith, scf

from ...kernels import irb
from ...kernels.attention_mask import query_tiles_seeing
from ...kernels.signature import KernelSource
from .args import BwdSpec, build_module, kernel_args, signature
from .blocks import (LOG2E, Ranges, Shifted, block_id, head_cols, idx, seq_bounds, stage_row_vectors, stage_rows,
                     tensor, thread_id, visibility)
from .operands import (GlobalRows, cap_factors, opaque_uniform, element_mask, frag, mma, slot_values, softmax_grad, store_transposed_acc,
                       to_b_operand, zero_acc)
from .schedule import GLOBAL_WINDOW, PAD, AttentionBwdSchedule, blocks_per_wave


class _K:
    """Values every phase reads (a plain bag, built once per kernel)."""


def _lds_shapes(spec: BwdSpec, s: AttentionBwdSchedule):
    d, m, n, dt = spec.head_dim, s.block_m, s.block_n, spec.dtype
    natural = [([1, n, d + PAD], dt), ([1, n, d + PAD], dt),     # K, V
               ([1, m, d + PAD], dt), ([1, m, d + PAD], dt)]     # Q, dO
    return (natural if s.operands == "lds" else []) + [
        ([1, d, m + PAD], dt), ([1, d, m + PAD], dt),            # Q^T, dO^T (slot order)
        ([m], "f32"), ([m], "f32")]                              # LSE*log2e, Di (slot order)


SCHED_STRATEGY = {"default": "", "ilp": "iterative-ilp"}   # schedule.sched -> "amdgpu-sched-strategy"


def build_dkdv(spec: BwdSpec, s: AttentionBwdSchedule, name: str = "attn_bwd_dkdv") -> KernelSource:
    args = kernel_args(spec, "dkdv")
    text = build_module(name, spec.arch, args, _lds_shapes(spec, s), s.threads,
                        lambda vals, lds: _body(spec, s, vals, lds), SCHED_STRATEGY[s.sched])
    sig = signature(spec, s, "dkdv", name)
    return KernelSource(name, text, spec.arch, sig)


def _body(spec: BwdSpec, s: AttentionBwdSchedule, vals, lds) -> None:
    k = _K()
    k.spec, k.s, k.fam, k.dt = spec, s, spec.family, spec.dtype
    if s.operands == "lds":
        k.lds_k, k.lds_v, k.lds_q, k.lds_do, k.lds_qt, k.lds_dot, k.lds_l, k.lds_di = lds
    else:   # natural tiles read from global memory (operands.GlobalRows): only the transposed ones in LDS
        k.lds_k = k.lds_v = k.lds_q = k.lds_do = None
        k.lds_qt, k.lds_dot, k.lds_l, k.lds_di = lds
    k.Q, k.K, k.V, k.dO = (tensor(vals, n, spec.dtype) for n in ("q", "k", "v", "do"))
    k.lse, k.delta = tensor(vals, "lse", "f32"), tensor(vals, "delta", "f32")
    k.dK, k.dV = tensor(vals, "dk", spec.out_dtype), tensor(vals, "dv", spec.out_dtype)
    k.tid = thread_id()
    k.lane, wave = irb.rem(k.tid, 32), irb.div(k.tid, 32)
    wk = s.waves // s.d_split
    k.ks = irb.mul(irb.rem(wave, wk), 16)                  # wave's keys inside the tile
    k.dd = blocks_per_wave(spec.head_dim, s.d_split)      # 16-column head-dim blocks per wave
    k.dpart = irb.div(wave, wk)
    k.b, k.hk = block_id("z"), block_id("y")
    k.n0 = irb.mul(block_id("x"), s.block_n)
    k.seq = seq_bounds(spec, vals, k.b)
    k.vis = visibility(spec, vals)
    k.scale = vals["scale"]
    k.scale_log2e = arith.mulf(k.scale, irb.cf(LOG2E, ir.F32Type.get()))
    k.cap = cap_factors(vals) if spec.softcap else None
    k.group = irb.div(idx(vals["heads"]), idx(vals["kv_heads"]))

    def tile():
        accs = _key_tile(k)
        _store(k, accs)
    scf_if = scf.IfOp(irb.lt(k.n0, k.seq.sk))   # varlen: this sequence may have fewer keys
    with ir.InsertionPoint(scf_if.then_block):
        tile()
        scf.YieldOp([])


def _ranges(k) -> Ranges:
    return query_tiles_seeing(k.vis.band, k.n0, k.s.block_n, k.s.block_m, k.seq.sq, k.seq.sk)


def _key_tile(k) -> list:
    s, spec = k.s, k.spec
    d = spec.head_dim
    if s.operands == "lds":
        stage_rows(k.K, k.fam, k.b, k.hk, k.seq.k0, k.n0, k.seq.sk, s.block_n, d, k.tid, s.threads, natural=k.lds_k)
        stage_rows(k.V, k.fam, k.b, k.hk, k.seq.k0, k.n0, k.seq.sk, s.block_n, d, k.tid, s.threads, natural=k.lds_v)

    r = _ranges(k)
    accs = [zero_acc() for _ in range(2 * k.dd)]          # dV^T blocks, then dK^T blocks
    accs = _head_tile_loop(k, r.masked, lambda t: r.masked_tile(t), accs, True)
    return _head_tile_loop(k, irb.sub(r.f_hi, r.f_lo), lambda t: irb.add(r.f_lo, t), accs, False)


def _head_tile_loop(k, tiles, tile_of, accs: list, masked: bool) -> list:
    """for h in the kv head's query heads: for t < tiles: accs = query_tile(h, tile_of(t)),
    as one flat scf.for carrying (h, t) -- no nested loop, so the steady-state loop is one
    basic-block chain (model/isa_loop.py finds it) and the loop control stays scalar."""
    total = irb.mul(tiles, k.group)
    loop = scf.ForOp(irb.c(0), total, irb.c(1), accs + [irb.c(0), irb.c(0)])
    with ir.InsertionPoint(loop.body):
        *acc, g, t = list(loop.inner_iter_args)
        h = irb.add(irb.mul(k.hk, k.group), g)
        out = _query_tile(k, h, irb.mul(tile_of(t), k.s.block_m), acc, masked)
        wrap = irb.lt(irb.add(t, 1), tiles)
        scf.YieldOp(out + [irb.select(wrap, g, irb.add(g, 1)), irb.select(wrap, irb.add(t, 1), irb.c(0))])
    return list(loop.results)[:len(accs)]


def _query_tile(k, h, m0, accs: list, masked: bool) -> list:
    s, spec, fam, dt, lane = k.s, k.spec, k.fam, k.dt, k.lane
    d, fm = spec.head_dim, s.block_m // 16
    seq = k.seq
    gpu.BarrierOp()   # the previous tile's fragments have been read
    stage_rows(k.Q, fam, k.b, h, seq.q0, m0, seq.sq, s.block_m, d, k.tid, s.threads,
               natural=k.lds_q, transposed=k.lds_qt)
    stage_rows(k.dO, fam, k.b, h, seq.q0, m0, seq.sq, s.block_m, d, k.tid, s.threads,
               natural=k.lds_do, transposed=k.lds_dot)
    src_q, src_do, src_k, src_v = k.lds_q, k.lds_do, k.lds_k, k.lds_v
    if s.operands == "global":
        src_q, src_do = (GlobalRows(t, k.b, h, seq.q0, m0, seq.sq) for t in (k.Q, k.dO))
        n0 = opaque_uniform(k.n0)       # the key tile's fragments re-read per query tile, not hoisted
        src_k, src_v = (GlobalRows(t, k.b, k.hk, seq.k0, n0, seq.sk) for t in (k.K, k.V))
    stage_row_vectors([(k.lse, k.lds_l, -LOG2E), (k.delta, k.lds_di, 1.0)], fam, k.b, h, seq.q0, m0, seq.sq,
                      s.block_m, k.tid, s.threads)
    gpu.BarrierOp()
    key = irb.add(irb.add(k.n0, k.ks), irb.rem(lane, 16))
    pb, dsb = [], []
    for i in range(fm):
        sacc, dpacc = zero_acc(), zero_acc()
        for kk in range(0, d, 16):
            sacc = mma(frag(src_q, dt, fam, 16 * i, kk, lane), frag(src_k, dt, fam, k.ks, kk, lane), sacc)
            dpacc = mma(frag(src_do, dt, fam, 16 * i, kk, lane), frag(src_v, dt, fam, k.ks, kk, lane), dpacc)
            if s.operands == "global" and kk % GLOBAL_WINDOW == GLOBAL_WINDOW - 16:
                irb.sched_barrier("none")   # bound the global fragment loads in flight (else all D/16 are hoisted)
        mask = element_mask(fam, lane, k.vis, seq, irb.add(m0, 16 * i), key, True) if masked else None
        p, ds = softmax_grad(sacc, dpacc, slot_values(k.lds_l, lane, 16 * i), slot_values(k.lds_di, lane, 16 * i),
                             k.scale_log2e, mask, k.cap)
        pb.append(to_b_operand(fam, dt, p, lane))
        dsb.append(to_b_operand(fam, dt, ds, lane))
    if s.fence == "grad":   # keep LLVM 24 from interleaving the dV/dK WMMAs into the softmax gradient
        irb.sched_barrier("none")
    out = list(accs)
    for j in range(k.dd):
        drow = irb.add(*head_cols(k.dpart, k.dd, j, d // 16))
        for i in range(fm):
            out[j] = mma(frag(k.lds_dot, dt, fam, drow, 16 * i, lane), pb[i], out[j])
            out[k.dd + j] = mma(frag(k.lds_qt, dt, fam, drow, 16 * i, lane), dsb[i], out[k.dd + j])
    return out


def _store(k, accs: list) -> None:
    key = irb.add(irb.add(k.n0, k.ks), irb.rem(k.lane, 16))
    for j in range(k.dd):
        part, d0 = head_cols(k.dpart, k.dd, j, k.spec.head_dim // 16)   # the block's first column
        for out, acc, scale in ((k.dV, accs[j], None), (k.dK, accs[k.dd + j], k.scale)):
            store_transposed_acc(k.fam, Shifted(out, part), acc, scale, k.b, k.hk, k.seq.k0, key,
                                 k.seq.sk, d0, k.lane)
