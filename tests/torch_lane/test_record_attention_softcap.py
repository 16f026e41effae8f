"""A softcap attention forward round-trips (issue 27 item 5): recorded from
wmma_gen.torch.flash_attn_func(softcap=) -> problems file (softcap: true) -> `wmma-gen sweep
--problems` (gate on the emulator, model figures) -> `wmma-gen export` (entry "softcap": true)
-> ops/attention/lookup.py prefers that entry for a softcap call and another for a plain one;
--softcap on crosses the built-in studies with the flag."""
import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # tests/ -> `import hipstub`

from autotune.problems import load  # noqa: E402
from wmma_gen import schedule_files as sf  # noqa: E402
from wmma_gen.cli.main import main, parser  # noqa: E402
from wmma_gen.cli.sweep_cmd import config_from  # noqa: E402
from wmma_gen.ops.attention import lookup  # noqa: E402
from wmma_gen.attention_common.directive import AttentionDirective  # noqa: E402
from wmma_gen.ops.attention.schedule import AttentionSchedule  # noqa: E402
from wmma_gen.ops.registry import tuning  # noqa: E402
from wmma_gen.torch import flash_attn_func, record_problems  # noqa: E402

ARCH = "gfx1100"


@pytest.fixture(scope="module")
def recorded():
    q, k, v = (torch.randn(1, 16, 2, 32).half() for _ in range(3))
    with record_problems() as rec:
        flash_attn_func(q, k, v, causal=True, softcap=5.0)
        flash_attn_func(q, k, v, causal=True)
    return rec


def test_softcap_is_recorded_and_read_back(recorded, tmp_path):
    rows = [p for p in recorded.problems if p["op"] == "attention"]
    assert [p.get("softcap", False) for p in rows] == [True, False]
    problems = load(recorded.save(tmp_path / "a.yaml"), ARCH)
    assert [p.to_dict() for p in problems] == recorded.problems
    assert [p.directive().softcap for p in problems] == [True, False]


def test_record_sweep_export_lookup_round_trip(recorded, tmp_path, monkeypatch):
    path = recorded.save(tmp_path / "a.yaml")
    assert main(["sweep", "--problems", str(path), "--op", "attention", "--arch", ARCH, "--device", "emu",
                 "--trials", "1", "--results", str(tmp_path / "r"), "--no-progress"]) == 0
    assert main(["export", "--arch", ARCH, "--from", str(tmp_path / "r"), "--out", str(tmp_path / "s")]) == 0
    doc = json.loads((tmp_path / "s" / f"{ARCH}-attention-f16.json").read_text())
    assert sorted(e.get("softcap", False) for e in doc["entries"]) == [False, True]
    # make the two entries tell apart: the plain one gets another legal schedule
    other = AttentionSchedule(block_m=32, block_n=32, waves=2).to_dict()
    for e in doc["entries"]:
        if not e.get("softcap"):
            e["schedule"] = {**e["schedule"], **other}
    (tmp_path / "s" / f"{ARCH}-attention-f16.json").write_text(json.dumps(doc))
    monkeypatch.setenv(sf.ENV_DIRS, str(tmp_path / "s"))
    capped = lookup.lookup(ARCH, AttentionDirective("f16", 32, causal=True, softcap=True), 16, seq_q=16)
    plain = lookup.lookup(ARCH, AttentionDirective("f16", 32, causal=True), 16, seq_q=16)
    assert (plain.block_m, plain.block_n, plain.waves) == (32, 32, 2)
    assert capped is not None and capped != plain


def test_softcap_flag_crosses_the_studies():
    args = parser("sweep").parse_args(["sweep", "--op", "attention", "--arch", ARCH, "--dtypes", "f16",
                                       "--head-dims", "64", "--seqs", "1024", "--causal", "on", "--softcap", "off,on"])
    cfg = config_from(args, "attention")
    items = tuning("attention").items(cfg)
    assert [d.softcap for d, _ in items] == [False, True]
    names = [tuning("attention").study_name(cfg, d, p) for d, p in items]
    assert names[0] + "-softcap" == names[1]
    with pytest.raises(SystemExit):
        parser("sweep").parse_args(["sweep", "--arch", ARCH, "--softcap", "maybe"])
