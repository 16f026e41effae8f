"""Proof of the op contract (issue 26 item 6): an op outside the package -- one folder
(dummy_op/: kernel, spec, tuning) and one `registry.register` line -- goes through the CLI's
compile, check, analyze, sweep --trials 2 and export with no other file touched."""
import json

import pytest

from wmma_gen.cli.main import main
from wmma_gen.ops import registry

ARCH = "gfx1100"


@pytest.fixture(autouse=True)
def dummy(tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    registry.register("dummy", "dummy_op.spec")          # the one registration line
    yield
    registry.unregister("dummy")


def _json(argv, capsys):
    rc = main(argv + ["--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out[out.index("{"):]) if "{" in out else out


def test_compile_check_analyze_through_the_cli(tmp_path, capsys):
    rc, info = _json(["compile", "--arch", ARCH, "--op", "dummy", "--dtype", "f16", "--length", "70", "--block", "32",
                      "--out", str(tmp_path / "k")], capsys)
    assert rc == 0 and info["kernel"] == "axpy" and info["metadata"]["vgpr_count"] > 0
    assert (tmp_path / "k" / "kernel.hsaco").read_bytes()[:4] == b"\x7fELF"
    rc, r = _json(["check", "--arch", ARCH, "--op", "dummy", "--dtype", "f16", "--length", "70", "--block", "32",
                   "--device", "emu", "--seed", "3"], capsys)
    assert rc == 0 and r["verdict"] == "PASS" and r["problem"] == {"n": 70} and r["source"] == "emulator"
    rc, a = _json(["analyze", "--arch", ARCH, "--op", "dummy", "--dtype", "f16", "--length", "4096"], capsys)
    assert rc == 0 and a["estimate"]["source"] == "model" and a["estimate"]["seconds"] > 0


def test_selftest_checks_the_op_from_its_spec(capsys):
    rc = main(["selftest", "--device", "emu", "--arch", ARCH, "--op", "dummy", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and [(r["op"], r["problem"], r["passed"]) for r in rep["rows"]] == [("dummy", "n=77", True)]
    assert rep["untested_ops"] == []


def test_a_flag_of_another_op_is_refused_for_the_dummy(capsys):
    rc = main(["check", "--arch", ARCH, "--op", "dummy", "--dtype", "f16", "--shape", "64x64x64"])
    assert rc == 2 and "--shape does not apply to --op dummy" in capsys.readouterr().err


def test_sweep_two_trials_then_export(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "schedules"
    rc = main(["sweep", "--arch", ARCH, "--op", "dummy", "--trials", "2", "--device", "emu", "--results", str(results),
               "--no-progress"])
    assert rc == 0, capsys.readouterr()
    ladder = results / ARCH / "dummy_ladder.csv"
    assert ladder.is_file()
    rc = main(["export", "--arch", ARCH, "--from", str(results), "--out", str(out)])
    assert rc == 0, capsys.readouterr()
    doc = json.loads((out / f"{ARCH}-dummy-f16.json").read_text())
    assert doc["op"] == "dummy" and sorted(e["bucket"]["n"] for e in doc["entries"]) == [100, 4096]
    assert all(e["validated"] and e["source"] == "model" for e in doc["entries"])
