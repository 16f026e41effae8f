"""Flash-attention backward on the emulator: dense and causal problems (Sq, Sk not tile
multiples, Sq > Sk and Sq < Sk), f16 and bf16, gfx1100 and gfx1201, against the float64
reference (tolerances: attention_bwd_cases.TOL)."""
import numpy as np
import pytest

from attention_bwd_cases import check

ARCHS = ("gfx1100", "gfx1201")


@pytest.mark.parametrize("arch", ARCHS)
def test_dense_f16_hd64_ragged(arch):
    check(arch, np.random.default_rng(0), batch=2, heads=2, kv_heads=2, sq=50, sk=77, d=64)


@pytest.mark.parametrize("arch", ARCHS)
def test_dense_bf16_hd64(arch):
    check(arch, np.random.default_rng(1), dtype="bf16", batch=1, heads=2, kv_heads=2, sq=64, sk=40, d=64)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("sq,sk", [(70, 33), (33, 70), (45, 45)])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_causal_bottom_right(arch, sq, sk, dtype):
    check(arch, np.random.default_rng(sq * sk), dtype=dtype, heads=2, kv_heads=2, sq=sq, sk=sk, d=64, causal=True)


@pytest.mark.parametrize("arch", ARCHS)
def test_explicit_scale_and_single_row(arch):
    check(arch, np.random.default_rng(5), sq=1, sk=19, d=64, scale=0.3)
    check(arch, np.random.default_rng(6), sq=19, sk=3, d=64, causal=True)   # 16 rows see no key
