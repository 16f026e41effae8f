"""Logit soft-capping (Gemma-2; flash-attn's `softcap`): s_c = cap * tanh(s / cap), applied to
the scaled scores before the masks and the softmax. Shared by the dense forward, the backward
(dK/dV, dQ) and the paged decode kernels, on one 8-value f32 accumulator vector.

There is no tanh instruction on RDNA3/RDNA4; V_EXP_F32 computes 2**x (RDNA3 ISA, VOP1
opcodes; rocdl.exp2), so

    tanh(y) = 1 - 2 / (2**(2 y log2 e) + 1)

which saturates cleanly: 2**(...) -> +inf gives exactly 1, -> 0 gives exactly -1, never NaN.
The backward needs t = tanh(y) itself: d s_c / d s = 1 - t**2.

The division: an IEEE f32 divide is ~10 instructions per value (v_div_scale x2, v_rcp,
v_fma chain, v_div_fmas, v_div_fixup: compiler output for the forward). `fast_rcp=True` uses
V_RCP_F32 instead (rocdl.rcp -> llvm.amdgcn.rcp; one transcendental, 1 ULP as the RDNA ISA
guides state for the VALU transcendentals, cf. emu/isa/vop_float.py): 2 * rcp(e + 1) is off by a
few f32 ulps of a value <= 2, far below the f16/bf16 roundings downstream; rcp(+inf) = 0 keeps
the saturation exact. The dense forward, the backward and the paged decode kernels use it.
"""
from __future__ import annotations

import math

from ..compiler.mlir_api import rocdl_ops as rocdl
from ..compiler.mlir_api import arith, vector

from . import irb
from .attention_blocks import exp2, f32_type, splat

LOG2E = 1.0 / math.log(2.0)


def tanh_of_scaled(x, cap_in, fast_rcp: bool = False):
    """tanh(x * cap_in) of a vector<8 x f32> (cap_in = scale / cap: an f32 scalar value);
    fast_rcp: 2 / (e + 1) as 2 * v_rcp_f32(e + 1) (module doc)."""
    f32 = f32_type()
    y = arith.mulf(x, splat(cap_in, 8))
    e = vector.from_elements(irb.vec(8, f32), [exp2(vector.extract(arith.mulf(
        y, splat(irb.cf(2 * LOG2E, f32), 8)), [], [v])) for v in range(8)])
    one = splat(irb.cf(1.0, f32), 8)
    if not fast_rcp:
        return arith.subf(one, arith.divf(splat(irb.cf(2.0, f32), 8), arith.addf(e, one)))
    d = arith.addf(e, one)
    r = vector.from_elements(irb.vec(8, f32), [rocdl.rcp(f32, vector.extract(d, [], [v])) for v in range(8)])
    return arith.subf(one, arith.mulf(r, splat(irb.cf(2.0, f32), 8)))


def softcap(x, cap_in, cap, fast_rcp: bool = False):
    """cap * tanh(x * cap_in) of a vector<8 x f32> (the capped logits)."""
    return arith.mulf(tanh_of_scaled(x, cap_in, fast_rcp), splat(cap, 8))
