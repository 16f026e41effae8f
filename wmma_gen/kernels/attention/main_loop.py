"""The dense attention forward's key loop (moved verbatim from ops/attention/kernel.py, issue 39
item 2; that module's docstring describes the pipeline): per key tile S = Q K^T from LDS, the
boundary-tile mask, the online softmax and O^T += V^T P^T, with one (`_tile_kv1`) or two
(`_tile_kv2`, ping-pong) LDS buffers per operand and the d_split exchange of score partials."""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import amdgpu_ops as amdgpu
from ...compiler.mlir_api import arith, scf
from .. import attention_blocks as ab
from .. import attention_dsplit as dsplit
from .. import irb
from ..attention_blocks import iadd, imax, imin, imul
from ..fragments import flatten_rows, unflatten_rows
from ..softcap import tanh_of_scaled
from . import operands, softmax
from ..staging import kv_tiles
from .bounds import lane_band, masked, tile_range
from .context import Ctx


def tile_first(c: Ctx, n0):
    """First key row actually read for the tile at n0: shifted down (uniformly) so the tile
    ends at the sequence end, never before key 0 (kv_tiles.py: no per-lane clamps)."""
    return imax(imin(n0, irb.sub(c.seq_k, c.s.block_n)), 0)


def load_k(c: Ctx, first):
    return kv_tiles.load(c.copy_k, c.ptr["K"], c.k_offs, kv_tiles.tile_offset(c.ptr["K"], first))


def load_v(c: Ctx, first):
    return kv_tiles.load(c.copy_v, c.ptr["V"], c.v_offs, kv_tiles.tile_offset(c.ptr["V"], first))


def main_loop(c: Ctx):
    """The key loop (module docstring); kv_buffers=2 runs `_tile_kv2` instead of `_tile_kv1`."""
    s, d = c.s, c.d
    f32 = ab.f32_type()
    nf, dts = s.frags_q, c.d_slice()[0]
    o = [[irb.zeros(irb.vec(8, f32)) for _ in range(dts)] for _ in range(nf)]
    m = [irb.cf(softmax.NEG_INF, f32) for _ in range(nf)]
    l = [irb.cf(0.0, f32) for _ in range(nf)]
    start, end, full_lo, full_hi = tile_range(c)
    q = operands.q_fragments(c) if s.q_in == "regs" else None
    if s.q_in == "lds":
        operands.q_lds_fill(c)
    if s.lane_values == "keep":
        c.bands = [lane_band(c, f) for f in range(nf)]
    c.full = (full_lo, full_hi)
    init = flatten_rows(o) + m + l
    run = scf.IfOp(irb.lt(start, end), [v.type for v in init], has_else=True)
    with ir.InsertionPoint(run.then_block):
        last_key = irb.sub(c.seq_k, 1)
        c.k_offs = kv_tiles.lane_offsets(c.copy_k, c.ptr["K"], c.tid, c.k_base, last_key)
        c.v_offs = kv_tiles.lane_offsets(c.copy_v, c.ptr["V"], c.tid, c.v_base, last_key)
        first = tile_first(c, start)
        kv_tiles.store(c.copy_k, c.lds_k, c.tid, operands.lds_half(d.dtype, load_k(c, first)))
        if s.kv_buffers == 1:
            extra = load_v(c, first)       # V(n) registers, stored once S(n) has been read
        else:
            kv_tiles.store(c.copy_v, c.lds_v, c.tid, operands.lds_half(d.dtype, load_v(c, first)))
            extra = [irb.c(0)]             # which LDS buffer holds tile n
        amdgpu.LDSBarrierOp()
        loop = scf.ForOp(start, end, irb.c(s.block_n), init + extra)
        with ir.InsertionPoint(loop.body):
            n0 = loop.induction_variable
            it = list(loop.inner_iter_args)
            o = unflatten_rows(it[:nf * dts], nf)
            m, l = it[nf * dts:nf * dts + nf], it[nf * dts + nf:nf * dts + 2 * nf]
            nxt = tile_first(c, imin(iadd(n0, s.block_n), irb.sub(end, s.block_n)))
            qf = q if q is not None else operands.q_from_lds(c)
            tile = _tile_kv1 if s.kv_buffers == 1 else _tile_kv2
            o, m, l, extra = tile(c, n0, nxt, qf, o, m, l, it[nf * dts + 2 * nf:])
            scf.YieldOp(flatten_rows(o) + m + l + extra)
        scf.YieldOp(list(loop.results)[:len(init)])
    with ir.InsertionPoint(run.else_block):
        scf.YieldOp(init)
    res = list(run.results)
    return unflatten_rows(res[:nf * dts], nf), res[nf * dts:nf * dts + nf], res[nf * dts + nf:]


def _tile_kv1(c: Ctx, n0, nxt, qf, o, m, l, v_regs):
    """One LDS buffer each: S(n) from LDS_K; V(n) registers -> LDS_V, loads of K(n+1); barrier;
    softmax and PV(n); K(n+1) -> LDS_K, loads of V(n+1); barrier (two per tile)."""
    dt = c.d.dtype
    s_acc = operands.scores(c, qf)
    if c.dwave is not None:     # d_split: this wave's S^T partial out; the sum read after the barrier
        dsplit.publish(c.xchg, flatten_rows(s_acc), _slot(c, c.dwave), c.lane)
    kv_tiles.store(c.copy_v, c.lds_v, c.tid, operands.lds_half(dt, v_regs))
    k_regs = load_k(c, nxt)
    if c.s.fence == "k_load":
        irb.sched_barrier("none")
    amdgpu.LDSBarrierOp()
    if c.dwave is not None:     # read before the second barrier, after which the next tile publishes
        total = dsplit.gather_sum(c.xchg, len(flatten_rows(s_acc)),
                                  [_slot(c, irb.c(w)) for w in range(c.s.d_split)], c.lane)
        s_acc = unflatten_rows(total, c.s.frags_q)
    o, m, l = _softmax_pv(c, n0, s_acc, o, m, l, 0)
    kv_tiles.store(c.copy_k, c.lds_k, c.tid, operands.lds_half(dt, k_regs))
    v_next = load_v(c, nxt)
    amdgpu.LDSBarrierOp()
    return o, m, l, v_next


def _slot(c: Ctx, dwave):
    """Exchange slot of (dwave, this wave's query blocks) (kernels/attention_dsplit.py)."""
    qw = dsplit.slice_index(c.wave, c.s.q_waves)[0]
    return iadd(imul(dwave, c.s.q_waves), qw)


def _tile_kv2(c: Ctx, n0, nxt, qf, o, m, l, extra):
    """Two LDS buffers each (ping-pong): loads of K(n+1) and V(n+1) issued first; S(n) from
    buffer b; K(n+1) -> buffer 1-b; softmax and PV(n) from buffer b; V(n+1) -> buffer 1-b;
    one barrier per tile (buffer 1-b was last read before the previous tile's barrier)."""
    dt, (cur,) = c.d.dtype, extra
    nb = irb.sub(irb.c(1), cur)
    k_regs, v_regs = load_k(c, nxt), load_v(c, nxt)
    if c.s.fence == "k_load":
        irb.sched_barrier("none")
    s_acc = operands.scores(c, qf, imul(cur, c.s.block_n))
    kv_tiles.store(c.copy_k, c.lds_k, c.tid, operands.lds_half(dt, k_regs), imul(nb, c.s.block_n))
    o, m, l = _softmax_pv(c, n0, s_acc, o, m, l, imul(cur, c.d.head_dim))
    kv_tiles.store(c.copy_v, c.lds_v, c.tid, operands.lds_half(dt, v_regs), imul(nb, c.d.head_dim))
    amdgpu.LDSBarrierOp()
    return o, m, l, [nb]


def _softmax_pv(c: Ctx, n0, s_acc, o, m, l, v_buf):
    """Softcap, mask (boundary tiles only, uniform branch), online softmax and O^T += V^T P^T."""
    nf = c.s.frags_q
    if c.d.softcap:
        s_acc = [[tanh_of_scaled(x, c.cap_in, fast_rcp=True) for x in row] for row in s_acc]   # x cap: in c.c
    full_lo, full_hi = c.full
    need = arith.OrIOp(irb.lt(n0, full_lo),
                       arith.CmpIOp(arith.CmpIPredicate.sgt, iadd(n0, c.s.block_n - 1), full_hi).result).result
    flat = flatten_rows(s_acc)
    sel = scf.IfOp(need, [x.type for x in flat], has_else=True)
    with ir.InsertionPoint(sel.then_block):
        here, bands = c, c.bands
        if c.s.lane_values == "recompute":     # the bands per boundary tile, not live across the loop
            here = c.relaned()
            bands = [lane_band(here, f) for f in range(nf)]
        scf.YieldOp(flatten_rows(masked(here, s_acc, n0, tile_first(c, n0), bands)))
    with ir.InsertionPoint(sel.else_block):
        scf.YieldOp(flat)
    s_acc = unflatten_rows(list(sel.results), nf)
    p_ops, m2, l2, o = [], [], [], list(o)
    for f in range(nf):
        p, mn, ln, alpha = softmax.online_softmax(c.fam, s_acc[f], m[f], l[f], c.c)
        o[f] = softmax.rescale(o[f], alpha)
        p_ops.append([ab.p_operand(c.fam, ab.to_dtype(x, c.d.dtype), c.lane, full_exec=True) for x in p])
        m2.append(mn)
        l2.append(ln)
    if c.s.fence == "pv":
        irb.sched_barrier("none")
    return operands.pv(c, p_ops, o, v_buf), m2, l2
