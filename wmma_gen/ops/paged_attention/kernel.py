"""Paged-KV decode attention kernel: PagedAttentionDirective + PagedSchedule + Target -> MLIR
module and Signature, on the dense forward's blocks (kernels/attention/: operands.py, softmax.py,
bounds.py; kernels/staging/kv_tiles.py; kernels/attention_blocks.py for the swap-A/B layout).

One workgroup owns one (sequence b, kv head g), one split of its keys and BLOCK_M packed query
rows r = i * group + head_in_group, token-major (GQA: every query head sharing g reads the same
K/V tile once; a row tile spans ~BLOCK_M / group consecutive tokens, so causal chunks of a
long prefill visit only the key tiles their tokens see):

    Q^T fragments -> registers (B operands; row r's head and token from r)
    m = -inf, l = 0, O^T = 0
    [n_lo, n_hi) = this split's key tiles among those any query sees (bounds.tile_range)
    K(n_lo), V(n_lo) -> registers                    (cache_tiles: via block_table)
    for n0 in range(n_lo, n_hi, BLOCK_N):            # scf.for, the tile's registers carried
        K -> LDS_K, V -> LDS_V^T ; barrier
        issue loads of K, V (n0 + BLOCK_N)
        S^T = K @ Q^T                                  (operands.scores)
        S^T = softcap * tanh(S^T * scale / softcap)    (directive.softcap)
        S^T = -inf outside each row's band             (boundary tiles only, uniform branch)
        P, m, l, alpha = online_softmax(S^T)           (softmax.py)
        O^T = alpha O^T + V^T @ P^T                    (operands.pv) ; barrier
    O_part = v_scale * O^T / l ; LSE_part = ln2 (m + log2 l)   (per split; combine merges)

Row r of query token i of sequence b sees keys per the dense forward's bounds with Sq query
tokens and Sk = seq_lens[b] keys (bottom-right: token i at position Sk - Sq + i). FP8 caches
are widened in registers (cache_tiles.py); the K scale (x 2**8 for E4M3) is folded into the
softmax's exp2 factor, the V scale into the epilogue's 1/l. With fp8_wmma (gfx12) the tiles stay
bytes and both products run on fp8 WMMA (fp8_tiles.py: Q quantised per row, the row's scale in
its exp2 factor; P as E4M3 of P * 2**8, the 2**-8 in the epilogue's v_scale).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import amdgpu_ops as amdgpu
from ...compiler.mlir_api import gpu_ops as gpu
from ...compiler.mlir_api import arith, memref, scf, vector

from ...kernels import attention_blocks as ab
from ...kernels import irb
from ...kernels.fp8_widen import E4M3_SCALE
from ...kernels.attention import LDS_PAD, operands, softmax
from ...kernels.staging import kv_tiles
from ...kernels.attention.bounds import lane_band, masked, tile_range
from ...kernels.attention.context import AttentionCtx
from ...kernels.attention_blocks import iadd, imin, imul
from ...kernels.fragments import flatten_rows, unflatten_rows
from ...kernels.global_tensor import GlobalTensor
from ...kernels.module import gpu_module_text, kernel_func
from ...kernels.signature import KernelSource
from ...kernels.softcap import softcap
from ...targets import Target
from . import cache_tiles, fp8_tiles
from .schedule import PagedSchedule
from .signature import F32_SCALARS, SCALARS, buffer_names, paged_signature

LOG2E = 1.0 / math.log(2.0)
GLOBAL_PTRS = ("Q", "K_cache", "V_cache")
E4M3_SHIFT = E4M3_SCALE   # cache_tiles (kernels/fp8_widen.py): E4M3 bits widened to halves are x * 2**-8


def kernel_name(d, s: PagedSchedule) -> str:
    flags = "".join(f for f, on in (("c", d.causal), ("w", d.window), ("s", d.softcap), ("l", d.return_lse)) if on)
    kv = "" if d.kv_dtype == d.dtype else f"_{d.kv_dtype}{'w' if d.fp8_wmma else ''}"
    kv += f"_q{d.q_dtype}" if d.q_fp8 else ""
    return (f"paged_{d.dtype}{kv}_d{d.head_dim}_bs{d.block_size}{'_' + flags if flags else ''}"
            f"_n{s.block_n}w{s.waves}f{s.frags_q}_split{s.split_kv}{'_ql' if s.q_in == 'lds' else ''}"
            f"{'' if s.prefetch else '_np'}")


def build_paged_attention(d, s: PagedSchedule, t: Target, key=None) -> KernelSource:
    """The paged decode kernel for directive d, schedule s and target t (no specialization key:
    every size is a run-time argument)."""
    s.validate(d, t)
    name = kernel_name(d, s)
    text = gpu_module_text(name, t.arch, lambda: _kernel(d, s, t, name))
    return KernelSource(name, text, t.arch, paged_signature(d, s, name))


def _lds(rows: int, cols: int, et=None) -> ir.MemRefType:
    return ir.MemRefType.get([rows, cols], et or ir.F16Type.get(),
                             memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))


@dataclass(kw_only=True)
class PagedCtx(AttentionCtx):
    """The paged kernel's context: the shared fields (attention/context.AttentionCtx; q0 is the
    first token of the row tile, which over-covers the last one by < BLOCK_M tokens: at most
    extra, fully masked tiles in bounds.tile_range) plus GQA row packing and the fp8 scales."""
    kvh: object
    row0: object        # first packed row of the workgroup
    group_rows: object  # kv_group * seq_q
    v_scale: object
    cap: object = None    # softcap (f32)
    c_rows: list = None   # per query block f: c (fp8_wmma: times the row's Q scale, fp8_tiles)
    cap_rows: list = None  # per f: cap_in (same)

    def packed_row(self, f: int):
        return iadd(self.row0, iadd(imul(self.wave, 16 * self.s.frags_q), iadd(irb.rem(self.lane, 16), 16 * f)))

    def _row(self, f: int):
        return imin(self.packed_row(f), irb.sub(self.group_rows, 1))     # padding rows clamped

    def query(self, f: int):
        """Query token (0..Sq-1) of the lane's packed row in block f."""
        return irb.div(self._row(f), self.sc["kv_group"])

    def head(self, f: int):
        return iadd(imul(self.kvh, self.sc["kv_group"]), irb.rem(self._row(f), self.sc["kv_group"]))


def _kernel(d, s: PagedSchedule, t: Target, name: str) -> None:
    bufs = buffer_names(d)
    buf_types = [ab.global_pointer_type() if n in GLOBAL_PTRS else ab.pointer_type(dt) for n, dt in bufs]
    scalar_types = [ab.f32_type() if n in F32_SCALARS else ab.i32_type() for n in SCALARS]
    tile_et = ir.IntegerType.get_signless(8) if d.fp8_wmma else None   # fp8_wmma: the cache's bytes
    lds_types = [_lds(s.block_n, d.head_dim + LDS_PAD, tile_et), _lds(d.head_dim, s.block_n + LDS_PAD, tile_et)]
    if s.q_in == "lds":
        lds_types.append(_lds(s.block_m, d.head_dim + LDS_PAD))
    arg_types = buf_types + scalar_types
    block = kernel_func(name, arg_types, s.threads, lds_types)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        ptrs = dict(zip([n for n, _ in bufs], args[:len(bufs)], strict=True))
        sc = dict(zip(SCALARS, args[len(bufs):len(bufs) + len(SCALARS)], strict=True))
        c = _context(d, s, t, ptrs, sc, args[len(bufs) + len(SCALARS):])
        live = scf.IfOp(irb.lt(c.row0, c.group_rows))   # row tiles past a short chunk (varlen) do nothing
        with ir.InsertionPoint(live.then_block):
            o, m, l = main_loop(c)
            epilogue(c, o, m, l)
            scf.YieldOp([])
        gpu.ReturnOp([])


def _context(d, s, t, ptrs, sc, lds) -> PagedCtx:
    f32 = ab.f32_type()
    tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    bx = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    kvh = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
    b = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim z>")).result
    tile, split = (irb.div(bx, s.split_kv), irb.rem(bx, s.split_kv)) if s.split_kv > 1 else (bx, irb.c(0))
    views = {n: p if n in GLOBAL_PTRS else ab.flat_view(p, dt) for (n, dt), p in zip(buffer_names(d), ptrs.values())}
    x = {n: arith.index_cast(irb.index(), v) for n, v in sc.items() if n not in F32_SCALARS}
    # Q (batch or token, head) and the K/V caches (block, slot, head) as saddr tensors
    strides = {"Q": ("q_sb", "q_ss", "q_sh"), "K_cache": ("k_sblk", "k_ss", "k_sh"), "V_cache": ("v_sblk", "v_ss", "v_sh")}
    views |= {n: GlobalTensor(views[n], dt, tuple(x[a] for a in strides[n])) for n, dt in buffer_names(d) if n in GLOBAL_PTRS}
    seq_k = arith.index_cast(irb.index(), memref.load(views["seq_lens"], [b]))
    if d.varlen:
        q_start = arith.index_cast(irb.index(), memref.load(views["cu_seqlens_q"], [b]))
        seq_q = irb.sub(arith.index_cast(irb.index(), memref.load(views["cu_seqlens_q"], [iadd(b, 1)])), q_start)
    else:
        q_start, seq_q = irb.c(0), x["seq_q"]
    row0 = imul(tile, s.block_m)
    k_scale, v_scale = irb.cf(1.0, f32), irb.cf(1.0, f32)
    if d.fp8:
        kv_heads = irb.div(x["heads"], x["kv_group"])
        shift = irb.cf(E4M3_SHIFT if d.kv_dtype == "fp8e4m3" and not d.fp8_wmma else 1.0, f32)
        k_scale = arith.mulf(memref.load(views["kv_scales"], [kvh]), shift)
        v_shift = irb.cf(1.0 / fp8_tiles.P_SHIFT, f32) if d.fp8_wmma else shift
        v_scale = arith.mulf(memref.load(views["kv_scales"], [iadd(kv_heads, kvh)]), v_shift)
    qk = arith.mulf(sc["scale"], k_scale)
    if d.softcap:
        c, cap_in = irb.cf(LOG2E, f32), arith.divf(qk, sc["softcap"])
    else:
        c, cap_in = arith.mulf(qk, irb.cf(LOG2E, f32)), None
    return PagedCtx(d=d, s=s, fam=t.family, ptr=views, sc=x, lds_k=lds[0], lds_v=lds[1],
                    lds_q=lds[2] if len(lds) > 2 else None, tid=tid, lane=irb.rem(tid, 32), wave=irb.div(tid, 32),
                    split=split, b=b, kvh=kvh, row0=row0, group_rows=imul(x["kv_group"], seq_q), seq_q=seq_q,
                    q_start=q_start, seq_k=seq_k, c=c, cap_in=cap_in, v_scale=v_scale, cap=sc["softcap"],
                    q0=irb.div(row0, x["kv_group"]), copy_k=cache_tiles.plan(s, d, False),
                    copy_v=cache_tiles.plan(s, d, True))


def q_fragments(c: PagedCtx) -> list:
    """Q^T B operands [f][kd]: the lane's packed row is query token i of head h (GQA packing);
    the head-dim runs of the row are immediate offsets of one lane address."""
    n, Q = ab.run_len(c.fam), c.ptr["Q"]      # GlobalTensor (batch or token, head): strides (sb, ss, sh)
    out = []
    for f in range(c.s.frags_q):
        token = iadd(c.q_start, c.query(f))
        row = iadd(imul(c.b, Q.strides[0]), iadd(imul(token, Q.row_stride), imul(c.head(f), Q.strides[2])))
        off = Q.byte_offset(iadd(row, ab.run_offset(c.fam, c.lane)))
        if c.d.q_fp8:     # fp8 bytes: the lane's run of 8 is its B operand as loaded (fp8_tiles.q_operand)
            out.append([fp8_tiles.q_operand(c.d, Q.read_at(off, n, 16 * kd)) for kd in range(c.d.head_dim // 16)])
            continue
        out.append([Q.read_at(off, n, 16 * kd) for kd in range(c.d.head_dim // 16)])
    return out


def q_to_lds(c: PagedCtx, q: list) -> None:
    """q_in="lds": each lane writes its fragments' runs at its (workgroup-local) packed row, as
    operands.q_from_lds reads them back (gfx11's two half-waves write the same bytes)."""
    row0 = iadd(imul(c.wave, 16 * c.s.frags_q), irb.rem(c.lane, 16))
    col = ab.run_offset(c.fam, c.lane)
    for f, frags in enumerate(q):
        for kd, x in enumerate(frags):
            vector.store(operands.lds_half(c.d.dtype, [x])[0], c.lds_q, [iadd(row0, 16 * f), iadd(col, 16 * kd)])
    amdgpu.LDSBarrierOp()


def _load(c: PagedCtx, n0) -> list:
    return cache_tiles.load_tile(c, c.copy_k, "K", n0) + cache_tiles.load_tile(c, c.copy_v, "V", n0)


def main_loop(c: PagedCtx):
    s, d = c.s, c.d
    f32 = ab.f32_type()
    nf, dts = s.frags_q, d.head_dim // 16
    o = [[irb.zeros(irb.vec(8, f32)) for _ in range(dts)] for _ in range(nf)]
    m = [irb.cf(softmax.NEG_INF, f32) for _ in range(nf)]
    l = [irb.cf(0.0, f32) for _ in range(nf)]
    start, end, full_lo, full_hi = tile_range(c)
    q = q_fragments(c)
    c.c_rows, c.cap_rows = [c.c] * nf, [c.cap_in] * nf
    if d.fp8_wmma and not d.q_fp8:
        q, q_scales = fp8_tiles.quantize_q(c, q)
        if d.softcap:   # the row's scale goes inside tanh; exp2 takes the capped score as is
            c.cap_rows = [arith.mulf(c.cap_in, x) for x in q_scales]
        else:
            c.c_rows = [arith.mulf(c.c, x) for x in q_scales]
    if s.q_in == "lds":
        q_to_lds(c, q)
        q = None
    c.bands = [lane_band(c, f) for f in range(nf)]
    c.full = (full_lo, full_hi)
    init = flatten_rows(o) + m + l
    run = scf.IfOp(irb.lt(start, end), [v.type for v in init], has_else=True)
    with ir.InsertionPoint(run.then_block):
        regs = _load(c, start) if s.prefetch else []
        nk = c.copy_k.regs
        loop = scf.ForOp(start, end, irb.c(s.block_n), init + regs)
        with ir.InsertionPoint(loop.body):
            n0 = loop.induction_variable
            it = list(loop.inner_iter_args)
            o = unflatten_rows(it[:nf * dts], nf)
            m, l = it[nf * dts:nf * dts + nf], it[nf * dts + nf:len(init)]
            tile = it[len(init):] if s.prefetch else _load(c, n0)
            if d.fp8_wmma:
                kv_tiles.store(c.copy_k, c.lds_k, c.tid, tile[:nk])
                fp8_tiles.store_transposed(c.copy_v, c.lds_v, c.tid, tile[nk:])
            else:
                kv_tiles.store(c.copy_k, c.lds_k, c.tid, cache_tiles.lds_values(d, tile[:nk]))
                kv_tiles.store(c.copy_v, c.lds_v, c.tid, cache_tiles.lds_values(d, tile[nk:]))
            amdgpu.LDSBarrierOp()
            nxt = _load(c, imin(iadd(n0, s.block_n), irb.sub(end, s.block_n))) if s.prefetch else []
            o, m, l = tile_step(c, n0, q if q is not None else operands.q_from_lds(c), o, m, l)
            amdgpu.LDSBarrierOp()   # every wave is done with the LDS tiles before they are rewritten
            scf.YieldOp(flatten_rows(o) + m + l + nxt)
        scf.YieldOp(list(loop.results)[:len(init)])
    with ir.InsertionPoint(run.else_block):
        scf.YieldOp(init)
    res = list(run.results)
    return unflatten_rows(res[:nf * dts], nf), res[nf * dts:nf * dts + nf], res[nf * dts + nf:]


def tile_step(c: PagedCtx, n0, q, o, m, l):
    """Scores, softcap, mask (boundary tiles only), online softmax and O^T += V^T P^T."""
    nf, f8 = c.s.frags_q, c.d.fp8_wmma
    s_acc = fp8_tiles.scores(c, q) if f8 else operands.scores(c, q)
    if c.d.softcap:
        # fast_rcp: v_rcp_f32 for tanh's 2 / (e + 1), as the dense kernels (kernels/softcap.py)
        s_acc = [[softcap(x, c.cap_rows[f], c.cap, fast_rcp=True) for x in row] for f, row in enumerate(s_acc)]
    full_lo, full_hi = c.full
    need = arith.OrIOp(irb.lt(n0, full_lo),
                       arith.CmpIOp(arith.CmpIPredicate.sgt, iadd(n0, c.s.block_n - 1), full_hi).result).result
    flat = flatten_rows(s_acc)
    sel = scf.IfOp(need, [x.type for x in flat], has_else=True)
    with ir.InsertionPoint(sel.then_block):
        scf.YieldOp(flatten_rows(masked(c, s_acc, n0, n0, c.bands)))
    with ir.InsertionPoint(sel.else_block):
        scf.YieldOp(flat)
    s_acc = unflatten_rows(list(sel.results), nf)
    p_ops, m2, l2, o = [], [], [], list(o)
    for f in range(nf):
        p, mn, ln, alpha = softmax.online_softmax(c.fam, s_acc[f], m[f], l[f], c.c_rows[f])
        o[f] = softmax.rescale(o[f], alpha)
        if f8:
            p_ops.append([fp8_tiles.p_operand(x) for x in p])
        else:
            p_ops.append([ab.p_operand(c.fam, ab.to_dtype(x, c.d.dtype), c.lane, full_exec=True) for x in p])
        m2.append(mn)
        l2.append(ln)
    return (fp8_tiles.pv(c, p_ops, o) if f8 else operands.pv(c, p_ops, o)), m2, l2


def epilogue(c: PagedCtx, o, m, l) -> None:
    """This split's O (times the V scale, f32) and LSE at partial row (split, h, b * Sq + i)."""
    for f in range(c.s.frags_q):
        inv, lse = softmax.finish(m[f], l[f])      # full exec: before the per-row branch
        inv = arith.mulf(inv, c.v_scale)
        st = scf.IfOp(irb.lt(c.packed_row(f), c.group_rows))
        with ir.InsertionPoint(st.then_block):
            row = iadd(c.q_start, c.query(f)) if c.d.varlen else iadd(imul(c.b, c.seq_q), c.query(f))
            hr = iadd(imul(iadd(imul(c.split, c.sc["heads"]), c.head(f)), c.sc["rows"]), row)
            base = iadd(imul(hr, c.d.head_dim), ab.acc_row0(c.lane))
            for dt, acc in enumerate(o[f]):
                vector.store(arith.mulf(acc, ab.splat(inv, 8)), c.ptr["O_part"], [iadd(base, 16 * dt)])
            first = scf.IfOp(irb.lt(c.lane, 16))
            with ir.InsertionPoint(first.then_block):
                memref.store(lse, c.ptr["LSE_part"], [hr])
                scf.YieldOp([])
            scf.YieldOp([])
