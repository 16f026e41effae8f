"""The forward's lane_values and fence knobs (ops/attention/schedule.py) build what they say and
compile without spills under the loaded provider: fence puts one llvm.amdgcn.sched.barrier (mask 0)
per key-loop body where it is asked for (both kv_buffers forms), lane_values="recompute" adds the
opaque thread-id copies (one per boundary-tile branch, one for the epilogue), and the defaults
(fence "none", lane_values "keep") add neither."""
import re

import pytest

from wmma_gen.compiler import compile_mlir
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.kernel import build_attention
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.targets import get_target

D = AttentionDirective("f16", 64, causal=True, window=True, varlen=True, return_lse=True)
SCHED_BARRIER = re.compile(r'"llvm\.amdgcn\.sched\.barrier"')
COPY = re.compile(r'"v_mov_b32 \$0, \$1"')


def _mlir(arch, **knobs):
    return build_attention(D, AttentionSchedule(block_m=64, block_n=32, waves=4, **knobs), get_target(arch)).mlir


@pytest.mark.parametrize("kv_buffers", [1, 2])
@pytest.mark.parametrize("fence", ["none", "k_load", "pv"])
def test_fence_places_one_sched_barrier_per_tile(fence, kv_buffers):
    text = _mlir("gfx1100", fence=fence, kv_buffers=kv_buffers)
    assert len(SCHED_BARRIER.findall(text)) == (0 if fence == "none" else 1)
    assert not COPY.search(text)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("lane_values", ["keep", "recompute"])
def test_lane_values_recompute_copies_the_thread_id(arch, lane_values):
    text = _mlir(arch, lane_values=lane_values)
    assert len(COPY.findall(text)) == (2 if lane_values == "recompute" else 0)
    k = compile_mlir(text, arch)
    assert k.metadata.vgpr_spill_count == 0 and k.metadata.scratch_bytes == 0, k.metadata
    assert find_main_loop(k.isa).wmma == 2 * (32 // 16) * (64 // 16)


def test_unknown_knob_values_are_refused_naming_them():
    with pytest.raises(ValueError, match="fence.*none, k_load, pv"):
        AttentionSchedule(fence="after_qk")
    with pytest.raises(ValueError, match="lane_values.*keep, recompute"):
        AttentionSchedule(lane_values="spill")
