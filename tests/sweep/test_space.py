"""The Optuna space is SPACE itself: values suggested directly, conditional knobs via Knob.when."""
import optuna
import pytest

from wmma_gen.tuner.space import enumerate_space, narrow, params_of, suggest_schedule
from wmma_gen.errors import ScheduleError
from wmma_gen.ops.gemm.schedule import KNOBS, SPACE, Schedule


def test_suggest_uses_knob_values_and_skips_inactive_knobs():
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    for _ in range(30):
        t = study.ask()
        s = suggest_schedule(t, None, SPACE, Schedule)
        for name, value in t.params.items():
            assert value in KNOBS[name].domain          # a knob value, never an index
        for knob in SPACE:
            if knob.when is not None and not knob.when(s):
                assert knob.name not in t.params         # inactive: not suggested, default kept
                assert getattr(s, knob.name) == getattr(Schedule(), knob.name)
        study.tell(t, 0.0)


def test_params_of_round_trips_through_suggest():
    s = Schedule(block_m=128, block_n=32, waves_m=4, waves_n=1, lds="a", buffers=2, raster="grouped", group_m=8)
    study = optuna.create_study()
    study.enqueue_trial(params_of(s, None, SPACE))
    assert suggest_schedule(study.ask(), None, SPACE, Schedule) == s


def test_narrowing_only_to_subsets():
    assert narrow({"block_m": (64,)}, SPACE)["block_m"] == (64,)
    with pytest.raises(ScheduleError, match="block_m"):
        narrow({"block_m": (48,)}, SPACE)
    with pytest.raises(ScheduleError, match="bogus"):
        narrow({"bogus": (1,)}, SPACE)
    with pytest.raises(ScheduleError, match="lds"):
        params_of(Schedule(lds="ab"), {"lds": ("none",)}, SPACE)


def test_enumeration_counts_conditional_knobs_once():
    doms = {k.name: k.domain[:1] for k in SPACE}
    doms.update(lds=("none", "ab"), buffers=(1, 2))
    got = list(enumerate_space(doms, SPACE, Schedule))
    # lds=none has no buffers knob (1 point); lds=ab has two buffer counts
    assert len(got) == 3 and len(set(got)) == 3


def test_distinct_sampler_does_not_repeat_schedules():
    from autotune.sampler import make
    doms = {"block_m": (32, 64), "block_n": (32, 64), "block_k": (32,), "waves_m": (1, 2), "waves_n": (1,),
            "lds": ("none",), "load_bits": (128,), "k_unroll": (1,), "raster": ("row",), "split_k": (1,)}
    study = optuna.create_study(sampler=make(0, 8), direction="maximize")
    study.optimize(lambda t: float(suggest_schedule(t, doms, SPACE, Schedule).block_m), n_trials=8)
    seen = [tuple(sorted(t.params.items())) for t in study.trials[3:]]   # after the random start-up
    # 8 points exist; relative (TPE) proposals never repeat an earlier trial while new ones remain
    assert len(set(seen)) == len(seen)
