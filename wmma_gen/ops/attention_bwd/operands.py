"""WMMA operands of the backward: LDS fragment reads, the softmax recomputation
P = exp2(S * scale*log2e - LSE*log2e), dS = P * (dP - Di) (with softcap c: t = tanh(S*scale/c),
P = exp2(t * c*log2e - LSE*log2e), dS = P * (dP - Di) * (1 - t^2)), the conversion of an f32
accumulator tile into the 16-bit B operand of the next WMMA, and the output stores.

Accumulator -> B operand (see blocks.py, "query-slot order"): B lane l holds column l%16
and its K elements in the order of layouts.b_coord.
  gfx12: element i of lane l is K slot 8*(l//16) + i -- the order the project loads for A
         and B alike (kernels/fragments.lane_run) -- which is exactly accumulator value i
         of lane l: the tile converts in place (v_cvt only).
  gfx11: all 16 K slots in every lane (lanes 16-31 repeat 0-15; RDNA3 ISA 7.9). Lane l has
         slots 8*(l//16)+v; the other 8 live in lane l^16, fetched with v_permlanex16_b32
         (RDNA3 ISA 16.x, VOP3 "V_PERMLANEX16_B32": lane l of one row reads lane sel(l) of
         the other row; sel = identity) on the packed 16-bit values: 4 permlanes + 8 selects
         per tile.
"""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import rocdl_ops as rocdl
from ...compiler.mlir_api import arith, math, vector

from ...kernels import irb
from ... import layouts
from ...kernels.fragments import acc_coords, as_wmma_operand, load_fragment_lds, wmma
from ...kernels.lanes import lane_run
from ...kernels.softcap import tanh_of_scaled
from .blocks import LOG2E, Shifted, Tensor, i32, if_then


def f32():
    return ir.F32Type.get()


class GlobalRows:
    """A natural row tile read by each wave straight from global memory (schedule
    operands="global": head dims above 256, where the natural LDS tiles do not fit 64 KiB):
    rows row0 .. of one head of `t`, rows >= nvalid read as zeros like staging.rows."""

    def __init__(self, t: Tensor, b, h, seq_row0, row0, nvalid):
        self.t, self.base, self.row0, self.nvalid = t, t.row_base(b, irb.add(seq_row0, row0), h), row0, nvalid

    def fragment(self, dtype: str, family: str, outer, k0, lane):
        n = layouts.ab_elements(family)
        row, k = lane_run(family, lane, outer, k0)
        ok = irb.lt(irb.add(self.row0, row), self.nvalid)
        off = irb.add(irb.mul(irb.select(ok, row, irb.c(0)), self.t.strides[1]), k)
        v = irb.select(ok, self.t.read(self.base, off, n), irb.zeros(irb.vec(n, irb.storage_type(dtype))))
        return as_wmma_operand(v, dtype, n)


def opaque_uniform(v):
    """v (a wave-uniform index) through an `s_mov_b32` with side effects: loads addressed from the
    copy stay where it stands. GlobalRows of the dK/dV kernel's key tile are the same for every
    query tile, and LLVM's LICM would otherwise hoist all D/16 K and V fragments (2 x D/2 VGPRs)
    out of the query-tile loop (LLVM LangRef, "Inline Assembler Expressions": `sideeffect`)."""
    from ...compiler.mlir_api import llvm_ops as llvm
    x = arith.index_cast(i32(), v)
    y = llvm.InlineAsmOp(i32(), [x], "s_mov_b32 $0, $1", "=s,s", has_side_effects=True).result
    return arith.index_cast(irb.index(), y)


def frag(lds, dtype: str, family: str, outer: int | object, k0: int, lane):
    """A (rows = outer) or B (columns = outer) fragment of a [1][outer][k] LDS tile (or of a
    GlobalRows tile)."""
    o = irb.c(outer) if isinstance(outer, int) else outer
    if isinstance(lds, GlobalRows):
        return lds.fragment(dtype, family, o, irb.c(k0), lane)
    return load_fragment_lds(lds, dtype, family, irb.c(0), o, irb.c(k0), lane)


def mma(a, b, acc):
    """acc += A @ B (16x16x16, f32 accumulate)."""
    return wmma(a, b, acc, 16, False)


def zero_acc():
    return irb.zeros(irb.vec(8, f32()))


def splat(x, n: int = 8):
    return vector.broadcast(irb.vec(n, x.type), x)


def softmax_grad(s, dp, neg_lse2, di, scale_log2e, mask, cap=None):
    """P = exp2(S*scale*log2e - LSE*log2e) (0 where mask is False) and dS = P (dP - Di), on
    8-value accumulator vectors; neg_lse2/di are per-value vectors or splats. cap = (scale / c,
    c * log2e) applies the softcap c: the capped logit is c*t with t = tanh(S*scale/c), and dS
    (the gradient of the scaled, uncapped logit) gains the factor d(c t)/d(S scale) = 1 - t^2."""
    if cap is None:
        x = math.fma(s, splat(scale_log2e), neg_lse2)
    else:
        t = tanh_of_scaled(s, cap[0], fast_rcp=True)
        x = math.fma(t, splat(cap[1]), neg_lse2)
    p = vector.from_elements(irb.vec(8, f32()), [rocdl.exp2(f32(), vector.extract(x, [], [v])) for v in range(8)])
    if mask is not None:
        p = arith.select(mask, p, zero_acc())
    ds = arith.mulf(p, arith.subf(dp, di))
    if cap is not None:
        ds = arith.mulf(ds, arith.subf(splat(irb.cf(1.0, f32())), arith.mulf(t, t)))
    return p, ds


def cap_factors(vals):
    """(scale / c, c * log2e) of softmax_grad from the kernel's scale and softcap arguments."""
    cap = vals["softcap"]
    return arith.divf(vals["scale"], cap), arith.mulf(cap, irb.cf(LOG2E, f32()))


def element_mask(family: str, lane, vis, seq, stream0, fixed, stream_is_row: bool):
    """vector<8xi1>: visibility of each accumulator value. Rows of the tile are the stream
    axis (queries in dK/dV, keys in dQ) starting at stream0; the lane's column is `fixed`
    (a key resp. query index, already including the lane)."""
    bits = []
    for v in range(8):
        row, _ = acc_coords(family, lane, v)
        s = irb.add(stream0, row)
        i, j = (s, fixed) if stream_is_row else (fixed, s)
        bits.append(vis.visible(i, j, seq))
    return vector.from_elements(irb.vec(8, ir.IntegerType.get_signless(1)), bits)


def to_b_operand(family: str, dtype: str, acc, lane):
    """The f32 accumulator tile as the 16-bit B operand of a WMMA over its rows (K)."""
    h = arith.truncf(irb.vec(8, irb.storage_type(dtype)), acc)
    if family == "gfx12":
        return h
    words = vector.bitcast(irb.vec(4, i32()), h)
    sel_lo, sel_hi = irb.ci(0x76543210, 32), irb.ci(0xFEDCBA98 - (1 << 32), 32)
    other = [rocdl.permlanex16(i32(), w, w, sel_lo, sel_hi, False, False)
             for w in (vector.extract(words, [], [k]) for k in range(4))]
    p = vector.bitcast(irb.vec(8, irb.storage_type(dtype)), vector.from_elements(irb.vec(4, i32()), other))
    order = list(range(16))
    low_half = irb.lt(irb.rem(lane, 32), 16)
    return arith.select(low_half, vector.shuffle(h, p, order), vector.shuffle(p, h, order))


def slot_values(lds, lane, row0: int):
    """The 8 f32 row values of accumulator tile rows row0.. for this lane (LDS in slot order)."""
    return vector.load(irb.vec(8, f32()), lds, [irb.add(irb.c(row0), irb.mul(irb.div(lane, 16), 8))])


def store_transposed_acc(family: str, out: Tensor, acc, scale, b, h, seq_row0, row, nvalid, d0: int, lane):
    """Store an accumulator tile whose rows are head-dim columns d0.. and whose lane column
    is stream row `row` (key for dK/dV, query for dQ) as out[b, row, h, d0 + ...] * scale,
    only where row < nvalid."""
    vals = acc if scale is None else arith.mulf(acc, splat(scale))
    vals = vals if out.dtype == "f32" else arith.truncf(irb.vec(8, irb.storage_type(out.dtype)), vals)

    # saddr stores (kernels/global_tensor.GlobalTensor.write): the sequence's (b, first row, h) is the
    # uniform base; the lane's row, the wave's head-dim part and the column are the lane offset
    t, extra = (out.t, out.extra) if isinstance(out, Shifted) else (out, irb.c(0))
    uniform = t.row_base(b, seq_row0, h)

    def put():
        lane_off = irb.add(irb.mul(row, t.strides[1]), extra)
        if family == "gfx12":  # rows 8*(l//16) + v: 8 consecutive head-dim columns
            t.write(uniform, irb.add(lane_off, irb.mul(irb.div(lane, 16), 8)), vals, d0)
            return
        for v in range(8):
            r, _ = acc_coords(family, lane, v)
            t.write(uniform, irb.add(lane_off, r), vector.extract(vals, [], [v]), d0)
    if_then(irb.lt(row, nvalid), put)
