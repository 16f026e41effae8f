"""MLA decode kernel: MLADirective + MLASchedule + Target -> MLIR module and Signature.

One workgroup owns sequence b, 16 packed query rows r = i * heads + h (all heads read the one
latent row per key, so the H x Sq query rows of a sequence are the M side of the tile) and
one split of the sequence's keys. Its W waves share every 16-key tile (swap-A/B layout,
kernels/attention_blocks.py: S^T = K Q^T, O^T += V^T P^T):

    wave w: Q^T fragments for latent columns [w D/W, (w+1) D/W) -> registers (B operands)
    m = -inf, l = 0, O^T (its Dv/W columns) = 0
    tile(start) -> registers                                 (rows via block_table)
    for n0 in this split's key tiles:                        (scf.for, the tile's registers carried)
        tile -> LDS_K [16][D]                                barrier
        issue the loads of tile n0 + 16                      (in flight across this tile's math)
        LDS_K's first Dv columns -> LDS_V^T [Dv][16]         (transposed; the cache is read once)
        S^T_w = K[:, w-th D/W columns] @ Q^T_w -> LDS_S[w]   barrier
        S^T = sum_w LDS_S[w]            (same order in every wave: identical m, l, P everywhere)
        S^T = -inf past the sequence end / causal limit
        P, m, l, alpha = online_softmax(S^T)                (kernels/attention/softmax.py)
        O^T_w = alpha O^T_w + V^T[w-th Dv/W rows] @ P^T      barrier
    O_part = O^T / l, LSE_part = ln2 (m + log2 l)            (per split; combine.py merges)

The reduction over D split across waves keeps each wave's Q^T at D/W columns (gfx11: 8 VGPRs
per 16) and the O split keeps its accumulator at Dv/W columns (8 VGPRs per 16): at D = 576,
Dv = 512, W = 4 that is 72 + 64 VGPRs instead of 288 + 256.

FP8 caches: the latent bytes are widened to dtype before the LDS store (kernels/fp8_widen.py;
E4M3 becomes x * 2**-8, the 2**8 and the cache's scale folded into the softmax's exp2 factor
for S and into 1/l for O), or, with fp8_wmma (gfx12), stay bytes for 8-bit float WMMA with Q
and P quantised to E4M3 (fp8_native.py).
"""
from __future__ import annotations

import math
from dataclasses import replace

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import amdgpu_ops as amdgpu
from ...compiler.mlir_api import gpu_ops as gpu
from ...compiler.mlir_api import arith, memref, scf, vector

from ...kernels import attention_blocks as ab
from ...kernels import fp8_widen, fp8_wmma, irb, saddr
from ...kernels.attention import softmax
from ...kernels.attention_blocks import iadd, imin, imul
from ...kernels.global_tensor import GlobalTensor
from ...kernels.module import gpu_module_text, kernel_func
from ...kernels.signature import KernelSource
from ...kernels.staging import kv_tiles
from ...targets import Target
from . import fp8_native
from .schedule import BLOCK_N, LDS_PAD, MLASchedule
from .signature import SCALARS, buffer_names, mla_signature

LOG2E = 1.0 / math.log(2.0)
E4M3_SHIFT = fp8_widen.E4M3_SCALE   # E4M3 bits widened to halves are x * 2**-8


def kernel_name(d, s: MLASchedule) -> str:
    kv = "" if d.kv_dtype == d.dtype else f"_{d.kv_dtype}"
    return (f"mla_{d.dtype}{kv}_d{d.head_dim}v{d.head_dim_v}_bs{d.block_size}{'_c' if d.causal else ''}"
            f"_w{s.waves}l{s.load_bits}_split{s.split_kv}{'_f8' if s.fp8_wmma else ''}")


def build_mla(d, s: MLASchedule, t: Target, key=None) -> KernelSource:
    """The MLA decode kernel (every size a run-time argument)."""
    s.validate(d, t)
    name = kernel_name(d, s)
    text = gpu_module_text(name, t.arch, lambda: _kernel(d, s, t, name))
    return KernelSource(name, text, t.arch, mla_signature(d, s, name))


def _lds(rows: int, cols: int, et) -> ir.MemRefType:
    return ir.MemRefType.get([rows, cols], et, memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))


class _Ctx:
    """What the kernel's pieces share (plain attributes)."""


def _kernel(d, s: MLASchedule, t: Target, name: str) -> None:
    bufs = buffer_names(d)
    f32 = ab.f32_type()
    buf_types = [ab.global_pointer_type() if n in ("Q", "KV_cache") else ab.pointer_type(dt) for n, dt in bufs]
    scalar_types = [f32 if n == "scale" else ab.i32_type() for n in SCALARS]
    tile_et = ir.IntegerType.get_signless(8) if s.fp8_wmma else ir.F16Type.get()   # fp8_wmma: the cache's bytes
    lds_types = [_lds(BLOCK_N, d.head_dim + LDS_PAD, tile_et), _lds(d.head_dim_v, BLOCK_N + LDS_PAD, tile_et),
                 _lds(s.waves * 32, 8, f32)]
    arg_types = buf_types + scalar_types
    block = kernel_func(name, arg_types, s.threads, lds_types)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        ptrs = dict(zip([n for n, _ in bufs], args[:len(bufs)], strict=True))
        sc = dict(zip(SCALARS, args[len(bufs):len(bufs) + len(SCALARS)], strict=True))
        c = _context(d, s, t, ptrs, sc, args[len(bufs) + len(SCALARS):])
        o, m, l = _main_loop(c)
        _epilogue(c, o, m, l)
        gpu.ReturnOp([])


def _context(d, s, t, ptrs, sc, lds) -> _Ctx:
    c = _Ctx()
    f32 = ab.f32_type()
    c.d, c.s, c.fam = d, s, t.family
    c.tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    bx = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    c.b = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim z>")).result
    c.lane, c.wave = irb.rem(c.tid, 32), irb.div(c.tid, 32)
    tile, c.split = (irb.div(bx, s.split_kv), irb.rem(bx, s.split_kv)) if s.split_kv > 1 else (bx, irb.c(0))
    c.x = x = {n: arith.index_cast(irb.index(), v) for n, v in sc.items() if n != "scale"}
    c.ptr = {n: p if n in ("Q", "KV_cache") else ab.flat_view(p, dt) for (n, dt), p in zip(buffer_names(d), ptrs.values())}
    st = {"Q": ("q_sb", "q_ss", "q_sh"), "KV_cache": ("c_sblk", "c_ss", "c_sh")}
    for n, dt in buffer_names(d):
        if n in st:
            c.ptr[n] = GlobalTensor(c.ptr[n], dt if n == "Q" else _storage(d), tuple(x[a] for a in st[n]))
    c.lds_k, c.lds_v, c.lds_s = lds
    c.seq_k = arith.index_cast(irb.index(), memref.load(c.ptr["seq_lens"], [c.b]))
    c.row0 = imul(tile, 16)
    c.nrows = imul(x["heads"], x["seq_q"])
    k_scale = irb.cf(1.0, f32)
    c.v_scale = k_scale
    if d.fp8:
        shift = irb.cf(E4M3_SHIFT if d.kv_dtype == "fp8e4m3" and not s.fp8_wmma else 1.0, f32)
        k_scale = arith.mulf(memref.load(c.ptr["kv_scale"], [irb.c(0)]), shift)
        c.v_scale = arith.mulf(k_scale, irb.cf(1.0 / fp8_wmma.P_SHIFT, f32)) if s.fp8_wmma else k_scale
    c.cexp = arith.mulf(arith.mulf(sc["scale"], k_scale), irb.cf(LOG2E, f32))   # exp2 factor of S
    c.copy_k = _plan(d, s, d.head_dim, False)
    c.copy_v = (kv_tiles.plan(BLOCK_N, d.head_dim_v, 2 * s.load_bits, s.threads, True, "fp8") if s.fp8_wmma else
                kv_tiles.plan(BLOCK_N, d.head_dim_v, s.load_bits, s.threads, True, d.dtype))   # LDS -> LDS
    return c


def _storage(d) -> str:
    return {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}.get(d.kv_dtype, d.kv_dtype)


def _plan(d, s, cols: int, transpose: bool) -> kv_tiles.TileCopy:
    """The copy plan of one tile's first `cols` latent columns (fp8: load_bits/8 bytes per load)."""
    if d.fp8:
        return kv_tiles.plan(BLOCK_N, cols, 2 * s.load_bits, s.threads, transpose, "fp8")
    return kv_tiles.plan(BLOCK_N, cols, s.load_bits, s.threads, transpose, d.kv_dtype)


def _row(c, r):
    """(query token, head) of packed row r, clamped to the last real row (padding rows)."""
    r = imin(r, irb.sub(c.nrows, 1))
    return irb.div(r, c.x["heads"]), irb.rem(r, c.x["heads"])


def _q_fragments(c) -> list:
    """This wave's Q^T B operands: latent columns [w D/W, (w+1) D/W) of the lane's packed row."""
    n, Q = ab.run_len(c.fam), c.ptr["Q"]
    i, h = _row(c, iadd(c.row0, irb.rem(c.lane, 16)))
    kw = c.d.head_dim // 16 // c.s.waves
    col = iadd(imul(c.wave, 16 * kw), ab.run_offset(c.fam, c.lane))
    off = Q.byte_offset(iadd(Q.row_base(c.b, i, h), col))
    return [Q.read_at(off, n, 16 * j) for j in range(kw)]


def _block_tensor(c, n0) -> GlobalTensor:
    """The cache rebased at the block holding key n0 (i64 offset: an id outside the cache
    addresses memory outside it, never wraps into it; one table read, uniform)."""
    ptr = c.ptr["KV_cache"]
    i = iadd(imul(c.b, c.x["bt_sb"]), irb.div(n0, c.d.block_size))
    blk = arith.index_cast(irb.index(), memref.load(c.ptr["block_table"], [i]))
    i64 = ir.IntegerType.get_signless(64)
    off = arith.muli(arith.index_cast(i64, blk), arith.index_cast(i64, ptr.strides[0]))
    off = arith.muli(off, arith.ConstantOp(i64, ptr.elem_bytes).result)
    return replace(ptr, ptr=saddr.offset_by_signed(ptr.ptr, off))


def _load(c, n0) -> list:
    """This thread's registers of the latent tile at key n0 as loaded (fp8: raw bytes, widened
    when stored, so the loads stay in flight across the previous tile's math); rows past the
    sequence end re-read row L - 1 (finite data the mask turns into P = 0)."""
    ptr = _block_tensor(c, n0)
    base = imul(irb.rem(n0, c.d.block_size), ptr.row_stride)
    offs = kv_tiles.lane_offsets(c.copy_k, ptr, c.tid, base, irb.sub(irb.sub(c.seq_k, 1), n0))
    return kv_tiles.load(c.copy_k, ptr, offs, irb.ci(0, 32))


def _v_from_lds(c) -> None:
    """LDS_V^T [Dv][16] from the first Dv columns of LDS_K (after the barrier that follows its
    store): the transposed copy plan's reads come from LDS instead of global memory, so the
    cache is read once per tile."""
    vals = kv_tiles.load_lds(c.copy_v, c.lds_k, c.tid)
    kv_tiles.store(c.copy_v, c.lds_v, c.tid, vals)


def _lds_value(d, v):
    """Loaded registers -> f16-declared vectors (bf16 bits reinterpreted, fp8 widened)."""
    n = ir.VectorType(v.type).shape[0]
    if d.fp8:
        words = vector.bitcast(irb.vec(n // 4, ab.i32_type()), v)
        halves = [h for j in range(n // 4) for h in fp8_widen.widen_words(d.kv_dtype, vector.extract(words, [], [j]))]
        v = vector.bitcast(irb.vec(n, ir.F16Type.get()), vector.from_elements(irb.vec(n // 2, ab.i32_type()), halves))
        if d.dtype == "f16":
            return v
        # bf16: the f32's high half, exact (fp8 values have at most 3 mantissa bits): no rounding code
        wide = arith.bitcast(irb.vec(n, ab.i32_type()), arith.extf(irb.vec(n, ir.F32Type.get()), v))
        halves = vector.bitcast(irb.vec(2 * n, ir.IntegerType.get_signless(16)), wide)
        return vector.bitcast(irb.vec(n, ir.F16Type.get()), vector.shuffle(halves, halves, [2 * i + 1 for i in range(n)]))
    if d.dtype == "f16":
        return v
    return vector.bitcast(irb.vec(n, ir.F16Type.get()), v)


def _operand(c, v):
    """An f16-declared LDS read as the directive's WMMA operand type."""
    if c.d.dtype == "f16":
        return v
    return vector.bitcast(irb.vec(ir.VectorType(v.type).shape[0], ir.BF16Type.get()), v)


def _tile_range(c):
    """[start, end) key offsets of this split: the sequence's 16-key tiles cut in split_kv
    nearly equal runs (whole tiles)."""
    tiles = irb.div(iadd(c.seq_k, BLOCK_N - 1), BLOCK_N)
    per = irb.div(iadd(tiles, c.s.split_kv - 1), c.s.split_kv)
    lo = imin(imul(c.split, per), tiles)
    hi = imin(iadd(lo, per), tiles)
    return imul(lo, BLOCK_N), imul(hi, BLOCK_N)


def _visible(c):
    """Keys the lane's query sees: L, or causal L - Sq + i + 1 (clamped at 0)."""
    if not c.d.causal:
        return c.seq_k
    i, _ = _row(c, iadd(c.row0, irb.rem(c.lane, 16)))
    lim = iadd(irb.sub(c.seq_k, c.x["seq_q"]), iadd(i, 1))
    return irb.imax(imin(lim, c.seq_k), irb.c(0))


def _main_loop(c):
    d, s = c.d, c.s
    f32 = ab.f32_type()
    dw = d.head_dim_v // 16 // s.waves
    o = [irb.zeros(irb.vec(8, f32)) for _ in range(dw)]
    m, l = irb.cf(softmax.NEG_INF, f32), irb.cf(0.0, f32)
    q = _q_fragments(c)
    c.c_row = c.cexp
    if s.fp8_wmma:
        q, s_q = fp8_native.quantize_q(c, q)
        c.c_row = arith.mulf(c.cexp, s_q)          # the lane's query row's scale (fp8_native.py)
    count = _visible(c)
    start, end = _tile_range(c)
    init = o + [m, l]
    run = scf.IfOp(irb.lt(start, end), [v.type for v in init], has_else=True)
    with ir.InsertionPoint(run.then_block):
        regs = _load(c, start)
        loop = scf.ForOp(start, end, irb.c(BLOCK_N), init + regs)
        with ir.InsertionPoint(loop.body):
            n0 = loop.induction_variable
            it = list(loop.inner_iter_args)
            o, m, l, tile = it[:dw], it[dw], it[dw + 1], it[len(init):]
            kv_tiles.store(c.copy_k, c.lds_k, c.tid, tile if s.fp8_wmma else [_lds_value(d, v) for v in tile])
            amdgpu.LDSBarrierOp()
            nxt = _load(c, imin(iadd(n0, BLOCK_N), irb.sub(end, BLOCK_N)))   # in flight across this tile's math
            (fp8_native.v_from_lds if s.fp8_wmma else _v_from_lds)(c)     # ordered by _scores' barrier
            s_t = _scores(c, q)
            s_t = softmax.mask_tile(s_t, iadd(n0, ab.acc_row0(c.lane)), count, 0)
            p, m, l, alpha = softmax.online_softmax(c.fam, [s_t], m, l, c.c_row)
            o = softmax.rescale(o, alpha)
            if s.fp8_wmma:
                o = fp8_native.pv(c, p[0], o)
            else:
                o = _pv(c, ab.p_operand(c.fam, ab.to_dtype(p[0], d.dtype), c.lane, full_exec=True), o)
            amdgpu.LDSBarrierOp()   # every wave is done with the tiles before they are rewritten
            scf.YieldOp(o + [m, l] + nxt)
        scf.YieldOp(list(loop.results)[:len(init)])
    with ir.InsertionPoint(run.else_block):
        scf.YieldOp(init)
    res = list(run.results)
    return res[:dw], res[dw], res[dw + 1]


def _scores(c, q):
    """S^T of the tile: this wave's partial over its D/W columns, exchanged through LDS_S and
    summed in wave order."""
    if c.s.fp8_wmma:
        acc = fp8_native.partial_scores(c, q)
    else:
        fam, n = c.fam, ab.run_len(c.fam)
        row = ab.a_row(fam, c.lane)
        col = iadd(imul(c.wave, 16 * len(q)), ab.run_offset(fam, c.lane))
        acc = irb.zeros(irb.vec(8, ab.f32_type()))
        for j in range(len(q)):
            a = _operand(c, vector.load(irb.vec(n, ir.F16Type.get()), c.lds_k, [row, iadd(col, 16 * j)]))
            acc = ab.wmma(a, q[j], acc)
    vector.store(acc, c.lds_s, [iadd(imul(c.wave, 32), c.lane), irb.c(0)])
    amdgpu.LDSBarrierOp()
    total = None
    for w in range(c.s.waves):
        part = vector.load(irb.vec(8, ab.f32_type()), c.lds_s, [iadd(irb.c(32 * w), c.lane), irb.c(0)])
        total = part if total is None else arith.addf(total, part)
    return total


def _pv(c, p_op, o):
    """O^T[dt] += V^T[this wave's rows dt] @ P^T."""
    fam, n = c.fam, ab.run_len(c.fam)
    dw = len(o)
    row = iadd(ab.a_row(fam, c.lane), imul(c.wave, 16 * dw))
    col = ab.run_offset(fam, c.lane)
    out = []
    for dt in range(dw):
        a = _operand(c, vector.load(irb.vec(n, ir.F16Type.get()), c.lds_v, [iadd(row, 16 * dt), col]))
        out.append(ab.wmma(a, p_op, o[dt]))
    return out


def _epilogue(c, o, m, l) -> None:
    """This split's O^T columns (f32, divided by l, times the fp8 scale) and LSE (wave 0)."""
    inv, lse = softmax.finish(m, l)       # full exec: before the per-row branch
    inv = arith.mulf(inv, c.v_scale)
    r = iadd(c.row0, irb.rem(c.lane, 16))
    dw = len(o)
    st = scf.IfOp(irb.lt(r, c.nrows))
    with ir.InsertionPoint(st.then_block):
        i, h = irb.div(r, c.x["heads"]), irb.rem(r, c.x["heads"])
        row = iadd(imul(c.b, c.x["seq_q"]), i)
        hr = iadd(imul(iadd(imul(c.split, c.x["heads"]), h), c.x["rows"]), row)
        base = iadd(imul(hr, c.d.head_dim_v), iadd(ab.acc_row0(c.lane), imul(c.wave, 16 * dw)))
        for dt, acc in enumerate(o):
            vector.store(arith.mulf(acc, ab.splat(inv, 8)), c.ptr["O_part"], [iadd(base, 16 * dt)])
        first = scf.IfOp(irb.land(irb.lt(c.lane, 16), irb.lt(c.wave, 1)))
        with ir.InsertionPoint(first.then_block):
            memref.store(lse, c.ptr["LSE_part"], [hr])
            scf.YieldOp([])
        scf.YieldOp([])
