"""Logit soft-capping (Gemma-2; flash-attn's `softcap`): s_c = cap * tanh(s / cap), applied to
the scaled scores before the masks and the softmax. Shared by the dense forward, the backward
(dK/dV, dQ) and the paged decode kernels, on one 8-value f32 accumulator vector.

There is no tanh instruction on RDNA3/RDNA4; V_EXP_F32 computes 2**x (RDNA3 ISA, VOP1
opcodes; rocdl.exp2), so

    tanh(y) = 1 - 2 / (2**(2 y log2 e) + 1)

which saturates cleanly: 2**(...) -> +inf gives exactly 1, -> 0 gives exactly -1, never NaN.
The backward needs t = tanh(y) itself: d s_c / d s = 1 - t**2.
"""
from __future__ import annotations

import math

from ..compiler.mlir_api import arith, vector

from . import irb
from .attention_blocks import exp2, f32_type, splat

LOG2E = 1.0 / math.log(2.0)


def tanh_of_scaled(x, cap_in):
    """tanh(x * cap_in) of a vector<8 x f32> (cap_in = scale / cap: an f32 scalar value)."""
    f32 = f32_type()
    y = arith.mulf(x, splat(cap_in, 8))
    e = vector.from_elements(irb.vec(8, f32), [exp2(vector.extract(arith.mulf(
        y, splat(irb.cf(2 * LOG2E, f32), 8)), [], [v])) for v in range(8)])
    one = splat(irb.cf(1.0, f32), 8)
    return arith.subf(one, arith.divf(splat(irb.cf(2.0, f32), 8), arith.addf(e, one)))


def softcap(x, cap_in, cap):
    """cap * tanh(x * cap_in) of a vector<8 x f32> (the capped logits)."""
    return arith.mulf(tanh_of_scaled(x, cap_in), splat(cap, 8))
