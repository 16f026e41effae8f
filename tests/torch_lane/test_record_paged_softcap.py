"""A softcap paged-attention problem round-trips (issue 27 item 5): recorded from
wmma_gen.torch.flash_attn_with_kvcache (record_problems, ops/paged_attention/device.py plans)
-> problems file -> `wmma-gen sweep --problems` (gate on the emulator, model figures) ->
`wmma-gen export` -> the lookup chooses the softcap entry for a softcap call and the plain entry
for a plain one. A packed chunk longer than 16 tokens is counted as skipped, not written."""
import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> `import hipstub`

from autotune.problems import load  # noqa: E402
from wmma_gen import schedule_files as sf  # noqa: E402
from wmma_gen.cli.main import main  # noqa: E402
from wmma_gen.ops import plans  # noqa: E402
from wmma_gen.ops.paged_attention import lookup  # noqa: E402
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective  # noqa: E402
from wmma_gen.torch import flash_attn_with_kvcache, record_problems  # noqa: E402

ARCH = "gfx1100"
B, H, HKV, D, BS, WIDTH = 2, 4, 2, 64, 16, 3       # the table holds 48 keys: bucket seq 48


def _call(softcap: float):
    k_cache, v_cache = torch.randn(8, BS, HKV, D).half(), torch.randn(8, BS, HKV, D).half()
    table = torch.randperm(8)[:B * WIDTH].reshape(B, WIDTH).to(torch.int32)
    q = torch.randn(B, 1, H, D).half()
    lens = torch.tensor([33, 5], dtype=torch.int32)
    return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, block_table=table, causal=True,
                                   softcap=softcap)


@pytest.fixture(scope="module")
def recorded():
    import os
    os.environ["WMMA_GEN_ARCH"] = ARCH
    try:
        with record_problems() as rec:
            _call(5.0)
            _call(5.0)                    # the same problem: recorded once
            _call(0.0)
    finally:
        os.environ.pop("WMMA_GEN_ARCH", None)
    assert plans.observers == []
    return rec


def test_the_softcap_call_is_recorded_as_its_own_problem(recorded):
    paged = [p for p in recorded.problems if p["op"] == "paged_attention"]
    assert [p["softcap"] for p in paged] == [True, False] and recorded.skipped == 0
    for p in paged:
        assert (p["dtype"], p["kv_dtype"], p["head_dim"], p["block_size"], p["causal"], p["window"]) == \
            ("f16", "f16", D, BS, True, False)
        assert (p["batch"], p["heads"], p["kv_heads"], p["seq_q"], p["seq_len"]) == (B, H, HKV, 1, BS * WIDTH)


def test_record_sweep_export_lookup_round_trip(recorded, tmp_path, monkeypatch, capfd):
    path = recorded.save(tmp_path / "paged.yaml")
    problems = load(path, ARCH)
    assert [p.to_dict() for p in problems] == recorded.problems
    assert main(["sweep", "--problems", str(path), "--arch", ARCH, "--device", "emu", "--trials", "1",
                 "--results", str(tmp_path / "r"), "--no-progress"]) == 0
    assert main(["export", "--arch", ARCH, "--from", str(tmp_path / "r"), "--out", str(tmp_path / "s")]) == 0
    doc = json.loads((tmp_path / "s" / f"{ARCH}-paged_attention-f16.json").read_text())
    assert sorted(e["softcap"] for e in doc["entries"]) == [False, True]
    assert all(e["validated"] and e["source"] == "model" for e in doc["entries"])
    monkeypatch.setenv(sf.ENV_DIRS, str(tmp_path / "s"))
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    problem = dict(batch=B, heads=H, kv_heads=HKV, seq_q=1, max_blocks=WIDTH)
    for cap in (True, False):
        sf.forget_logged()
        capfd.readouterr()
        assert lookup.lookup(ARCH, PagedAttentionDirective("f16", D, softcap=cap), problem) is not None
        err = capfd.readouterr().err
        picked = [line for line in err.splitlines() if str(tmp_path / "s") in line]
        assert picked and ("softcap=True" in picked[0].split("->")[-1]) == cap, err


def test_a_chunk_longer_than_the_dense_form_is_skipped():
    from wmma_gen.torch.record import ProblemRecording
    rec = ProblemRecording()
    plan = plans.Plan((), dict(batch=1, heads=4, kv_heads=2, seq_q=64, max_blocks=4, block_size=16, head_dim=64,
                               window_left=-1, window_right=-1, softcap=0.0, scale=None, total_q=64))
    rec.observe("paged_attention", ARCH, {"named": {}, "kv_dtype": None, "causal": True, "return_lse": False}, plan)
    assert (rec.skipped, rec.problems, rec.archs) == (1, [], {ARCH})
