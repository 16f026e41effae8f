"""Attention backward on the emulator across head dims (each with its default schedule,
including the head-dim split across waves at 96/128/256), gfx1151 next to gfx1100 and
gfx1201, and f32 outputs."""
import numpy as np
import pytest

from attention_bwd_cases import check

ARCHS = ("gfx1100", "gfx1151", "gfx1201")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("d", [32, 80, 96, 128, 256])
def test_head_dims_causal(arch, d):
    check(arch, np.random.default_rng(d), heads=2, kv_heads=1, sq=37, sk=29, d=d, causal=True)


@pytest.mark.parametrize("arch", ARCHS)
def test_hd128_bf16_window_varlen(arch):
    check(arch, np.random.default_rng(11), dtype="bf16", heads=2, kv_heads=2, d=128, window=(9, 3),
          seqlens=[(21, 40), (35, 12)])


@pytest.mark.parametrize("arch", ARCHS)
def test_f32_outputs(arch):
    check(arch, np.random.default_rng(12), out_dtype="f32", heads=2, kv_heads=2, sq=33, sk=47, d=64, causal=True)
