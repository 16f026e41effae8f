"""v_add_co*/v_sub_co* semantics (RDNA3 ISA §16 V_ADD_CO_U32, V_ADD_CO_CI_U32, V_SUB_CO_U32,
V_SUB_CO_CI_U32: 32-bit result, VCC bit = carry out / borrow out) against exact integer
arithmetic, on random words and every pair of edge values, with and without carry-in."""
import numpy as np
import pytest

from wmma_gen.emu.isa.vop_int import _borrow_sub, _carry_add

EDGE = np.array([0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32)


def _operands():
    rng = np.random.default_rng(11)
    a = np.concatenate([rng.integers(0, 2 ** 32, 4000, dtype=np.uint64).astype(np.uint32), np.repeat(EDGE, EDGE.size)])
    b = np.concatenate([rng.integers(0, 2 ** 32, 4000, dtype=np.uint64).astype(np.uint32), np.tile(EDGE, EDGE.size)])
    return a, b, rng.random(a.size) < 0.5


@pytest.mark.parametrize("carry_in", [False, True])
def test_add_and_sub_with_carry_match_exact_integers(carry_in):
    a, b, c = _operands()
    cin = c.astype(np.int64) if carry_in else 0
    s, k = _carry_add(a, b, c) if carry_in else _carry_add(a, b)
    exact = a.astype(np.int64) + b.astype(np.int64) + cin
    assert s.dtype == np.uint32 and np.array_equal(s, exact & 0xFFFFFFFF) and np.array_equal(k, exact > 0xFFFFFFFF)
    d, k = _borrow_sub(a, b, c) if carry_in else _borrow_sub(a, b)
    exact = a.astype(np.int64) - b.astype(np.int64) - cin
    assert d.dtype == np.uint32 and np.array_equal(d, exact & 0xFFFFFFFF) and np.array_equal(k, exact < 0)


def test_broadcast_operands_as_the_binder_passes_them():
    # an SGPR source arrives as (W, 1), an inline constant as a 0-d array
    s, k = _carry_add(np.uint32(0xFFFFFFFF), np.array([[1], [0]], np.uint32), np.ones((2, 32), bool))
    assert s.shape == (2, 32) and (s[0] == 1).all() and k[0].all() and (s[1] == 0).all() and k[1].all()
