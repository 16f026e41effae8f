"""Epilogue: C = act(alpha * acc + beta * C0 + bias), cast to out_dtype, stored per value.

Each lane owns 8 values of every 16x16 accumulator tile (layouts.c_coord); stores outside
the matrix are skipped with scf.if when the shape is not a multiple of the macro tile.
gelu is the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); tanh and silu are
written with exp so they lower to v_exp_f32 without device libraries.
"""
from __future__ import annotations

import math

from ...compiler.mlir_api import arith, ir, math as mmath, memref, scf
from ...kernels import irb
from ...kernels.fragments import acc_coords_split, acc_values
from ...kernels.globalmem import Pos, Stored, write
from .directive import GemmDirective


def _f32():
    return ir.F32Type.get()


def _to_f32(v, src: str):
    return v if src == "f32" else arith.extf(_f32(), v)


def _from_f32(v, dst: str):
    return v if dst == "f32" else arith.truncf(irb.storage_type(dst), v)


def _cast_acc(v, acc: str, out: str):
    if acc == out:
        return v
    if acc == "i32":
        raise ValueError("integer accumulators only store as i32")
    return _from_f32(_to_f32(v, acc), out)


def _exp(x):
    return mmath.exp(x)


def _div(a, b):
    """a / b with reciprocal fast-math (v_rcp_f32 + v_mul, 1 ulp): activations need no
    IEEE-exact division, and the full v_div_scale/fmas/fixup sequence costs 10 VALU ops."""
    return arith.DivFOp(a, b, fastmath=ir.Attribute.parse("#arith.fastmath<arcp,afn>")).result


def activation(x, kind: str):
    one = irb.cf(1.0, _f32())
    if kind == "relu":
        return arith.maximumf(x, irb.cf(0.0, _f32()))
    if kind == "silu":  # x / (1 + exp(-x))
        return _div(x, arith.addf(one, _exp(arith.negf(x))))
    if kind == "gelu":  # 0.5 x (1 + tanh(y)), tanh(y) = 1 - 2 / (exp(2y) + 1)
        x3 = arith.mulf(arith.mulf(x, x), x)
        y = arith.mulf(irb.cf(math.sqrt(2.0 / math.pi), _f32()), arith.addf(x, arith.mulf(irb.cf(0.044715, _f32()), x3)))
        e = _exp(arith.mulf(irb.cf(2.0, _f32()), y))
        tanh = arith.subf(one, _div(irb.cf(2.0, _f32()), arith.addf(e, one)))
        return arith.mulf(arith.mulf(irb.cf(0.5, _f32()), x), arith.addf(one, tanh))
    raise ValueError(kind)


def fused_value(d: GemmDirective, acc_val, C0, bias, b, row, col, acc_type: str = ""):
    """The final value of one output element, in out_dtype. `acc_type` is the type of
    acc_val (default: the directive's accumulator; split-K sums arrive as f32/i32)."""
    src = acc_type or d.acc
    plain = d.alpha == 1.0 and not d.beta and not d.bias and not d.activation
    if plain:
        return _cast_acc(acc_val, src, d.out_dtype)
    x = _to_f32(acc_val, src)
    if d.alpha != 1.0:
        x = arith.mulf(x, irb.cf(d.alpha, _f32()))
    if d.beta:
        c0 = _to_f32(memref.load(C0, [b, row, col]), d.out_dtype)
        x = arith.addf(x, arith.mulf(c0, irb.cf(d.beta, _f32())))
    if d.bias:
        x = arith.addf(x, memref.load(bias, [col if d.bias == "n" else row]))
    if d.activation:
        x = activation(x, d.activation)
    return _from_f32(x, d.out_dtype)


def for_each_output(d: GemmDirective, family: str, row0: Pos, col0: Pos, lane, accs, frags_m: int,
                    frags_n: int, m_bound, n_bound, body) -> None:
    """Call body(value, row, col) for every accumulator value this lane owns, inside an
    scf.if against the run-time bounds M / N when the key says the tile may cross that edge
    (bound None: whole tiles, no guard); the body never runs out of bounds. row0/col0 are
    the wave's origin (uniform tile origin + the wave's offset); row and col are Pos (the
    fragment and value constants kept apart, for globalmem.write's immediates/SGPR bases)."""
    acc_bits = 16 if d.acc in ("f16", "bf16") else 32
    for i in range(frags_m):
        for j in range(frags_n):
            for v, val in enumerate(acc_values(family, acc_bits, accs[i * frags_n + j])):
                r, rc, c = acc_coords_split(family, lane, v)
                row, col = row0.plus(16 * i + rc, r), col0.plus(16 * j, c)
                ok = None
                if m_bound is not None:
                    ok = irb.lt(row.total(), m_bound)
                if n_bound is not None:
                    okn = irb.lt(col.total(), n_bound)
                    ok = okn if ok is None else irb.land(ok, okn)
                if ok is None:
                    body(val, row, col)
                    continue
                branch = scf.IfOp(ok)
                with ir.InsertionPoint(branch.then_block):
                    body(val, row, col)
                    scf.YieldOp([])


def store_tile_results(d: GemmDirective, family: str, C: Stored, C0, bias, b, row0: Pos, col0: Pos, lane,
                       accs, frags_m: int, frags_n: int, m_bound, n_bound) -> None:
    def store(val, row, col):
        write(C, b, row, col, fused_value(d, val, C0, bias, b, row.total(), col.total()))
    for_each_output(d, family, row0, col0, lane, accs, frags_m, frags_n, m_bound, n_bound, store)
