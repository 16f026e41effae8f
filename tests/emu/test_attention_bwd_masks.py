"""Attention backward on the emulator: GQA/MQA (the query heads of a group accumulate in one
dK/dV workgroup), bshd and bhsd layouts, varlen (cu_seqlens, including empty and one-row
sequences) and sliding windows, alone and with causal; gfx1100 and gfx1201."""
import numpy as np
import pytest

from attention_bwd_cases import check

ARCHS = ("gfx1100", "gfx1201")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_gqa_layouts(arch, layout):
    check(arch, np.random.default_rng(2), batch=2, heads=4, kv_heads=2, sq=40, sk=36, d=64, causal=True,
          layout=layout)


@pytest.mark.parametrize("arch", ARCHS)
def test_mqa_bhsd_bf16(arch):
    check(arch, np.random.default_rng(3), dtype="bf16", batch=2, heads=3, kv_heads=1, sq=20, sk=45, d=64,
          layout="bhsd")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("causal", [False, True])
def test_varlen(arch, causal):
    check(arch, np.random.default_rng(4), heads=2, kv_heads=1, d=64, causal=causal,
          seqlens=[(17, 30), (40, 9), (1, 1), (0, 5), (33, 33)])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("window,causal", [((8, 4), False), ((10, -1), True), ((-1, 3), False),
                                           ((1, 0), False), ((5, 20), True)])
def test_window(arch, window, causal):
    check(arch, np.random.default_rng(7), heads=2, kv_heads=1, sq=70, sk=50, d=64, window=window, causal=causal)


@pytest.mark.parametrize("arch", ARCHS)
def test_varlen_window_bf16(arch):
    check(arch, np.random.default_rng(8), dtype="bf16", heads=2, kv_heads=2, d=64, window=(6, 2),
          seqlens=[(30, 41), (9, 3)])


@pytest.mark.parametrize("arch", ARCHS)
def test_window_single_key_rows(arch):
    """window (0, 0): every query sees one key, so exact dQ = dK = 0 (dS = P (dP - Di) with
    P = 1, dP = Di): the kernels' residue must be at rounding level of O(1) values."""
    check(arch, np.random.default_rng(9), heads=1, kv_heads=1, sq=40, sk=40, d=64, window=(0, 0), floor=1.0)
