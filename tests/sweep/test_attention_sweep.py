"""The attention forward tuned like GEMM: studies, gate on the ranked object, ladder, export,
lookup by attention() -- through the op-agnostic sweep (wmma_gen/ops/attention/tuning.py)."""
import json

import numpy as np
import pytest

import wmma_gen
from autotune import export, ladder
from autotune.study import SweepConfig, run_sweep
from wmma_gen.ops.attention import api, lookup
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention.schedule import AttentionSchedule


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("attn_sweep")
    cfg = SweepConfig(arch="gfx1100", op="attention", dtypes=("f16",), head_dims=(64,), seqs=(512,),
                      causal=(True,), trials=3, device="emu", results=str(root / "results"), progress=False)
    result = run_sweep(cfg)
    df = ladder.build(result.studies, op="attention")
    paths = ladder.write(df, cfg.results, cfg.arch, "attention", {"f16": 122.8})
    return root, result, df, paths


def test_trials_are_gated_on_the_ranked_object_and_estimated_by_the_model(swept):
    _, result, df, _ = swept
    (study,) = result.studies
    done = [t for t in study.get_trials() if t.state.name == "COMPLETE"]
    assert done, [t.user_attrs.get("pruned_reason") for t in study.get_trials()]
    for t in done:
        ua = t.user_attrs
        assert ua["validated"] and ua["gate_passed"] and ua["gate_source"] == "emulator"
        assert ua["gate_isa_hash"] == ua["isa_hash"]
        assert ua["source"] == "model" and ua["tflops"] == pytest.approx(t.value)
    assert study.user_attrs["flops_convention"].startswith("4*D")
    assert list(df.columns) == ladder.columns("attention") and (df["rank"] >= 1).all()


def test_ladder_round_trips_and_export_feeds_attention(swept, tmp_path, monkeypatch):
    root, _, df, paths = swept
    back = ladder.read(paths["parquet"])
    assert len(back) == len(df) and set(back["op"]) == {"attention"}
    written = export.export_from(root / "results", "gfx1100", tmp_path)
    assert [p.name for p in written] == ["gfx1100-attention-f16.json"]
    doc = json.loads(written[0].read_text())
    (entry,) = doc["entries"]
    assert entry["head_dim"] == 64 and entry["causal"] is True and entry["bucket"] == {"seq": 512}
    best = AttentionSchedule.from_dict(entry["schedule"])
    d = AttentionDirective("f16", 64, causal=True)
    assert lookup.lookup("gfx1100", d, 700, tmp_path) == best
    assert lookup.lookup("gfx1100", AttentionDirective("f16", 128, causal=True), 700, tmp_path) is None
    monkeypatch.setattr(lookup, "DEFAULT_DIR", tmp_path)
    used = []
    real = api.compile_attention
    monkeypatch.setattr(api, "compile_attention", lambda d_, s, a: used.append(s) or real(d_, s, a))
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 40, 2, 64)).astype(np.float16)
    wmma_gen.attention(q, q, q, causal=True, device="emu")
    assert used == [best]


def test_a_corrupt_export_falls_back_with_a_warning(tmp_path):
    (tmp_path / "gfx1100-attention-f16.json").write_text('{"schema": "wmma_gen/attention_schedules", '
                                                         '"schema_version": 1, "arch": "gfx1100", "dtype": "f16", '
                                                         '"entries": [{"validated": false}]}')
    with pytest.warns(lookup.AttentionScheduleFileWarning, match=r"entries\[0\]\.validated"):
        assert lookup.lookup("gfx1100", AttentionDirective("f16", 64), 512, tmp_path) is None
