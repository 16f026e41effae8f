"""knobs.as_schedule: what an API's schedule= argument may be (issue 24: a str, list or dict
reached attribute access and raised AttributeError)."""
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.knobs import as_schedule
from wmma_gen.ops.attention.schedule import AttentionSchedule
from wmma_gen.ops.attention_bwd.schedule import AttentionBwdSchedule
from wmma_gen.ops.gemm.schedule import Schedule


@pytest.mark.parametrize("cls", [Schedule, AttentionSchedule, AttentionBwdSchedule])
def test_none_instance_and_dict_are_accepted(cls):
    assert as_schedule(cls, None) is None
    s = cls()
    assert as_schedule(cls, s) is s
    assert as_schedule(cls, {}) == s
    assert as_schedule(cls, s.to_dict()) == s


@pytest.mark.parametrize("value, needle", [
    ("block_m=64", "got a str (a JSON text: pass json.loads(text))"),
    ([64, 64], "got a list"),
    (64, "got a int"),
    (AttentionSchedule(), "got a AttentionSchedule, another op's schedule"),
    ({1: 64}, "keys must be field names"),
    ({"block_q": 64}, "known fields are"),
    ({"block_m": 48}, "block_m=48 is not allowed: one of 16, 32"),
    ({"block_m": "64"}, "block_m='64' is not allowed"),
])
def test_anything_else_is_a_clear_error_naming_the_argument(value, needle):
    with pytest.raises(ScheduleError) as e:
        as_schedule(Schedule, value, "schedule")
    assert needle in str(e.value)
    if not isinstance(value, dict):
        assert str(e.value).startswith("schedule=") and "a Schedule, a dict of its fields (block_m" in str(e.value)
