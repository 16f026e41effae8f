"""AttentionBwdSchedule: knob domains, the named legality checks, JSON round trip, the
default table, and bad backward inputs rejected before anything is compiled or launched."""
import numpy as np
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.attention_common.directive import HEAD_DIMS as ALL_HEAD_DIMS

HEAD_DIMS = [hd for hd in ALL_HEAD_DIMS if hd <= 256]   # 272..512: test_attention_bwd_large_hd.py
from wmma_gen.ops.attention_bwd import AttentionBwdSchedule, default_schedule, run_backward
from wmma_gen.ops.attention_bwd.schedule import SPACE
from wmma_gen.targets import get_target


def test_knob_domain_errors_name_the_field():
    with pytest.raises(ScheduleError, match="block_m=48"):
        AttentionBwdSchedule(block_m=48)
    with pytest.raises(ScheduleError, match="dq='fused'"):
        AttentionBwdSchedule.from_dict({"dq": "fused"})


def test_retired_knobs_load_with_their_one_value_and_are_refused_otherwise():
    """buffering and dq had one value each (issue 39 item 6): a file written with them still loads
    (the same schedule as without), any other value is refused naming the key, nothing else changes."""
    plain = AttentionBwdSchedule.from_dict({"block_m": 16})
    assert AttentionBwdSchedule.from_dict({"block_m": 16, "buffering": 1, "dq": "separate"}) == plain
    assert "buffering" not in plain.to_dict() and "dq" not in plain.to_dict()
    with pytest.raises(ScheduleError, match=r"buffering=2 .*1 or absent \(a retired knob"):
        AttentionBwdSchedule.from_dict({"block_m": 16, "buffering": 2})
    with pytest.raises(ScheduleError, match="buffering=True"):      # a bool is not the int 1
        AttentionBwdSchedule.from_dict({"buffering": True})
    with pytest.raises(TypeError):                                  # the constructor has no such field
        AttentionBwdSchedule(dq="separate")


def test_every_knob_is_a_field():
    assert {k.name for k in SPACE} == set(AttentionBwdSchedule().to_dict())


@pytest.mark.parametrize("kw,check", [
    (dict(block_n=32, waves=4), "keys_cover_waves"),
    (dict(waves=4, d_split=4, block_n=16), "head_dim_split"),          # hd 80: 5 blocks
    (dict(block_m=64, block_n=128, waves=8), "lds_budget"),
])
def test_named_checks_reject(kw, check):
    t = get_target("gfx1100")
    with pytest.raises(ScheduleError, match=check):
        AttentionBwdSchedule(**kw).validate(80 if check == "head_dim_split" else 128, "f16", t)


def test_vgpr_budget_rejects_unsplit_hd256():
    s = AttentionBwdSchedule(block_m=16, block_n=64, waves=4, dq_block_m=16, dq_block_n=16, dq_waves=1)
    assert any("VGPRs" in p for p in s.problems(256, "f16", get_target("gfx1100")))


def test_json_round_trip():
    s = default_schedule("gfx1201", 128)
    assert AttentionBwdSchedule.from_dict(s.to_dict()) == s
    with pytest.raises(ScheduleError, match="known fields"):
        AttentionBwdSchedule.from_dict({"bogus": 1})


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1151", "gfx1201"])
@pytest.mark.parametrize("d", HEAD_DIMS)
def test_defaults_are_legal(arch, d):
    default_schedule(arch, d).validate(d, "f16", get_target(arch))
    default_schedule(arch, d).validate(d, "bf16", get_target(arch))


class _NoDevice:
    """A device that fails the test if anything reaches it."""
    def __getattr__(self, name):
        raise AssertionError(f"device.{name} used although the arguments are wrong")


@pytest.mark.parametrize("bad,match", [("o", "o.shape"), ("do", "do.shape"), ("lse", "lse.shape"),
                                       ("lse_dtype", "lse.dtype")])
def test_bad_shapes_rejected_before_launch(bad, match):
    q = np.zeros((1, 8, 2, 64), np.float16)
    kv = np.zeros((1, 8, 2, 64), np.float16)
    o, do, lse = q.copy(), q.copy(), np.zeros((1, 2, 8), np.float32)
    if bad == "o":
        o = o[:, :4]
    elif bad == "do":
        do = np.zeros((1, 8, 2, 32), np.float16)
    elif bad == "lse":
        lse = lse[:, :1]
    else:
        lse = lse.astype(np.float64)
    with pytest.raises(ScheduleError, match=match):
        run_backward(q, kv, kv, o, do, lse, device=_NoDevice())
