"""MLA decode swept, exported and looked up (ops/mla/{tuning,lookup}.py): `wmma-gen sweep --op mla
--trials 2` on one tiny study (gate on the emulator, model figures), `wmma-gen export`, then
wmma_gen.mla_decode() runs the exported schedule and says so under WMMA_GEN_LOG=schedules; a
file entry with an illegal schedule is refused naming the field."""
import json

import numpy as np
import pytest

import wmma_gen
from wmma_gen import schedule_files as sf
from wmma_gen.cli.main import main
from wmma_gen.ops.mla import api, lookup
from wmma_gen.ops.mla.check import random_latent

ARCH = "gfx1100"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("mla_sweep")
    rc = main(["sweep", "--arch", ARCH, "--op", "mla", "--trials", "2", "--device", "emu", "--dtypes", "bf16",
               "--seqs", "2048", "--causal", "off", "--kv-dtypes", "same", "--batches", "16", "--mla-heads", "16",
               "--results", str(root / "results"), "--no-progress"])
    assert rc == 0
    rc = main(["export", "--arch", ARCH, "--from", str(root / "results"), "--out", str(root / "schedules")])
    assert rc == 0
    return root / "schedules"


def test_export_has_a_validated_entry(exported):
    doc = json.loads((exported / f"{ARCH}-mla-bf16.json").read_text())
    assert doc["op"] == "mla" and len(doc["entries"]) == 1
    e = doc["entries"][0]
    assert e["bucket"] == {"seq": 2048, "batch": 16, "seq_q": 1, "heads": 16}
    assert (e["head_dim"], e["head_dim_v"], e["kv_dtype"], e["block_size"], e["causal"]) == (576, 512, "bf16", 64,
                                                                                          False)
    assert e["validated"] and e["source"] == "model" and e["tflops"] > 0
    assert len(lookup.load_file(exported / f"{ARCH}-mla-bf16.json")) == 1


def test_mla_decode_runs_the_exported_schedule(exported, monkeypatch, capfd):
    want = lookup.load_file(exported / f"{ARCH}-mla-bf16.json")[0]["schedule"]
    monkeypatch.setenv(sf.ENV_DIRS, str(exported))
    monkeypatch.setenv("WMMA_GEN_LOG", "schedules")
    sf.forget_logged()
    used = []
    real = api.compile_mla
    monkeypatch.setattr(api, "compile_mla", lambda d, s, arch: used.append(s) or real(d, s, arch))
    q, stored, _, table, lens = random_latent(dict(batch=2, heads=3, seq_q=1, head_dim=576, seq_lens=[40, 3]),
                                              "bf16", seed=2)
    wmma_gen.mla_decode(q, stored, table, lens, dtype="bf16", arch=ARCH, device="emu")
    assert used == [want]
    assert "mla gfx1100 bf16" in capfd.readouterr().err


def test_an_illegal_entry_names_the_field(exported, tmp_path):
    """A bucket with 0 heads, and a schedule the target refuses (waves=2: ~370 VGPRs on gfx11)."""
    doc = json.loads((exported / f"{ARCH}-mla-bf16.json").read_text())
    doc["entries"][0]["bucket"]["heads"] = 0
    path = tmp_path / f"{ARCH}-mla-bf16.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(sf.ScheduleFileError, match=r"bucket\.heads"):
        lookup.load_file(path)
    doc["entries"][0]["bucket"]["heads"] = 16
    doc["entries"][0]["schedule"]["waves"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(sf.ScheduleFileError, match=r"schedule.*VGPRs"):
        lookup.load_file(path)
