"""A model tie keeps the default (autotune/model_tie.py): an exported model-ranked entry never differs from the
built-in default when the model cannot tell them apart. The case is the one 12 shipped paged entries had: a
batch-1 decode at 8k keys, split_kv 16 vs the default's 64, equal model figures (both at the memory roofline),
and the split-16 trial happened to come first in its study."""
import math

import optuna

from autotune import export, model_tie
from autotune.ladder import build, builtin_default
from autotune.loop_density import no_looser_than_default
from autotune.model_tie import no_model_tie
from wmma_gen.ops import registry

OP, ARCH = "paged_attention", "gfx1100"
SPEC = registry.get(OP)
D = SPEC.directive("f16", 128, 16, "", True)
P = dict(batch=1, heads=32, kv_heads=8, seq_q=1, seq_len=8192, window_left=-1, window_right=-1)


def default():
    return builtin_default(OP, D.to_dict(), ARCH, P)[2]


def split(n: int):
    return SPEC.schedule.from_dict({**default().to_dict(), "split_kv": n})


def _study(schedules: list) -> optuna.Study:
    """A model-ranked study of that bucket with one trial per schedule, in that order (as a sweep records them)."""
    from wmma_gen.ops.paged_attention.tuning import row
    study = optuna.create_study(direction="maximize", study_name="paged_attention-gfx1100-f16-tie")
    for k, v in {"op": OP, "arch": ARCH, "directive": D.to_dict(), "problem": P, "row": row(D, P),
                 "unit": "TFLOP/s", "peak_tflops": 122.88}.items():
        study.set_user_attr(k, v)
    for s in schedules:
        e = SPEC.estimate_of(D, s, P, ARCH)
        study.add_trial(optuna.trial.create_trial(
            value=e.tflops, params={}, distributions={},
            user_attrs={"schedule": s.to_dict(), "seconds": e.seconds, "source": "model", "validated": True,
                        "vgprs": 64, "lds_bytes": 0, "isa_hash": "x" * 64}))
    return study


def exported(study) -> tuple[list, list]:
    notes = []     # export's gates before the shadow rule (the shipped file already holds this bucket)
    docs = no_looser_than_default(no_model_tie(export.documents(build([study], top_k=3), ARCH, notes.append),
                                               notes.append), notes.append)
    return [SPEC.schedule.from_dict(e["schedule"]) for _, doc, _ in docs for e in doc["entries"]], notes


def test_the_case_is_a_tie_under_the_model():
    a, b = (SPEC.estimate_of(D, s, P, ARCH).tflops for s in (split(16), default()))
    assert default().split_kv == 64 and math.isclose(a, b, rel_tol=1e-12) and model_tie.ties(a, b)


def test_a_tying_trial_tried_first_ranks_below_the_default_and_the_default_is_exported():
    df = build([_study([split(16), default()])], top_k=3).sort_values("rank")
    assert [int(x) for x in df["split_kv"]] == [64, 16]       # rank 1 is the default's own trial
    got, _ = exported(_study([split(16), default()]))
    assert got == [default()]


def test_without_the_default_trial_a_tying_entry_is_dropped_with_its_reason():
    got, notes = exported(_study([split(16)]))
    assert got == []
    assert any(n.startswith("dropped paged_attention gfx1100 f16") and "resolution" in n for n in notes), notes


def test_a_win_beyond_the_resolution_still_ranks_first():
    # batch 16 ctx 8208 Sq 16 (shipped f16 hd64 entry): split 16 beats the default's split 2 by 1.10x
    global P, D
    saved = P, D
    P = dict(batch=16, heads=32, kv_heads=8, seq_q=16, seq_len=8208, window_left=-1, window_right=-1)
    D = SPEC.directive("f16", 64, 16, "", True)
    try:
        a, b = (SPEC.estimate_of(D, s, P, ARCH).tflops for s in (split(16), default()))
        assert model_tie.beats(a, b)
        df = build([_study([default(), split(16)])], top_k=3).sort_values("rank")
        assert int(df.iloc[0]["split_kv"]) == 16
    finally:
        P, D = saved


def test_the_rule_is_symmetric_and_sized():
    assert model_tie.ties(100.0, 100.99) and model_tie.ties(100.99, 100.0)
    assert not model_tie.beats(100.99, 100.0) and model_tie.beats(101.01, 100.0)
