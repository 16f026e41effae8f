"""A model-ranked win that reverses when one of the model's guessed parameters varies is not
exported over the default (issue 25 item 3; autotune/ladder.robust_order, model/robustness.py):
the gfx1100 f16 4096^3 case that shipped a 4-tiles-per-wave tile on the model's guessed L2
bandwidth. A robust win keeps rank 1."""
import optuna
import pytest

from autotune import export
from autotune.ladder import build
from wmma_gen.ops import registry
from wmma_gen.ops.gemm.defaults import LARGE
from wmma_gen.ops.gemm.directive import GemmDirective

SMALL_TILE = dict(block_m=128, block_n=32, block_k=64, waves_m=2, waves_n=2, lds="ab", buffers=1, lds_pad=8,
                  lds_store_bits=16, load_bits=128, k_unroll=2, raster="grouped", group_m=2, split_k=1)


def _study(size: int, schedules: list[dict]) -> optuna.Study:
    spec = registry.get("gemm")
    d = GemmDirective("f16", acc="f32")
    p = {"m": size, "n": size, "k": size, "batch": 1}
    study = optuna.create_study(direction="maximize", study_name=f"gemm-gfx1100-f16-f32-NN-{size}")
    for k, v in {"op": "gemm", "arch": "gfx1100", "directive": d.to_dict(), "problem": p, "unit": "TFLOP/s",
                 "peak_tflops": 122.88}.items():
        study.set_user_attr(k, v)
    for sd in schedules:
        s = spec.schedule.from_dict(sd)
        e = spec.estimate_of(d, s, p, "gfx1100")
        study.add_trial(optuna.trial.create_trial(
            value=e.tflops, params={}, distributions={},
            user_attrs={"schedule": s.to_dict(), "seconds": e.seconds, "source": "model", "validated": True,
                        "vgprs": 128, "lds_bytes": 0, "isa_hash": "x" * 64}))
    return study


def test_a_win_that_flips_ranks_below_the_default_and_is_not_exported():
    study = _study(4096, [SMALL_TILE, LARGE.to_dict()])
    df = build([study], top_k=3)
    first, second = df.sort_values("rank").iloc[0], df.sort_values("rank").iloc[1]
    assert first["block_n"] == LARGE.block_n and first["model_flips"] == ""
    assert second["block_n"] == 32 and float(second["tflops"]) > float(first["tflops"])   # the model's pick...
    assert "l2_bytes_per_clk x0.5" in second["model_flips"]                                 # ...and why not
    notes = []
    docs = export.documents(df, "gfx1100", notes.append)
    (entry,) = [e for _, doc, _ in docs for e in doc["entries"]]
    assert entry["schedule"]["block_n"] == LARGE.block_n        # the bucket is pinned to the default


def test_without_the_default_trial_the_non_robust_win_is_dropped_with_its_reason():
    df = build([_study(4096, [SMALL_TILE])], top_k=3)
    notes = []
    assert export.documents(df, "gfx1100", notes.append) == []
    assert any("reverses" in n and "l2_bytes_per_clk x0.5" in n for n in notes), notes


# 2048: at 1024^3 the tile's win over LARGE (66.0 vs 32.7) is no longer robust against the problem's own,
# grid-filling default there (61.5; l0_bytes_per_clk x0.5 flips it), so it ranks below -- as it should
@pytest.mark.parametrize("size", [2048])
def test_a_robust_win_keeps_rank_one(size):
    # the 1024 entry shipped before issue 38, with 128-bit staging loads: its own 32-bit ones touch 26 L0 lines
    # per load on average (ops/gemm/l0_lines.py) and make it L0-bound, 23.4 TFLOP/s (source=model)
    tuned = dict(SMALL_TILE, block_k=32, waves_m=1, waves_n=2, lds_pad=0, lds_store_bits=64, load_bits=128,
                 k_unroll=1, raster="row", group_m=4)
    df = build([_study(size, [tuned, LARGE.to_dict()])], top_k=3).sort_values("rank")
    assert df.iloc[0]["block_n"] == 32 and df.iloc[0]["model_flips"] == ""
    assert float(df.iloc[0]["tflops"]) > float(df.iloc[1]["tflops"])
