"""Epilogue: C = act(alpha * acc + beta * C0 + bias), cast to out_dtype, stored per value.

Each lane owns 8 values of every 16x16 accumulator tile (layouts.c_coord); stores outside
the matrix are skipped with scf.if when the shape is not a multiple of the macro tile.
Activations mean what torch's do: relu; gelu = exact erf GELU as torch.nn.GELU(),
0.5 x (1 + erf(x / sqrt 2)); gelu_tanh = GELU(approximate="tanh"),
0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); silu = x / (1 + exp(-x)). erf, tanh and silu
are written with exp, fma and a reciprocal so they lower to v_exp_f32 / v_fma_f32 / v_rcp_f32
without device libraries; erf is Numerical Recipes' erfcc (constants and error: erf.py).
"""
from __future__ import annotations

import math

from ...compiler.mlir_api import arith, ir, math as mmath, memref, scf
from ...kernels import irb
from ...kernels.fragments import acc_coords_split, acc_values
from ...kernels.global_tensor import GlobalTensor, Pos
from ...kernels.globalmem import write
from .directive import GemmDirective
from .erf import ERFC_COEFFS, INV_SQRT2


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


def _gelu_erf(x):
    """x * (x >= 0 ? 1 - e/2 : e/2) with e = erfc(|x| / sqrt 2); the op-by-op f32 model and its
    measured error are erf_f32.gelu_f32 (the negative tail keeps relative accuracy: 1 + erf = e)."""
    f32, one, half = _f32(), irb.cf(1.0, _f32()), irb.cf(0.5, _f32())
    t = _div(one, mmath.fma(mmath.absf(x), irb.cf(0.5 * INV_SQRT2, f32), one))   # 1 / (1 + z/2)
    p = irb.cf(ERFC_COEFFS[-1], f32)
    for c in ERFC_COEFFS[-2::-1]:
        p = mmath.fma(p, t, irb.cf(c, f32))
    e = arith.mulf(t, _exp(mmath.fma(arith.negf(x), arith.mulf(x, half), p)))   # -z^2 = -x * (x/2)
    half_e = arith.mulf(half, e)
    nonneg = arith.cmpf(arith.CmpFPredicate.OGE, x, irb.cf(0.0, f32))
    return arith.mulf(x, arith.select(nonneg, arith.subf(one, half_e), half_e))


def _gelu_tanh(x):
    """0.5 x (1 + tanh(y)), y = sqrt(2/pi) (x + 0.044715 x^3), tanh(y) = 1 - 2 / (exp(2y) + 1)."""
    one = irb.cf(1.0, _f32())
    x3 = arith.mulf(arith.mulf(x, x), x)
    y = arith.mulf(irb.cf(math.sqrt(2.0 / math.pi), _f32()), arith.addf(x, arith.mulf(irb.cf(0.044715, _f32()), x3)))
    e = _exp(arith.mulf(irb.cf(2.0, _f32()), y))
    tanh = arith.subf(one, _div(irb.cf(2.0, _f32()), arith.addf(e, one)))
    return arith.mulf(arith.mulf(irb.cf(0.5, _f32()), x), arith.addf(one, tanh))


def _silu(x):  # x / (1 + exp(-x))
    return _div(x, arith.addf(irb.cf(1.0, _f32()), _exp(arith.negf(x))))


def _relu(x):
    return arith.maximumf(x, irb.cf(0.0, _f32()))


_ACTIVATIONS = {"relu": _relu, "gelu": _gelu_erf, "gelu_tanh": _gelu_tanh, "silu": _silu}


def activation(x, kind: str):
    if kind not in _ACTIVATIONS:
        raise ValueError(f"activation={kind!r} is not allowed: one of {', '.join(_ACTIVATIONS)}")
    return _ACTIVATIONS[kind](x)


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


def store_tile_results(d: GemmDirective, family: str, C: GlobalTensor, C0, bias, b, row0: Pos, col0: Pos, lane,
                       accs, frags_m: int, frags_n: int, m_bound, n_bound) -> None:
    def store(val, row, col):
        write(C, b, row, col, fused_value(d, val, C0, bias, b, row.total(), col.total()))
    for_each_output(d, family, row0, col0, lane, accs, frags_m, frags_n, m_bound, n_bound, store)
