"""The CLI on `--device hip` through the emulator-backed HIP runtime (tests/hipstub): `check`
and a 2-trial sweep run the real HipDevice over the real hip-python bindings, give correct
results, and never label anything `hip` (the stand-in is not a GPU)."""
import json

import pytest

from wmma_gen.cli.main import main
from wmma_gen.device import select


@pytest.fixture
def fresh_devices(monkeypatch, stub):
    monkeypatch.setattr(select, "_shared", {})   # no HipDevice cached from another runtime
    yield stub


def test_check_device_hip_passes_and_says_emulator(fresh_devices, capsys):
    rc = main(["check", "--arch", "gfx1100", "--dtype", "f16", "--shape", "40x48x64", "--device", "hip", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["verdict"] == "PASS"
    assert data["source"] == "emulator" and data["source"] != "hip"
    assert fresh_devices.launches, "the launch did not go through the HIP runtime stand-in"


def test_two_trial_sweep_device_hip_ranks_by_the_model(fresh_devices, tmp_path, capsys):
    rc = main(["sweep", "--op", "gemm", "--arch", "gfx1100", "--dtypes", "f16", "--shapes", "64", "--trials", "2",
               "--device", "hip", "--results", str(tmp_path), "--no-progress", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    (study,) = data["studies"]
    assert study["complete"] >= 1 and study["source"] == "model"
    import pandas as pd
    ladder = pd.read_csv(tmp_path / "gfx1100" / "gemm_ladder.csv")
    assert set(ladder["source"]) == {"model"} and set(ladder["gate_source"]) == {"emulator"}
