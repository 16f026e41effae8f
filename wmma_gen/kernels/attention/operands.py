"""WMMA operands of the forward kernel (kernel.py): Q^T fragments (kept in registers, or staged
in LDS and re-read per tile), the K and V^T A fragments read from the LDS tiles, and the two
products of a key tile, S^T = K Q^T and O^T += V^T P^T (attention_blocks: the swap-A/B layout).

LDS tiles are declared f16; bf16 operands are the same bits (`_as`, `lds_half`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import amdgpu_ops as amdgpu
from ...compiler.mlir_api import scf, vector

from ...kernels import attention_blocks as ab
from ...kernels import attention_dsplit as dsplit
from ...kernels import irb
from ...kernels.attention_blocks import iadd, imin, imul
from ..staging import kv_tiles

if TYPE_CHECKING:
    from .context import AttentionCtx, Ctx


def q_fragments(c: "Ctx") -> list:
    """Q^T B operands [f][kd] from global memory (rows past the sequence end clamped); the
    head-dim runs of a row are immediate offsets of one lane address."""
    fam, n, Q = c.fam, ab.run_len(c.fam), c.ptr["Q"]
    last = irb.sub(c.seq_q, 1)
    nk, dcol = c.d_slice()
    out = []
    for f in range(c.s.frags_q):
        row = imin(c.query(f), last)
        if dcol is None:
            off = Q.byte_offset(iadd(c.q_base, iadd(imul(row, Q.row_stride), ab.run_offset(fam, c.lane))))
            out.append([Q.read_at(off, n, 16 * kd) for kd in range(nk)])
            continue
        frags = []
        for kd in range(nk):
            col = _d_col(c, dcol, kd)      # tiles past D (last slice) read D's last tile, unused
            off = Q.byte_offset(iadd(c.q_base, iadd(imul(row, Q.row_stride), iadd(ab.run_offset(fam, c.lane), col))))
            frags.append(Q.read_at(off, n, 0))
        out.append(frags)
    return out


def _d_col(c: "AttentionCtx", dcol, kd: int):
    """First column of tile kd of the wave's head-dim slice, clamped to D's last tile where the
    slice may run past D (d_tile_inside: those tiles' values are never used)."""
    col = iadd(dcol, 16 * kd)
    return col if c.d_tile_inside(kd) is None else imin(col, c.d.head_dim - 16)


def _guarded(cond, vals: list, body) -> list:
    """body(vals) -> new vals when the wave-uniform `cond` holds, else vals unchanged (scf.if)."""
    sel = scf.IfOp(cond, [v.type for v in vals], has_else=True)
    with ir.InsertionPoint(sel.then_block):
        scf.YieldOp(body(list(vals)))
    with ir.InsertionPoint(sel.else_block):
        scf.YieldOp(list(vals))
    return list(sel.results)


def scores(c: "AttentionCtx", q, buf=0) -> list:
    """S^T[f][kt] = K[kt] @ Q^T[f] for the tile in LDS_K (rows from `buf`: kv_buffers=2)."""
    fam, n = c.fam, ab.run_len(c.fam)
    acc = [[irb.zeros(irb.vec(8, ab.f32_type())) for _ in range(c.s.block_n // 16)] for _ in range(c.s.frags_q)]
    row, col = ab.a_row(fam, c.lane), ab.run_offset(fam, c.lane)
    nk, dcol = c.d_slice()
    if dcol is not None:
        col = iadd(col, dcol)
    plain = [kd for kd in range(nk) if c.d_split_guard_free(kd)] if dcol is not None else range(nk)
    for kt in range(c.s.block_n // 16):
        for kd in plain:
            a = vector.load(irb.vec(n, ir.F16Type.get()), c.lds_k, [iadd(iadd(row, buf), 16 * kt), iadd(col, 16 * kd)])
            a = _as(a, c.d.dtype)
            for f in range(c.s.frags_q):
                acc[f][kt] = ab.wmma(a, q[f][kd], acc[f][kt])
    for kd in (k for k in range(nk) if k not in plain):     # the last slice's tiles that may run past D
        def body(vals, kd=kd):
            got = [vals[i * len(acc[0]):(i + 1) * len(acc[0])] for i in range(len(acc))]
            for kt in range(c.s.block_n // 16):
                a = _as(vector.load(irb.vec(n, ir.F16Type.get()), c.lds_k,
                                    [iadd(iadd(row, buf), 16 * kt), iadd(col, 16 * kd)]), c.d.dtype)
                for f in range(c.s.frags_q):
                    got[f][kt] = ab.wmma(a, q[f][kd], got[f][kt])
            return [x for r in got for x in r]
        flat = _guarded(c.d_tile_inside(kd), [x for r in acc for x in r], body)
        acc = [flat[i * len(acc[0]):(i + 1) * len(acc[0])] for i in range(len(acc))]
    return acc


def _as(v, dtype: str):
    """LDS tiles are declared f16; reinterpret the bits as bf16 operands when needed."""
    if dtype == "f16":
        return v
    n = ir.VectorType(v.type).shape[0]
    return vector.bitcast(irb.vec(n, ir.BF16Type.get()), v)


def lds_half(dtype: str, vals: list) -> list:
    """Registers headed for an f16-declared LDS tile (bf16 bits reinterpreted)."""
    if dtype == "f16":
        return vals
    return [vector.bitcast(irb.vec(ir.VectorType(v.type).shape[0], ir.F16Type.get()), v) for v in vals]


def pv(c: "AttentionCtx", p_ops: list, o: list, buf=0) -> list:
    """O^T[f][dt] += V^T[dt][kt] @ P^T[f][kt] for the tile in LDS_V (rows from `buf`)."""
    fam, n = c.fam, ab.run_len(c.fam)
    row, col = ab.a_row(fam, c.lane), ab.run_offset(fam, c.lane)
    dts, dcol = c.d_slice()
    if dcol is not None:
        row = iadd(row, dcol)
    o = [list(x) for x in o]

    def tile(dt, o_dt):
        for kt in range(c.s.block_n // 16):
            a = _as(vector.load(irb.vec(n, ir.F16Type.get()), c.lds_v,
                                [iadd(iadd(row, buf), 16 * dt), iadd(col, 16 * kt)]), c.d.dtype)
            for f in range(c.s.frags_q):
                o_dt[f] = ab.wmma(a, p_ops[f][kt], o_dt[f])
        return o_dt
    for dt in range(dts):
        cond = None if dcol is None or c.d_split_guard_free(dt) else c.d_tile_inside(dt)
        new = tile(dt, [o[f][dt] for f in range(c.s.frags_q)]) if cond is None else \
            _guarded(cond, [o[f][dt] for f in range(c.s.frags_q)], lambda v, dt=dt: tile(dt, v))
        for f in range(c.s.frags_q):
            o[f][dt] = new[f]
    return o


def q_lds_fill(c: "Ctx") -> None:
    p = kv_tiles.plan(c.s.block_m, c.d.head_dim, c.s.load_bits, c.s.threads, False, c.d.dtype)
    Q = c.ptr["Q"]
    base = iadd(c.q_base, imul(c.q0, Q.row_stride))
    offs = kv_tiles.lane_offsets(p, Q, c.tid, base, irb.sub(irb.sub(c.seq_q, 1), c.q0))
    vals = kv_tiles.load(p, c.ptr["Q"], offs, irb.ci(0, 32))
    kv_tiles.store(p, c.lds_q, c.tid, lds_half(c.d.dtype, vals))
    amdgpu.LDSBarrierOp()


def q_from_lds(c: "AttentionCtx") -> list:
    fam, n = c.fam, ab.run_len(c.fam)
    col = ab.run_offset(fam, c.lane)
    nk, dcol = c.d_slice()
    if dcol is None:
        row0 = iadd(imul(c.wave, 16 * c.s.frags_q), irb.rem(c.lane, 16))
        return [[_as(vector.load(irb.vec(n, ir.F16Type.get()), c.lds_q, [iadd(row0, 16 * f), iadd(col, 16 * kd)]),
                     c.d.dtype) for kd in range(nk)] for f in range(c.s.frags_q)]
    qw = dsplit.slice_index(c.wave, c.s.q_waves)[0]
    row0 = iadd(imul(qw, 16 * c.s.frags_q), irb.rem(c.lane, 16))
    return [[_as(vector.load(irb.vec(n, ir.F16Type.get()), c.lds_q, [iadd(row0, 16 * f), iadd(col, _d_col(c, dcol, kd))]),
                 c.d.dtype) for kd in range(nk)] for f in range(c.s.frags_q)]
