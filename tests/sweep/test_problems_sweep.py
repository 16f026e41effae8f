"""`wmma-gen sweep --problems FILE` end to end on the emulator (issue 25 item 2): a GEMM NT with
batch, bias and GELU and a GQA attention (forward and backward) with Sq != Sk, causal and a
sliding window are each tuned on exactly that problem, exported, and the calls of those
problems then run the exported schedules (WMMA_GEN_LOG=schedules names file and bucket)."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml

import wmma_gen
from wmma_gen import schedule_files as sf
from wmma_gen.cli.main import main
from wmma_gen.ops.attention import api as attn_api
from wmma_gen.ops.gemm import api as gemm_api
from wmma_gen.ops.gemm.schedule import Schedule

PROBLEMS = [
    {"op": "gemm", "dtype": "f16", "layout": "NT", "batch": 2, "m": 64, "n": 64, "k": 64,
     "epilogue": {"bias": True, "activation": "gelu"}},
    {"op": "attention", "dtype": "f16", "head_dim": 32, "batch": 1, "heads": 4, "kv_heads": 2, "seq_q": 48,
     "seq_k": 80, "causal": True, "window": [16, 0]},
    {"op": "attention_bwd", "dtype": "f16", "head_dim": 32, "batch": 1, "heads": 4, "kv_heads": 2, "seq_q": 48,
     "seq_k": 80, "causal": True, "window": [16, 0]},
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("problems_sweep")
    path = root / "problems.yaml"
    path.write_text(yaml.safe_dump(PROBLEMS))
    results, out = root / "results", root / "schedules"
    assert main(["sweep", "--problems", str(path), "--arch", "gfx1100", "--device", "emu", "--trials", "2",
                 "--results", str(results), "--no-progress", "--json"]) == 0
    assert main(["export", "--arch", "gfx1100", "--from", str(results), "--out", str(out)]) == 0
    return results / "gfx1100", out


def test_each_study_is_tuned_on_exactly_its_problem(exported):
    ladders, _ = exported
    g = pd.read_parquet(ladders / "gemm_ladder.parquet")
    assert set(zip(g["layout"], g["batch"], g["m"], g["n"], g["k"])) == {("NT", 2, 64, 64, 64)}
    assert (g["study"] == "gemm-gfx1100-f16-f32-NT-64x64x64-b2-biasn-gelu").all()
    for op in ("attention", "attention_bwd"):
        a = pd.read_parquet(ladders / f"{op}_ladder.parquet")
        assert set(zip(a["head_dim"], a["causal"], a["batch"], a["heads"], a["kv_heads"], a["seq_q"], a["seq_k"])) \
            == {(32, True, 1, 4, 2, 48, 80)}
        assert (a["study"] == f"{op}-gfx1100-f16-hd32-causal-s48x80-b1h4kv2-w16_0").all()


def test_exported_buckets_carry_what_the_lookup_matches(exported):
    _, out = exported
    (g,) = json.loads((out / "gfx1100-gemm-f16.json").read_text())["entries"]
    assert g["bucket"] == {"m": 64, "n": 64, "k": 64, "batch": 2} and g["layout"] == "NT"
    for op in ("attention", "attention_bwd"):
        (e,) = json.loads((out / f"gfx1100-{op}-f16.json").read_text())["entries"]
        assert (e["head_dim"], e["causal"], e["bucket"]) == (32, True, {"seq": 80, "seq_q": 48})


def test_the_calls_of_those_problems_run_the_exported_schedules(exported, monkeypatch, capsys):
    _, out = exported
    monkeypatch.setenv("WMMA_GEN_SCHEDULES", str(out))
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    sf.forget_logged()
    want = {op: json.loads((out / f"gfx1100-{op}-f16.json").read_text())["entries"][0]["schedule"]
            for op in ("gemm", "attention", "attention_bwd")}
    used = []
    real = gemm_api.default_schedule
    monkeypatch.setattr(gemm_api, "default_schedule", lambda d, arch, p: used.append(real(d, arch, p)) or used[-1])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 64, 64)).astype(np.float16)
    b = rng.standard_normal((2, 64, 64)).astype(np.float16)
    wmma_gen.gemm(a, b, layout="NT", bias=np.ones(64, np.float32), activation="gelu", device="emu")
    assert used == [Schedule.from_dict(want["gemm"])]
    chosen = []
    real_choose = attn_api.choose_schedule
    monkeypatch.setattr(attn_api, "choose_schedule", lambda d, p, arch: chosen.append(real_choose(d, p, arch))
                        or chosen[-1])
    q = rng.standard_normal((1, 48, 4, 32)).astype(np.float16)
    k, v = (rng.standard_normal((1, 80, 2, 32)).astype(np.float16) for _ in range(2))
    o, lse = wmma_gen.attention(q, k, v, causal=True, window=(16, 0), return_lse=True, device="emu")
    assert [s.to_dict() for s in chosen] == [want["attention"]]
    wmma_gen.attention_backward(q, k, v, o, np.ones_like(o), lse, causal=True, window=(16, 0), device="emu")
    lines = capsys.readouterr().err.splitlines()
    gemm_file, fwd_file, bwd_file = (out / f"gfx1100-{op}-f16.json" for op in ("gemm", "attention", "attention_bwd"))
    assert (f"wmma_gen schedules: gemm gfx1100 f16 m=64 n=64 k=64 acc=f32 layout=NT batch=2 bias=n activation=gelu "
            f"-> {gemm_file} (WMMA_GEN_SCHEDULES) bucket m=64 n=64 k=64 acc=f32 layout=NT batch=2 bias=n activation=gelu") in lines
    assert any(x.startswith("wmma_gen schedules: attention gfx1100 f16 head_dim=32 causal=True window=True")
               and x.endswith(f"-> {fwd_file} (WMMA_GEN_SCHEDULES) bucket head_dim=32 causal=True seq=80 seq_q=48 "
                              "window=True")
               for x in lines), lines
    assert any(x.startswith("wmma_gen schedules: attention_bwd gfx1100 f16 head_dim=32 causal=True seq_k=80 window=True")
               and x.endswith(f"-> {bwd_file} (WMMA_GEN_SCHEDULES) bucket head_dim=32 causal=True seq=80 seq_q=48 "
                              "window=True")
               for x in lines), lines
