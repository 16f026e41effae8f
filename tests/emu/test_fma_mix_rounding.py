"""V_FMA_MIXLO_F16 / V_FMA_MIXHI_F16 round twice (fma -> f32 -> f16), as the RDNA3/RDNA4 ISA
pseudocode and LLVM's mad-mix-fptrunc-rounding.ll (PR 219723) say (wmma_gen/emu/isa/vop3p.py),
checked on values where one rounding and two roundings differ; V_FMA_MIX_F32 rounds once."""
import numpy as np
import pytest

from wmma_gen.emu.isa.vop3p import PACKED

F32, F16 = np.float32, np.float16
U = 2.0 ** -10                 # f16 ulp at 1

# (a, b, c, two roundings: f32 then f16, one rounding: exact -> f16)
CASES = [
    (1 + U / 2, 1.0, 2.0 ** -30, 1.0, 1 + U),                   # just above a tie: in f32 a tie -> even
    (1 + U / 2, 1.0, -2.0 ** -30, 1.0, 1.0),                   # just below a tie: both down
    (-(1 + 1.5 * U), 1.0, -2.0 ** -30, -(1 + 2 * U), -(1 + 2 * U)),   # tie to even is away here: same
    (1 + U / 2 + 2.0 ** -23, 1 - 2.0 ** -24, 0.0, 1.0, 1 + U),  # the product itself lands on the tie in f32
]


@pytest.mark.parametrize("name", ["v_fma_mixlo_f16", "v_fma_mixhi_f16"])
def test_mix_f16_rounds_to_f32_then_to_f16(name):
    a, b, c = (np.array([x[i] for x in CASES], F32) for i in range(3))
    assert all(F32(x[i]) == x[i] for x in CASES for i in range(3))          # the inputs are exact f32
    got = np.asarray(PACKED[name].fn(a, b, c), F16)
    twice, once = (np.array([x[i] for x in CASES], F16) for i in (3, 4))
    assert got.view(np.uint16).tolist() == twice.view(np.uint16).tolist()
    assert ((a.astype(np.float64) * b + c).astype(F16) == once).all()       # numpy: exact -> f16 once
    assert (got != once).sum() == 2                                          # cases 0 and 3 tell them apart


def test_mix_f32_rounds_once():
    a = np.array([1 + 2.0 ** -23], F32)
    got = np.asarray(PACKED["v_fma_mix_f32"].fn(a, a, np.array([-1.0], F32)), F32)
    assert got[0] == F32(2.0 ** -22 + 2.0 ** -46)      # (1+e)^2 - 1 = 2e + e^2, exact in f32
