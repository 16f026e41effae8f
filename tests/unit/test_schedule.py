"""Schedule knobs, JSON round trip and each rejection reason."""
import pytest

from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import CONSTRAINTS, SPACE, Schedule
from wmma_gen.targets import get_target

T = get_target("gfx1100")
D, P = GemmDirective("f16"), GemmProblem(256, 256, 256)


def test_json_round_trip():
    s = Schedule(block_m=128, lds="ab", buffers=2, raster="grouped")
    assert Schedule.from_dict(s.to_dict()) == s


def test_space_and_fields_agree():
    assert [k.name for k in SPACE] == list(Schedule().to_dict())


def test_out_of_domain_value_names_field_and_allowed():
    with pytest.raises(ScheduleError, match=r"block_m=48 is not allowed: one of 16, 32, 64, 128, 256"):
        Schedule(block_m=48)


def test_unknown_field_refused():
    with pytest.raises(ScheduleError, match="known fields"):
        Schedule.from_dict({"block_m": 64, "tile": 3})


@pytest.mark.parametrize("sched,directive,problem,arch,check", [
    (Schedule(), GemmDirective("fp8"), GemmProblem(64, 64, 64), "gfx1100", "dtype_supported"),
    (Schedule(block_m=32, waves_m=4), D, P, "gfx1100", "tile_multiple_of_instruction"),
    (Schedule(block_n=16, waves_n=2), D, P, "gfx1100", "tile_multiple_of_instruction"),
    (Schedule(block_m=256, block_n=256, waves_m=8, waves_n=8), D, P, "gfx1100", "workgroup_size"),
    (Schedule(block_m=256, block_n=256, block_k=64, lds="ab", buffers=2, lds_pad=8), D, P, "gfx1100", "lds_budget"),
    (Schedule(block_m=256, block_n=256, waves_m=1, waves_n=1), D, P, "gfx1100", "vgpr_budget"),
    (Schedule(), GemmDirective("f16"), GemmProblem(65536, 65536, 64), "gfx1100", "operand_size"),
    # f32 C rows of 2**25 elements: a 64-row tile spans > 2**32 bytes (32-bit SADDR offsets)
    (Schedule(), GemmDirective("f16"), GemmProblem(32, 2**25, 16), "gfx1100", "output_offsets"),
    (Schedule(lds="ab"), GemmDirective("i4", layout="NN"), GemmProblem(64, 64, 64), "gfx1100", "lds_i4_k_contiguous"),
    (Schedule(split_k=4, block_k=64), GemmDirective("f16"), GemmProblem(64, 64, 128), "gfx1100", "split_k_depth"),
])
def test_each_check_rejects_a_concrete_schedule(sched, directive, problem, arch, check):
    with pytest.raises(ScheduleError, match=f"check '{check}'"):
        sched.validate(directive, get_target(arch), problem)
    assert any(check in c.__name__ for c in CONSTRAINTS)


def test_default_schedule_valid_everywhere():
    for arch in ("gfx1100", "gfx1151", "gfx1201"):
        t = get_target(arch)
        for dt in t.dtypes:
            assert Schedule().problems(GemmDirective(dt), t, P) == []


def test_every_op_schedule_shares_the_knob_base_and_its_table():
    """GEMM, attention and attention_bwd schedules: fields == SPACE (bind checks it), domains
    enforced, unknown JSON fields refused, legality from the op's own CONSTRAINTS."""
    from dataclasses import dataclass, fields

    import pytest

    from wmma_gen.knobs import Knob, KnobSchedule
    from wmma_gen.ops.attention.schedule import AttentionSchedule
    from wmma_gen.ops.attention_bwd.schedule import AttentionBwdSchedule
    from wmma_gen.ops.gemm.schedule import Schedule
    for cls in (Schedule, AttentionSchedule, AttentionBwdSchedule):
        assert [f.name for f in fields(cls)] == [k.name for k in cls.SPACE] and cls.CONSTRAINTS
        s = cls()
        assert cls.from_dict(s.to_dict()) == s
        with pytest.raises(ValueError, match="^schedule="):
            cls.from_dict({**s.to_dict(), "bogus": 1})
        first = cls.SPACE[0]
        with pytest.raises(ValueError, match=rf"^{first.name}="):
            cls(**{first.name: "not-in-domain"})

    @dataclass(frozen=True)
    class Wrong(KnobSchedule):
        a: int = 1
    with pytest.raises(TypeError, match="must be its SPACE's knobs"):
        Wrong.bind((Knob("b", (1,), "doc"),), ())
