"""Flash-attention forward with masks, GQA/MQA and both layouts on the emulator: causal
(bottom-right aligned) with Sq < Sk, Sq > Sk (fully masked rows: O = 0, LSE = -inf) and
Sq = Sk; sliding windows (bounded on one or both sides, with causal); kv head sharing; the
bhsd layout and non-contiguous views, which reach the kernel only as strides."""
import numpy as np
import pytest
from attention_fwd_helpers import check

from wmma_gen.ops.attention.defaults import default_schedule
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.targets import get_target

ARCHS = ["gfx1100", "gfx1201"]


def _d(dtype="f16", head_dim=64, **kw):
    return AttentionDirective(dtype, head_dim, return_lse=True, **kw)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("seq_q, seq_k", [(40, 72), (72, 40), (100, 100), (5, 1)])
def test_causal(arch, dtype, seq_q, seq_k):
    d = _d(dtype, causal=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=2, kv_heads=1, seq_q=seq_q, seq_k=seq_k)


@pytest.mark.parametrize("arch", ARCHS)
def test_causal_hd128_small_tiles(arch):
    d = _d("bf16", 128, causal=True)
    s = AttentionSchedule(block_m=32, block_n=16, waves=2)
    check(arch, d, s, heads=1, kv_heads=1, seq_q=50, seq_k=45)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("window, seq_q, seq_k", [((8, 0), 70, 70), ((-1, 5), 40, 72), ((20, -1), 72, 40),
                                                  ((3, 9), 33, 100), ((0, 0), 20, 20)])
def test_window(arch, causal, window, seq_q, seq_k):
    d = _d(causal=causal, window=True)
    check(arch, d, default_schedule(get_target(arch), d), heads=1, kv_heads=1, seq_q=seq_q, seq_k=seq_k,
          window=window)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (3, 1), (2, 2)])
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_gqa_mqa_layouts(arch, heads, kv_heads, layout):
    d = _d(layout=layout, causal=heads == 3)
    check(arch, d, default_schedule(get_target(arch), d), batch=2, heads=heads, kv_heads=kv_heads,
          seq_q=19, seq_k=35)


@pytest.mark.parametrize("arch", ARCHS)
def test_strided_views(arch):
    """Q a slice of a wider packed qkv-like buffer, K/V broadcast over the batch (stride 0)."""
    def views(a):
        q = a["Q"]
        wide = np.zeros(q.shape[:-1] + (q.shape[-1] * 3,), q.dtype)
        wide[..., 64:128] = q
        k = np.broadcast_to(a["K"][:1], a["K"].shape)
        v = np.broadcast_to(a["V"][:1], a["V"].shape)
        return {"Q": wide[..., 64:128], "K": k, "V": v}

    d = _d()
    s = default_schedule(get_target(arch), d)
    from attention_fwd_helpers import UNIT, run
    o, lse, _, _, vmax = run(arch, d, s, batch=2, heads=2, kv_heads=1, seq_q=21, seq_k=30, views=views)
    # reference with the same views: batch 1's K/V equal batch 0's
    from attention_fwd_helpers import make_inputs

    from wmma_gen.attention_common.reference import attention_forward
    rng = np.random.default_rng(0)
    (q, qf), (k, kf), (v, vf) = make_inputs(rng, "f16", 64, 2, 2, 1, 21, 30)
    kf[1], vf[1] = kf[0], vf[0]
    ro, rl = attention_forward(qf, kf, vf)
    assert np.abs(o - ro).max() <= 3 * UNIT["f16"] * np.abs(vf).max()
    assert np.abs(lse - rl).max() <= 1e-4
