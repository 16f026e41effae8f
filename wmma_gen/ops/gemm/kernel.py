"""wmma_gemm kernel builder: GemmDirective + Schedule + Target -> MLIR GPU-dialect module.

One workgroup computes a BLOCK_M x BLOCK_N tile of C for one batch entry; each of its
WAVES_M x WAVES_N waves owns FM x FN 16x16 WMMA tiles:

    acc[FM][FN] = 0
    stage tile k=0 into LDS (buffer 0)                # double buffering only
    for k0 in range(0, K, BLOCK_K):                   # scf.for, iter_args = acc
        prefetch tile k0+BLOCK_K from global          # double buffering: overlaps compute
        for kk in range(0, BLOCK_K, INSTR_K):         # unrolled
            a[i] = A fragment (LDS or global)         # fragments.py
            b[j] = B fragment (LDS or global)
            acc[i][j] += a[i] @ b[j]                  # amdgpu.wmma
        write the prefetched tile to the other LDS buffer; barrier
    C = act(alpha * acc + beta * C0 + bias)           # epilogue.py, predicated at edges

Sizes are run time: M, N, K, the batch and every operand's outer strides are i32 kernel
arguments (`signature` declares them), so one code object serves every problem with the
same specialization key (`GemmKey`: which of M/N/K are tile multiples, and the alignment of
each operand's rows). Partial tiles read zeros outside the matrix (globalmem.py) and skip
their out-of-range stores, in-kernel; a key with full tiles builds the mask-free loop.
A, B and C are addressed as a uniform SGPR base (batch, tile origin) plus a loop-invariant
32-bit per-lane VGPR offset that the K step advances (globalmem.py, FLAT-global SADDR form):
no 64-bit per-lane address arithmetic, in the loop or in the epilogue.
Phases below: `tile_origin`, `main_loop`, `compute_tile`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler.mlir_api import gpu_ops as gpu, ir, scf
from ...kernels import irb
from ...kernels.fragments import load_fragment_global, load_fragment_lds, storage_elems, wmma
from ...kernels.saddr import pointer_type as global_pointer_type
from ...kernels.global_tensor import GlobalTensor, Pos
from ...kernels.module import gpu_module_text, kernel_func
from ...kernels.signature import KernelSource
from ...kernels.staging.gemm_tiles import TilePlan, load_tile, plan_tile, store_tile
from ...kernels.views import as_index, i32, pointer_type, strided_view
from ...targets import Target
from .directive import GemmDirective
from .epilogue import store_tile_results
from .defaults import sched_strategy
from .schedule import Schedule
from .signature import GemmKey, buffer_args, gemm_signature, scalar_args
from .splitk import arrived_last, reduce_and_store, write_partials


OPERANDS = ("A", "B", "C")   # buffers accessed by globalmem (SGPR base + 32-bit lane offsets)


def build_gemm(d: GemmDirective, s: Schedule, t: Target, key: GemmKey, name: str = "wmma_gemm") -> KernelSource:
    """The kernel for every problem with specialization key `key` (the directive holds no
    sizes: they are kernel arguments)."""
    s.validate_kernel(d, t)
    text = gpu_module_text(name, t.arch, lambda: _kernel(d, s, t, key, name),
                           location=f"wmma_gemm {d.dtype}/{d.acc} {d.layout} {t.arch}")
    return KernelSource(name, text, t.arch, gemm_signature(d, s, name))


@dataclass(frozen=True)
class Ctx:
    """Values every phase reads: operands, LDS tiles, ids, run-time sizes and schedule facts."""
    d: GemmDirective
    s: Schedule
    t: Target
    key: GemmKey
    A: GlobalTensor
    B: GlobalTensor
    lds_a: object
    lds_b: object
    plan_a: TilePlan | None
    plan_b: TilePlan | None
    tid: object
    lane: object
    batch: object
    tile_m0: object
    tile_n0: object
    wave_m0: object  # wave's first row inside the tile
    wave_n0: object
    M: object        # run-time sizes (index values)
    N: object
    k_tiles: object  # K tiles this workgroup accumulates (index value)
    k_base: object = None  # first K of this workgroup's split (split-K), else None


def _cdiv(a, b: int):
    return irb.div(irb.add(a, b - 1), b)


def _lds_type(d: GemmDirective, s: Schedule, outer: int) -> ir.MemRefType:
    cols = storage_elems(d.dtype, s.block_k + s.lds_pad)
    return ir.MemRefType.get([s.buffers, outer, cols], irb.storage_type(d.dtype),
                             memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))


def _kernel(d: GemmDirective, s: Schedule, t: Target, key: GemmKey, name: str) -> None:
    buffers, scalars = buffer_args(d, s), scalar_args(d)
    # A, B and C are raw global pointers accessed in the SGPR-base form (globalmem.py);
    # the other buffers are bare-pointer memrefs viewed with run-time strides (views.py)
    arg_types = [global_pointer_type() if n in OPERANDS else pointer_type(dt) for n, dt in buffers] + \
        [i32() for _ in scalars]
    lds_types = ([_lds_type(d, s, s.block_m)] if "a" in s.lds else []) + \
                ([_lds_type(d, s, s.block_n)] if "b" in s.lds else []) + \
                ([ir.MemRefType.get([1], irb.storage_type("i32"), memory_space=ir.Attribute.parse(
                    "#gpu.address_space<workgroup>"))] if s.split_k > 1 else [])
    block = kernel_func(name, arg_types, s.threads, lds_types, sched_strategy(d, s, t, key) or "")
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        names = [n for n, _ in buffers] + list(scalars)
        raw = dict(zip(names, args))
        lds = args[len(names):]
        lds_a = lds.pop(0) if "a" in s.lds else None
        lds_b = lds.pop(0) if "b" in s.lds else None
        val = _views(d, s, {n: raw[n] for n, _ in buffers}, {n: as_index(raw[n]) for n in scalars})
        ctx = _context(d, s, t, key, val, lds_a, lds_b)
        accs = main_loop(ctx)
        row0, col0 = Pos(ctx.tile_m0, ctx.wave_m0), Pos(ctx.tile_n0, ctx.wave_n0)
        bounds = (ctx.M if not key.m_full else None, ctx.N if not key.n_full else None)
        if s.split_k == 1:
            store_tile_results(d, t.family, val["C"], val.get("C0"), val.get("bias"), ctx.batch,
                               row0, col0, ctx.lane, accs, s.frags_m, s.frags_n, *bounds)
        else:
            split = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
            tile = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
            write_partials(d, t.family, val["workspace"], split, ctx.batch, row0, col0, ctx.lane, accs,
                           s.frags_m, s.frags_n, *bounds)
            last = arrived_last(val["counters"], lds.pop(0), ctx.batch, tile, ctx.tid, s.split_k)
            reduce_and_store(d, t.family, s.split_k, val["workspace"], val["C"], val.get("C0"), val.get("bias"),
                             val["counters"], ctx.batch, tile, ctx.tid, row0, col0, ctx.lane, accs,
                             s.frags_m, s.frags_n, *bounds, last)
        gpu.ReturnOp([])


def _views(d: GemmDirective, s: Schedule, ptr: dict, x: dict) -> dict:
    """Every buffer argument as a strided memref view with run-time sizes (views.py)."""
    M, N, batch = x["M"], x["N"], x["batch"]
    out = {"sizes": x}
    for name in ("A", "B"):  # pointers + strides, made GlobalTensor in _stored
        out[name] = (ptr[name], x[f"{name.lower()}_sb"], x[f"{name.lower()}_sr"])
    # offsets of wider outputs are bounded by the legality schedule.output_offsets
    out["C"] = GlobalTensor(ptr["C"], d.out_dtype, (x["c_sb"], x["c_sr"]), (M, N), offsets_checked=True)
    if "C0" in ptr:
        out["C0"] = strided_view(ptr["C0"], d.out_dtype, [batch, M, N], [x["c0_sb"], x["c0_sr"]])
    if "bias" in ptr:
        out["bias"] = strided_view(ptr["bias"], "f32", [N if d.bias == "n" else M], [])
    if "workspace" in ptr:  # contiguous [split][batch][M][N] and [batch][tiles]
        mn = irb.mul(M, N)
        out["workspace"] = strided_view(ptr["workspace"], "i32" if d.is_int else "f32",
                                        [irb.c(s.split_k), batch, M, N], [irb.mul(batch, mn), mn, N])
        tiles = irb.mul(_cdiv(M, s.block_m), _cdiv(N, s.block_n))
        out["counters"] = strided_view(ptr["counters"], "i32", [batch, tiles], [tiles])
    return out


def _stored_rows_cols(d: GemmDirective, which: str, M, N, K):
    """(rows, cols) of the stored operand in storage elements (i4 cols are bytes)."""
    rows, cols = {"a": (M, K), "b": (K, N)}[which]
    if (which == "a" and d.trans_a) or (which == "b" and d.trans_b):
        rows, cols = cols, rows
    return rows, irb.div(cols, 2) if d.dtype == "i4" else cols


def _stored(d: GemmDirective, key: GemmKey, which: str, arg, sizes: dict) -> GlobalTensor:
    rows, cols = _stored_rows_cols(d, which, sizes["M"], sizes["N"], sizes["K"])
    ptr, sb, sr = arg
    guard_outer = not (key.m_full if which == "a" else key.n_full)
    guard_k = not key.k_full   # a partial last K tile, or split-K rounding the tiles up
    k_contig = k_contiguous(d, which)
    guards = (guard_k, guard_outer) if not k_contig else (guard_outer, guard_k)   # (rows, cols)
    return GlobalTensor(ptr, d.dtype, (sb, sr), (rows, cols), guards,
                        align=key.align_a if which == "a" else key.align_b)


def k_contiguous(d: GemmDirective, which: str) -> bool:
    return not d.trans_a if which == "a" else d.trans_b


def _context(d, s, t, key, val, lds_a, lds_b) -> Ctx:
    sizes = val["sizes"]
    A, B = _stored(d, key, "a", val["A"], sizes), _stored(d, key, "b", val["B"], sizes)
    tid = gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    lane, wave = irb.rem(tid, 32), irb.div(tid, 32)
    batch = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim z>")).result
    tile_m0, tile_n0 = tile_origin(s, sizes["M"], sizes["N"])
    wave_m, wave_n = irb.rem(wave, s.waves_m), irb.div(wave, s.waves_m)
    kst = storage_elems(d.dtype, s.block_k)
    k_tiles = _cdiv(_cdiv(sizes["K"], s.block_k), s.split_k) if s.split_k > 1 else _cdiv(sizes["K"], s.block_k)

    def plan(x: GlobalTensor, which: str, outer: int):
        if k_contiguous(d, which):
            return plan_tile(x, False, outer, kst, s.load_bits, s.threads)
        return plan_tile(x, True, s.block_k, outer, s.load_bits, s.threads, s.lds_store_bits)
    return Ctx(d, s, t, key, A, B, lds_a, lds_b,
               plan(A, "a", s.block_m) if lds_a is not None else None,
               plan(B, "b", s.block_n) if lds_b is not None else None,
               tid, lane, batch, tile_m0, tile_n0,
               irb.mul(wave_m, 16 * s.frags_m), irb.mul(wave_n, 16 * s.frags_n),
               sizes["M"], sizes["N"], k_tiles, _split_k_base(s, k_tiles))


def _split_k_base(s: Schedule, k_tiles):
    if s.split_k == 1:
        return None
    split = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim y>")).result
    return irb.mul(irb.mul(split, k_tiles), s.block_k)


def _k(c: "Ctx", k0: Pos) -> Pos:
    """Global K position of local depth k0 (offset by this workgroup's split: uniform)."""
    return Pos(c.k_base, None, k0.const, k0.step)


def tile_origin(s: Schedule, M, N):
    """First row and column of this workgroup's tile, from its id in raster order."""
    tiles_m, tiles_n = _cdiv(M, s.block_m), _cdiv(N, s.block_n)
    pid = gpu.BlockIdOp(ir.Attribute.parse("#gpu<dim x>")).result
    if s.raster == "row":
        tm, tn = irb.div(pid, tiles_n), irb.rem(pid, tiles_n)
    elif s.raster == "col":
        tm, tn = irb.rem(pid, tiles_m), irb.div(pid, tiles_m)
    else:  # grouped: group_m rows of tiles walked column by column, for L2 reuse
        per_group = irb.mul(tiles_n, s.group_m)
        first_m = irb.mul(irb.div(pid, per_group), s.group_m)
        size = irb.minu(irb.sub(tiles_m, first_m), s.group_m)
        in_group = irb.rem(pid, per_group)
        # the divisions by the run-time `size` lower to VALU: read the results back as uniform
        tm, tn = irb.uniform(irb.add(first_m, irb.rem(in_group, size))), irb.uniform(irb.div(in_group, size))
    return irb.mul(tm, s.block_m), irb.mul(tn, s.block_n)


# --- main loop -------------------------------------------------------------------------

def _tile_coords(c: Ctx, which: str, k0: Pos):
    """Stored (row0, col0) of the operand tile at depth k0, as uniform positions."""
    outer0 = Pos(c.tile_m0 if which == "a" else c.tile_n0)
    k = _k(c, k0)
    if k_contiguous(c.d, which):
        return outer0, (k.half() if c.d.dtype == "i4" else k)
    return k, outer0


def stage_load(c: Ctx, k0: Pos) -> list:
    """Global reads of the A/B tiles at depth k0 that are staged through LDS."""
    out = []
    for which, p in (("a", c.plan_a), ("b", c.plan_b)):
        if p is not None:
            out.append(load_tile(p, c.batch, *_tile_coords(c, which, k0), c.tid))
    return out


def stage_store(c: Ctx, vals: list, buf) -> None:
    plans = [(p, lds) for p, lds in ((c.plan_a, c.lds_a), (c.plan_b, c.lds_b)) if p is not None]
    for (p, lds), v in zip(plans, vals):
        store_tile(p, lds, buf, c.tid, v)


def compute_tile(c: Ctx, k0: Pos, buf, accs: list) -> list:
    """acc += A[:, k0:k0+BK] @ B[k0:k0+BK, :] for this wave, INSTR_K at a time."""
    d, s, t = c.d, c.s, c.t
    ins = t.instr(d.dtype, d.acc)
    for kk in range(0, s.block_k, ins.k):
        a = [_fragment(c, "a", 16 * i, k0, kk, buf) for i in range(s.frags_m)]
        b = [_fragment(c, "b", 16 * j, k0, kk, buf) for j in range(s.frags_n)]
        accs = [wmma(a[i], b[j], accs[i * s.frags_n + j], ins.k, d.unsigned)
                for i in range(s.frags_m) for j in range(s.frags_n)]
    return accs


def _fragment(c: Ctx, which: str, off: int, k0: Pos, kk: int, buf):
    lds = c.lds_a if which == "a" else c.lds_b
    wave0 = c.wave_m0 if which == "a" else c.wave_n0
    if lds is not None:  # LDS tiles are indexed inside the tile
        return load_fragment_lds(lds, c.d.dtype, c.t.family, buf, irb.add(wave0, off), irb.c(kk), c.lane)
    x = c.A if which == "a" else c.B
    tile0 = c.tile_m0 if which == "a" else c.tile_n0
    # tile origin and K step are uniform (SGPR base), the wave's rows per lane (VGPR offset)
    return load_fragment_global(x, k_contiguous(c.d, which), c.t.family, c.batch,
                                Pos(tile0, wave0, off), _k(c, k0).plus(kk), c.lane, c.s.load_bits)


def main_loop(c: Ctx) -> list:
    d, s, t = c.d, c.s, c.t
    ins = t.instr(d.dtype, d.acc)
    acc_t = irb.vec(ins.c_elems, irb.storage_type(d.acc))
    accs = [irb.zeros(acc_t) for _ in range(s.frags_m * s.frags_n)]
    if s.lds != "none" and s.buffers == 2:
        return _double_buffered(c, accs)
    return _single_pass(c, accs)


def _loop(first_tile: int, tiles, rem: int, unroll: int, accs: list, body) -> list:
    """Run body(k0, tile, accs) for `tiles` (run time) K tiles from `first_tile`: an
    scf.for over groups of `unroll` tiles, then `rem` = tiles % unroll remaining tiles
    (static: the key knows the parity of the tile count). `tile` is a static int with the
    parity of the real tile index (unroll is 1 or 2), which is all the LDS buffer choice
    needs. k0 is a Pos: the loop counter (step) plus the unrolled tile's constant depth."""
    bk = body.block_k
    start = irb.c(first_tile * bk)
    end = irb.add(start, irb.mul(irb.sub(tiles, rem) if rem else tiles, bk))
    loop = scf.ForOp(start, end, irb.c(unroll * bk), accs)
    irb.keep_unroll(loop)
    with ir.InsertionPoint(loop.body):
        out = list(loop.inner_iter_args)
        for u in range(unroll):
            out = body(Pos(step=loop.induction_variable, const=u * bk), first_tile + u, out)
        scf.YieldOp(out)
    accs = list(loop.results)
    for r in range(rem):
        accs = body(Pos(step=end, const=r * bk), first_tile + r, accs)
    return accs


class _Body:
    """One main-loop step; `tile` is static when it decides the LDS buffer (unroll makes
    tile parity static, so buffer offsets fold into ds_load/ds_store immediates)."""

    def __init__(self, c: Ctx, prefetch: bool):
        self.c, self.prefetch, self.block_k = c, prefetch, c.s.block_k

    def __call__(self, k0, tile: int, accs: list) -> list:
        c = self.c
        if not self.prefetch:  # single buffer (or no LDS): stage, sync, compute, sync
            buf = irb.c(0)
            if c.s.lds != "none":
                stage_store(c, stage_load(c, k0), buf)
                gpu.BarrierOp()
            accs = compute_tile(c, k0, buf, accs)
            if c.s.lds != "none":
                gpu.BarrierOp()  # the next step overwrites the tile
            return accs
        if c.s.k_unroll > 1:
            cur, nxt = irb.c(tile % 2), irb.c(1 - tile % 2)
        else:  # tile parity only known at run time
            cur = irb.rem(irb.div(k0.total(), c.s.block_k), 2)
            nxt = irb.sub(irb.c(1), cur)
        vals = stage_load(c, k0.plus(c.s.block_k))  # prefetch overlaps the WMMAs
        # Keep the prefetch loads above the WMMAs: under register pressure the machine
        # scheduler otherwise sinks each load next to its LDS store and serialises them.
        irb.sched_barrier("none")
        accs = compute_tile(c, k0, cur, accs)
        stage_store(c, vals, nxt)
        gpu.BarrierOp()
        return accs


def _single_pass(c: Ctx, accs: list) -> list:
    rem = int(c.key.k_tiles_odd) if c.s.k_unroll == 2 else 0
    return _loop(0, c.k_tiles, rem, c.s.k_unroll, accs, _Body(c, prefetch=False))


def _double_buffered(c: Ctx, accs: list) -> list:
    """Stage tile 0; loop over tiles 0..nk-2 prefetching the next; compute the last. The key
    gives nk's parity, so the last tile's LDS buffer and the unroll remainder are static."""
    nk, odd = c.k_tiles, c.key.k_tiles_odd
    stage_store(c, stage_load(c, Pos()), irb.c(0))
    gpu.BarrierOp()
    rem = (0 if odd else 1) if c.s.k_unroll == 2 else 0     # (nk - 1) % 2
    accs = _loop(0, irb.sub(nk, 1), rem, c.s.k_unroll, accs, _Body(c, prefetch=True))
    last = irb.sub(nk, 1)
    accs = compute_tile(c, Pos(step=irb.mul(last, c.s.block_k)), irb.c(0 if odd else 1), accs)
    # Under iterative-ilp no barrier before the epilogue: it interleaves the C stores with the
    # last WMMAs (gfx1201 16-bit, f32 acc: 0 spills instead of 4-12, and a hazard v_nop LLVM
    # inserts there, which the emulator decodes -- tests/emu/test_decode_v_nop.py). Under the
    # default strategy the barrier stays: without it the guarded epilogue of gfx11 16-bit TT at
    # 1000^3 spilled 16 VGPRs (mlir-gml; 209 VGPRs with it, compiler output)
    if sched_strategy(c.d, c.s, c.t, c.key) != "iterative-ilp":
        irb.sched_barrier("none")
    return accs
