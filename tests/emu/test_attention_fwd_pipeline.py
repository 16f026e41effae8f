"""Flash-attention forward, key-loop variants on the emulator against the float64 reference
(tolerances in attention_fwd_helpers):

- kv_buffers=2 (ping-pong K/V LDS buffers, one barrier per tile) with masks, varlen, Q in LDS
  and split-KV;
- the sequence's last key tile read shifted down to end at Sk (kernels/attention/main_loop.tile_first) -- Sk a
  tile multiple, one key past it, a tile and a half, shorter than a tile -- with causal and
  window masks, which must also hide the keys below the tile start the shift re-reads;
- the minreg scheduler knob."""
import pytest
from attention_fwd_helpers import check

from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule

ARCHS = ["gfx1100", "gfx1201"]
KV2 = [dict(block_m=64, block_n=32, waves=4, kv_buffers=2),
       dict(block_m=32, block_n=64, waves=2, kv_buffers=2, q_in="lds"),
       dict(block_m=16, block_n=16, waves=1, kv_buffers=2, split_kv=2)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("knobs", KV2, ids=["64x32", "32x64-qlds", "16x16-split2"])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_double_buffered_kv(arch, knobs, dtype):
    d = AttentionDirective(dtype, 64, causal=True, window=True, return_lse=True)
    check(arch, d, AttentionSchedule(**knobs), batch=2, heads=2, kv_heads=1, seq_q=37, seq_k=75, window=(20, 3))


@pytest.mark.parametrize("arch", ARCHS)
def test_double_buffered_kv_varlen(arch):
    d = AttentionDirective("f16", 128, causal=True, varlen=True, return_lse=True)
    check(arch, d, AttentionSchedule(block_m=32, block_n=16, waves=2, kv_buffers=2), heads=2, kv_heads=1,
          lens=[(5, 0), (17, 70), (1, 1), (33, 40)])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("seq_k", [64, 65, 96, 23])
@pytest.mark.parametrize("masks", ["causal", "window"])
def test_last_tile_shift(arch, seq_k, masks):
    d = AttentionDirective("f16", 64, causal=masks == "causal", window=masks == "window", return_lse=True)
    s = AttentionSchedule(block_m=32, block_n=64, waves=2)
    check(arch, d, s, heads=1, kv_heads=1, seq_q=41, seq_k=seq_k, window=(30, 2) if masks == "window" else None,
          seed=seq_k)


@pytest.mark.parametrize("arch", ARCHS)
def test_minreg_scheduler(arch):
    d = AttentionDirective("bf16", 96, causal=True, return_lse=True)
    check(arch, d, AttentionSchedule(block_m=64, block_n=32, waves=4, sched="minreg"), heads=2, kv_heads=2,
          seq_q=29, seq_k=50)
