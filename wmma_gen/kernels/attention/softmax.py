"""Online softmax on the transposed score accumulators (FA-2, exp2 form).

Each lane holds, for its query (column l % 16 of every S^T tile), the 8 keys 8h..8h+7 of
each 16-key tile (attention_blocks: the shared accumulator layout). With c = scale*log2(e):

    mx     = max over the lane's keys of S, then max with the other half-wave (lane ^ 16)
    m_new  = max(m, c * mx)                  (c > 0, so max(c*S) = c*max(S))
    m_use  = 0 if m_new == -inf else m_new   (a row that has seen no key stays exactly 0)
    alpha  = exp2(m - m_use);  P = exp2(c*S - m_use)      (one v_fma + one v_exp per score)
    l      = alpha*l + sum(P)                (lane-partial: halves combine once, at the end)
    O^T   *= alpha                            (per lane: one multiply per accumulator value)

Masked scores are -inf before the max, so they give P = 0 exactly and never NaN.
"""
from __future__ import annotations

import array
import math

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import rocdl_ops as rocdl
from ...compiler.mlir_api import arith, memref, vector

from ...kernels import irb
from ...kernels.attention_blocks import (
    exp2,
    f32_type,
    fmax,
    iadd,
    max_kind,
    splat,
    swap_halves,
)

NEG_INF = float("-inf")
LN2 = math.log(2.0)


def mask_tile(s: ir.Value, rel, count, kt: int, low=None) -> ir.Value:
    """-inf where key (rel + 16*kt + v) is outside [0, count) (one unsigned compare), for the 8
    values of one S^T tile; rel = first key of the lane's run minus the lane's lowest visible
    key, count = number of visible keys (0: none)."""
    i32 = ir.IntegerType.get_signless(32)
    base = arith.index_cast(i32, iadd(rel, 16 * kt))
    count = arith.index_cast(i32, count)
    offs = arith.ConstantOp(irb.vec(8, i32), ir.DenseElementsAttr.get(
        array.array("i", range(8)), type=irb.vec(8, i32))).result      # C int: 32-bit, as i32
    keys = arith.addi(splat(base, 8), offs)
    ok = arith.cmpi(arith.CmpIPredicate.ult, keys, splat(count, 8))
    if low is not None:
        ok = arith.andi(ok, arith.cmpi(arith.CmpIPredicate.sge, keys, splat(arith.index_cast(i32, low), 8)))
    ninf = splat(irb.cf(NEG_INF, f32_type()), 8)
    return arith.select(ok, s, ninf)


def _vmax(family: str, vals: list) -> ir.Value:
    acc = vals[0]
    for v in vals[1:]:
        acc = fmax(family, acc, v)
    return acc


def _vsum(vals: list) -> ir.Value:
    acc = vals[0]
    for v in vals[1:]:
        acc = arith.addf(acc, v)
    return acc


def online_softmax(family: str, s_tiles: list, m, l, c):
    """One key tile of one 16-query block: returns (P tiles f32, m_new, l_new, alpha)."""
    f32 = f32_type()
    mx = vector.ReductionOp(f32, max_kind(family), _vmax(family, s_tiles)).result
    mx = fmax(family, mx, swap_halves(mx, full_exec=True))  # the key loop runs with every lane on
    m_new = fmax(family, m, arith.mulf(mx, c))
    ninf = irb.cf(NEG_INF, f32)
    dead = arith.cmpf(arith.CmpFPredicate.OEQ, m_new, ninf)
    m_use = arith.select(dead, irb.cf(0.0, f32), m_new)
    alpha = exp2(arith.subf(m, m_use))
    cv, neg_m = splat(c, 8), splat(arith.negf(m_use), 8)
    p = []
    for s in s_tiles:
        x = vector.FMAOp(s, cv, neg_m).result
        p.append(vector.from_elements(irb.vec(8, f32), [exp2(vector.extract(x, [], [v])) for v in range(8)]))
    rowsum = vector.ReductionOp(f32, ir.Attribute.parse("#vector.kind<add>"), _vsum(p)).result
    l_new = arith.addf(arith.mulf(l, alpha), rowsum)
    return p, m_new, l_new, alpha


def rescale(o_tiles: list, alpha) -> list:
    a = splat(alpha, 8)
    return [arith.mulf(o, a) for o in o_tiles]


def sink_log2(sinks, h):
    """The head's sink logit in the exp2 domain of m: s_h * log2(e) (the sink is a raw logit,
    neither scaled nor capped -- GPT-OSS's eager attention concatenates it after scaling)."""
    f32 = f32_type()
    return arith.mulf(memref.load(sinks, [h]), irb.cf(1.0 / LN2, f32))


def finish(m, l, sink=None, family: str = "gfx11"):
    """(1/l or 0, LSE) of the lane's query after the last tile: l summed over both halves;
    LSE = ln 2 * (m + log2 l) in natural log (v_log_f32: l >= 1 here, no denormals), -inf for a row that saw no key.

    With a sink (s2 = s_h log2 e, sink_log2) the row's max and sum take it as one more logit:
        m' = max(m, s2);  l' = l exp2(m - m') + exp2(s2 - m');  1/l -> exp2(m - m') / l'
    so O = O^T exp2(m - m') / l' and LSE = ln 2 (m' + log2 l') (l' >= 1 again); a row that saw
    no key gets O = 0 and LSE = s_h."""
    f32 = f32_type()
    l_tot = arith.addf(l, swap_halves(l, full_exec=True))  # called before any per-row branch
    alpha = None
    if sink is not None:
        m_new = fmax(family, m, sink)
        dead = arith.cmpf(arith.CmpFPredicate.OEQ, m_new, irb.cf(NEG_INF, f32))
        m_use = arith.select(dead, irb.cf(0.0, f32), m_new)       # no NaN from -inf - -inf
        alpha = exp2(arith.subf(m, m_use))
        l_tot = arith.addf(arith.mulf(l_tot, alpha), exp2(arith.subf(sink, m_use)))
        m = m_new
    seen = arith.cmpf(arith.CmpFPredicate.OGT, l_tot, irb.cf(0.0, f32))
    safe = arith.select(seen, l_tot, irb.cf(1.0, f32))
    num = irb.cf(1.0, f32) if alpha is None else alpha
    inv = arith.select(seen, arith.divf(num, safe), irb.cf(0.0, f32))
    lse = arith.mulf(arith.addf(m, rocdl.ROCDLLog(f32, safe).result), irb.cf(LN2, f32))
    lse = arith.select(seen, lse, irb.cf(NEG_INF, f32))
    return inv, lse
