"""The attention backward tuned and exported like the forward (wmma_gen/ops/attention_bwd/tuning.py):
gate on the ranked kernels, ladder, export, lookup by attention_backward()."""
import json

import numpy as np
import pytest

import wmma_gen
from autotune import export, ladder
from autotune.study import SweepConfig, run_sweep
from wmma_gen.ops.attention_bwd import lookup, run
from wmma_gen.ops.attention_bwd.schedule import AttentionBwdSchedule


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("bwd_sweep")
    cfg = SweepConfig(arch="gfx1201", op="attention_bwd", dtypes=("f16",), head_dims=(64,), seqs=(512,),
                      causal=(True,), trials=2, device="emu", results=str(root / "results"), progress=False)
    result = run_sweep(cfg)
    df = ladder.build(result.studies, op="attention_bwd")
    ladder.write(df, cfg.results, cfg.arch, "attention_bwd", {"f16": 200.0})
    return root, result, df


def test_backward_trials_are_gated_and_ranked_by_the_model(swept):
    _, result, df = swept
    (study,) = result.studies
    done = [t for t in study.get_trials() if t.state.name == "COMPLETE"]
    assert done, [t.user_attrs.get("pruned_reason") or t.user_attrs.get("error") for t in study.get_trials()]
    for t in done:
        ua = t.user_attrs
        assert ua["validated"] and ua["gate_passed"] and ua["gate_isa_hash"] == ua["isa_hash"]
        assert ua["source"] == "model" and ua["gate_source"] == "emulator"
    assert list(df.columns) == ladder.columns("attention_bwd")


def test_export_and_attention_backward_uses_it(swept, tmp_path, monkeypatch):
    root, _, _ = swept
    written = export.export_from(root / "results", "gfx1201", tmp_path)
    assert [p.name for p in written] == ["gfx1201-attention_bwd-f16.json"]
    (entry,) = json.loads(written[0].read_text())["entries"]
    best = AttentionBwdSchedule.from_dict(entry["schedule"])
    assert lookup.lookup("gfx1201", "f16", 64, True, 600, tmp_path) == best
    monkeypatch.setattr(lookup, "DEFAULT_DIR", tmp_path)
    used = []
    real = run.compiled_kernels       # the backward's one compile step (the set may come from compile_op's LRU)
    monkeypatch.setattr(run, "compiled_kernels", lambda spec, s: used.append(s) or real(spec, s))
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 24, 2, 64)).astype(np.float16)
    o, lse = wmma_gen.attention(q, q, q, causal=True, return_lse=True, arch="gfx1201", device="emu")
    wmma_gen.attention_backward(q, q, q, o, q, lse, causal=True, arch="gfx1201", device="emu")
    assert used == [best]
