"""Flash-attention forward (FA-2) kernel builder: AttentionDirective + AttentionSchedule +
Target -> MLIR GPU-dialect module and its Signature. The key loop is
kernels/attention/main_loop.py; this module sets up the context and writes the epilogue.

One workgroup owns BLOCK_M queries of one (sequence b, head h); wave w owns FQ blocks of 16
queries. Products are transposed ("swap A/B", kernels/attention_blocks.py) so a lane's
accumulator column is its query:

    Q^T fragments -> registers (B operands, runs along d)            # q_in="regs"
    m = -inf, l = 0, O^T = 0
    [n_lo, n_hi) = key tiles this workgroup can see (causal/window/split, at run time)
    K(n_lo) -> LDS_K ; V(n_lo) -> registers ; barrier
    for n0 in range(n_lo, n_hi, BLOCK_N):                            # scf.for
        S^T[kt] = K[kt] @ Q^T                 (A = K rows from LDS_K, B = Q^T)
        V(n0) registers -> LDS_V transposed ; issue loads of K(n0+BLOCK_N) ; barrier
        S^T = tanh(S^T * scale / cap)        (directive.softcap; kernels/softcap.py; the cap
                                              joins log2 e in the exp2 factor: c = cap * log2 e)
        S^T = -inf outside the visible band   (only in boundary tiles, uniform branch)
        P, m, l, alpha = online_softmax(S^T)  (softmax.py; exp2 with scale*log2 e folded)
        O^T = alpha * O^T + V^T @ P^T         (A = V^T rows from LDS_V, B = P^T in registers)
        K(n0+BLOCK_N) -> LDS_K ; issue loads of V(n0+BLOCK_N) ; barrier
    (kv_buffers=2: both loads first, ping-pong LDS buffers, one barrier per tile; _tile_kv2)
    O = O^T / l ; LSE = ln2 * (m + log2 l)    (rows that saw no key: O = 0, LSE = -inf)
    (directive.sinks: m, l first take the head's sink logit s_h: softmax.finish)

Per arch (layout facts in layouts.py with the manuals' sections):
  gfx12 (RDNA4): A/B are 8-element runs per lane and C/D value v of lane l is row
    8*(l//16)+v, so P^T leaves the first WMMA exactly as the second WMMA's B operand (cast to
    f16/bf16 in registers, no exchange); V^T's A runs are the same 8 keys.
  gfx11 (RDNA3/3.5): C/D value v is row 2v + l//16; every A operand loads row
    sigma(r) = 8*(r%2) + r//2 into A row r, which gives the gfx12 accumulator layout for free
    (lanes.a_row). B operands need all 16 keys in both half-waves (lanes 16-31
    replicate 0-15), so each lane swaps its 4 packed P registers with lane ^ 16 by
    v_permlanex16_b32 and orders them (lanes.p_operand): 4 permlanes + 8 selects
    per 16x16 P tile, cheaper than an LDS round trip (a store, a barrier-free wave-local
    reload of 32 bytes per lane and the lgkm waits).
  Row statistics: the lane's own values plus one v_permlanex16 (lane ^ 16) per tile for the
    max; the sum stays lane-partial and the halves are added once at the end.

Barriers are amdgpu.lds_barrier (LDS counter wait + s_barrier): gpu.barrier's workgroup fence
also waits for every outstanding global load (vmcnt(0)) and invalidates the L0 cache, which
would stall the K/V prefetch at each barrier; only LDS traffic crosses waves here.

Global memory (kernels/staging/kv_tiles.py): Q, K and V are `!llvm.ptr<1>` arguments, each a GlobalTensor
(kernels/global_tensor.py), read in the global "saddr" form (SGPR base + 32-bit VGPR offset +
immediate); O, the f32 LSE and split partials are flat memref views (`epilogue` says why). A tensor's row_base gives the sequence's row 0; each thread's row offsets are computed once
before the key loop; a tile adds one uniform offset (one v_add per row read, the chunks of a
row are immediates). The tile at n0 is read from first = max(0, min(n0, Sk - BLOCK_N))
(`tile_first`): only the sequence's last tile moves, down so that it ends at Sk, and keys
below n0 there are masked -- no per-lane clamp in the loop.

Masking: causal is aligned bottom-right (query i sees key j iff j <= i + Sk - Sq); the window
(left, right) keeps i+Sk-Sq-left <= j <= i+Sk-Sq+right, -1 unbounded. Key tiles wholly outside
every query's band are never visited; tiles wholly inside skip the mask.

Sizes, strides, scale, window sizes and cu_seqlens are kernel arguments (signature.py);
layouts bshd/bhsd are strides. Index math is 32-bit (compiler/pipeline.py). The schedule's
`sched` knob picks LLVM's machine-scheduler strategy (function attribute), `fence` where a
sched barrier splits the loop body, and `lane_values` whether the lane's mask bands and
epilogue rows are kept across the loop or recomputed where used (Ctx.relaned).
"""
from __future__ import annotations

import math

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import gpu_ops as gpu
from ...compiler.mlir_api import arith, memref, scf, vector

from ...kernels import attention_blocks as ab
from ...kernels import attention_dsplit as dsplit
from ...kernels import irb
from ...kernels.attention import softmax
from ...kernels.staging import kv_tiles
from ...kernels.attention.context import Ctx
from ...kernels.attention.main_loop import main_loop
from ...kernels.attention_blocks import iadd, imul
from ...kernels.global_tensor import GlobalTensor
from ...kernels.module import gpu_module_text, kernel_func
from ...kernels.signature import KernelSource
from ...targets import Target
from .schedule import LDS_PAD, AttentionSchedule
from .signature import F32_SCALARS, attention_signature, buffer_names, scalar_names, tail_buffers

LOG2E = 1.0 / math.log(2.0)
SCHED_STRATEGY = {"minreg": "iterative-minreg"}  # schedule.sched -> LLVM "amdgpu-sched-strategy"
GLOBAL_PTRS = ("Q", "K", "V")  # GlobalTensors: 32-bit byte offsets (kernels/saddr.py), 16-bit elements
# O, the f32 LSE and the split partials stay flat memref views (64-bit addresses): see `epilogue`


def kernel_name(d, s: AttentionSchedule) -> str:
    flags = "".join(f for f, on in (("c", d.causal), ("w", d.window), ("v", d.varlen), ("l", d.return_lse),
                                    ("s", d.softcap), ("a", d.sinks)) if on)
    return f"fa_fwd_{d.dtype}_d{d.head_dim}{'_' + flags if flags else ''}" + (f"_split{s.split_kv}" if s.split_kv > 1 else "")


def build_attention(d, s: AttentionSchedule, t: Target, key=None) -> KernelSource:
    """The forward kernel for directive d (AttentionDirective), schedule s and target t.
    `key` (specialization key) is accepted for the build-path contract; this kernel has none
    (every size is a run-time argument)."""
    s.validate(d, t)
    name = kernel_name(d, s)
    text = gpu_module_text(name, t.arch, lambda: _kernel(d, s, t, name))
    return KernelSource(name, text, t.arch, attention_signature(d, s, name))


def _lds(rows: int, cols: int) -> ir.MemRefType:
    return ir.MemRefType.get([rows, cols], ir.F16Type.get(),
                             memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))


def _kernel(d, s: AttentionSchedule, t: Target, name: str) -> None:
    bufs = buffer_names(d, s)
    buf_types = [ab.global_pointer_type() if n in GLOBAL_PTRS else ab.pointer_type(dt) for n, dt in bufs]
    names = scalar_names(d)
    scalar_types = [ab.f32_type() if n in F32_SCALARS else ab.i32_type() for n in names]
    dh = d.head_dim
    lds_types = [_lds(s.kv_buffers * s.block_n, dh + LDS_PAD), _lds(s.kv_buffers * dh, s.block_n + LDS_PAD)]
    if s.q_in == "lds":
        lds_types.append(_lds(s.block_m, dh + LDS_PAD))
    if s.d_split > 1:
        lds_types.append(dsplit.lds_f32(dsplit.exchange_bytes(s.waves, s.frags_q, s.block_n) // 4))
    tail = tail_buffers(d, s)
    arg_types = buf_types + scalar_types + [ab.pointer_type(dt) for _, dt in tail]
    block = kernel_func(name, arg_types, s.threads, lds_types,
                        SCHED_STRATEGY[s.sched] if s.sched != "default" else "")
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        ptrs = dict(zip([n for n, _ in bufs], args[:len(bufs)], strict=True))
        sc = dict(zip(names, args[len(bufs):len(bufs) + len(names)], strict=True))
        ptrs |= dict(zip([n for n, _ in tail], args[len(bufs) + len(names):len(arg_types)], strict=True))
        lds = args[len(arg_types):]
        c = _context(d, s, t, ptrs, sc, lds)
        live = scf.IfOp(irb.lt(c.q0, c.seq_q))  # workgroups past the sequence end do nothing
        with ir.InsertionPoint(live.then_block):
            o, m, l = main_loop(c)
            epilogue(c, o, m, l)
            scf.YieldOp([])
        gpu.ReturnOp([])


def _idx(v):
    return arith.index_cast(irb.index(), v)


def _context(d, s, t, ptrs, sc, lds) -> Ctx:
    tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    bx = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    h = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
    b = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim z>")).result
    tile, split = (irb.div(bx, s.split_kv), irb.rem(bx, s.split_kv)) if s.split_kv > 1 else (bx, irb.c(0))
    views = {n: p if n in GLOBAL_PTRS else ab.flat_view(p, "f32" if n in ("LSE", "O_part", "LSE_part", "sinks") else
                                                       ("i32" if n.startswith("cu_") else d.dtype))
             for n, p in ptrs.items()}
    x = {n: _idx(v) for n, v in sc.items() if n not in F32_SCALARS}
    views |= {n: GlobalTensor(views[n], d.dtype, (x[f"{n.lower()}_sb"], x[f"{n.lower()}_ss"], x[f"{n.lower()}_sh"]))
              for n in GLOBAL_PTRS if n in views}   # (batch, seq, head, dim) saddr tensors (no O with split_kv)
    if d.varlen:
        cu_q, cu_k = views["cu_seqlens_q"], views["cu_seqlens_k"]
        q_start = _idx(memref.load(cu_q, [b]))
        seq_q = irb.sub(_idx(memref.load(cu_q, [iadd(b, 1)])), q_start)
        k_start = _idx(memref.load(cu_k, [b]))
        seq_k = irb.sub(_idx(memref.load(cu_k, [iadd(b, 1)])), k_start)
    else:
        q_start, k_start, seq_q, seq_k = irb.c(0), irb.c(0), x["seq_q"], x["seq_k"]
    kvh = irb.div(h, x["kv_group"])

    def base(p, head):   # element offset of row 0 of the sequence in head `head`
        start = k_start if p in "kv" else q_start
        if p.upper() in GLOBAL_PTRS:
            return views[p.upper()].row_base(b, start, head)
        if p.upper() not in views:   # O with split_kv: unused (the partials have their own rows)
            return None
        return iadd(imul(b, x[f"{p}_sb"]), iadd(imul(head, x[f"{p}_sh"]), imul(start, x[f"{p}_ss"])))
    if d.softcap:   # S = cap * tanh(scale * qk / cap): the scale moves inside the tanh, the cap into c
        c = arith.mulf(sc["softcap"], irb.cf(LOG2E, ab.f32_type()))
    else:
        c = arith.mulf(sc["scale"], irb.cf(LOG2E, ab.f32_type()))
    lse_base = iadd(imul(b, x["lse_sb"]), iadd(imul(h, x["lse_sh"]), q_start))
    ck = kv_tiles.plan(s.block_n, d.head_dim, s.load_bits, s.threads, False, d.dtype)
    cv = kv_tiles.plan(s.block_n, d.head_dim, s.load_bits, s.threads, True, d.dtype)
    ctx = Ctx(d=d, s=s, fam=t.family, ptr=views,
              sc=x | {"scale": sc["scale"], "window_left": x["window_left"], "window_right": x["window_right"]},
              lds_k=lds[0], lds_v=lds[1], lds_q=lds[2] if s.q_in == "lds" else None, tid=tid, lane=irb.rem(tid, 32),
              wave=irb.div(tid, 32), split=split, q0=imul(tile, s.block_m), seq_q=seq_q, seq_k=seq_k,
              q_base=base("q", h), k_base=base("k", kvh), v_base=base("v", kvh), o_base=base("o", h),
              lse_base=lse_base, c=c, b=b, h=h, q_start=q_start, copy_k=ck, copy_v=cv)
    if d.softcap:
        ctx.cap_in = arith.divf(sc["scale"], sc["softcap"])
    if s.d_split > 1:
        ctx.dwave, ctx.xchg = dsplit.slice_index(ctx.wave, s.q_waves)[1], lds[-1]
    return ctx


# --- epilogue -----------------------------------------------------------------------------------

def epilogue(c: Ctx, o, m, l) -> None:
    """O = O^T / l (8 consecutive d per lane and tile: one vector store), LSE per query. The
    lane's query and rows are recomputed here with lane_values="recompute" (Ctx.relaned).

    O, the f32 LSE and the split partials are flat memref views (64-bit address arithmetic).
    O through its GlobalTensor (saddr form) was measured: under LLVM 24 the main loops held, but
    under LLVM 23 (mlir-gml) gfx1100 bf16 hd64's main loop grew 741 -> 752 issued instructions
    (tests/compile/test_fwd_provider_density.py), so it stays a flat view. In 32-bit byte offsets
    an f32 buffer of 2**30..2**31 elements -- which the launcher's element limit admits, and
    split_kv x the rows x D partials reach first -- would wrap, and the forward's signature
    declares no KArg.offset_bits bound for them (kernels/global_tensor.py)."""
    if c.s.lane_values == "recompute":
        c = c.relaned()
    sink = softmax.sink_log2(c.ptr["sinks"], c.h) if "sinks" in c.ptr else None   # split_kv > 1: the combine's
    for f in range(c.s.frags_q):
        inv, lse = softmax.finish(m[f], l[f], sink, c.fam)
        i = c.query(f)
        ok = irb.lt(i, c.seq_q)
        st = scf.IfOp(ok)
        with ir.InsertionPoint(st.then_block):
            if c.s.split_kv > 1:
                _store_partial(c, f, i, o[f], inv, lse)
            else:
                base = iadd(c.o_base, iadd(imul(i, c.sc["o_ss"]), _o_col(c)))
                for dt, acc in enumerate(o[f]):
                    def put(dt=dt, acc=acc):
                        val = ab.to_dtype_out(arith.mulf(acc, ab.splat(inv, 8)), c.d.dtype)
                        vector.store(val, c.ptr["O"], [iadd(base, 16 * dt)])
                    _in_d(c, dt, put)
                if c.d.return_lse:
                    first = scf.IfOp(_lse_lane(c))
                    with ir.InsertionPoint(first.then_block):
                        memref.store(lse, c.ptr["LSE"], [iadd(c.lse_base, i)])
                        scf.YieldOp([])
            scf.YieldOp([])


def _store_partial(c: Ctx, f: int, i, o_f, inv, lse) -> None:
    """Split-KV: this split's normalized O (f32) and LSE at packed row `row` (signature.py)."""
    row = iadd(c.q_start, i) if c.d.varlen else iadd(imul(c.b, c.sc["seq_q"]), i)
    hr = iadd(imul(iadd(imul(c.split, c.sc["heads"]), c.h), c.sc["rows"]), row)
    base = iadd(imul(hr, c.d.head_dim), _o_col(c))
    for dt, acc in enumerate(o_f):
        _in_d(c, dt, lambda dt=dt, acc=acc: vector.store(arith.mulf(acc, ab.splat(inv, 8)), c.ptr["O_part"],
                                                         [iadd(base, 16 * dt)]))
    first = scf.IfOp(_lse_lane(c))
    with ir.InsertionPoint(first.then_block):
        memref.store(lse, c.ptr["LSE_part"], [hr])
        scf.YieldOp([])


def _o_col(c: Ctx):
    """The lane's first O column: its accumulator row, in the wave's head-dim slice (d_split)."""
    _, dcol = c.d_slice()
    return ab.acc_row0(c.lane) if dcol is None else iadd(ab.acc_row0(c.lane), dcol)


def _in_d(c: Ctx, dt: int, put) -> None:
    """put() for O tile dt of the wave's slice, skipped where the last slice runs past D."""
    inside = c.d_tile_inside(dt)
    if inside is None:
        put()
    else:
        irb.if_then(inside, put)


def _lse_lane(c: Ctx):
    """The lanes that store a query's LSE: the first half-wave (of the first head-dim slice)."""
    first = irb.lt(c.lane, 16)
    return first if c.dwave is None else irb.land(first, irb.lt(c.dwave, 1))
