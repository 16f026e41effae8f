"""A small sweep on emulator + model end to end: studies -> ladder files -> schedule JSON."""
import json

import matplotlib.image
import pandas as pd
from optuna.trial import TrialState
from sweep_helpers import ARCH

from autotune import export, ladder
from wmma_gen.ops import registry
from wmma_gen.ops.registry import tuning as adapter
from wmma_gen.ops.gemm.tuning import BASELINES
from autotune.study import Hooks, open_storage, run_sweep
from wmma_gen.cli.main import main
from wmma_gen.ops.gemm import lookup as schedules_db
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import SPACE, Schedule


def test_cli_sweep_writes_ladder_and_export_that_reload(tmp_path, capsys):
    res, out = tmp_path / "results", tmp_path / "schedules"
    rc = main(["sweep", "--arch", ARCH, "--dtypes", "i8", "--shapes", "256,256x512x256", "--trials", "2",
               "--device", "emu", "--results", str(res), "--no-progress", "--seed", "3"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "model estimates" in text and "TOP/s" in text
    pq, csv, png = (res / ARCH / f"gemm_ladder.{x}" for x in ("parquet", "csv", "png"))
    df = pd.read_parquet(pq)
    assert set(df["dtype"]) == {"i8"} and set(zip(df["m"], df["n"])) == {(256, 256), (256, 512)}
    assert (df["source"] == "model").all() and df["validated"].all()
    assert set(df[df["dtype"] == "i8"]["unit"]) == {"TOP/s"}
    assert ((df["fraction_of_peak"] > 0) & (df["fraction_of_peak"] <= 1)).all()
    assert {k.name for k in SPACE} <= set(df.columns)
    back = pd.read_csv(csv)
    assert list(back.columns) == list(df.columns) and len(back) == len(df)
    img = matplotlib.image.imread(png)
    assert img.ndim == 3 and img.shape[0] > 100

    assert main(["export", "--arch", ARCH, "--from", str(res), "--out", str(out)]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["gfx1100-gemm-i8.json"]
    doc = json.loads((out / "gfx1100-gemm-i8.json").read_text())
    assert doc["schema_version"] == schedules_db.SCHEMA_VERSION and doc["toolchain"]["mlir"]
    entries = schedules_db.load_file(out / "gfx1100-gemm-i8.json")
    hashes = {e["isa_hash"]: e["object_sha256"] for e in doc["entries"]}
    assert all(len(h) == 64 for h in hashes.values())
    assert hashes == {r["isa_hash"]: r["object_sha256"] for _, r in df[df["rank"] == 1].iterrows()
                      if r["isa_hash"] in hashes}
    assert {(e.problem.m, e.problem.n) for e in entries} == {(256, 256), (256, 512)}
    best = df[(df["dtype"] == "i8") & (df["rank"] == 1) & (df["n"] == 512)].iloc[0]
    got = schedules_db.lookup(ARCH, GemmDirective("i8"), GemmProblem(256, 512, 256), directory=out)
    assert got == Schedule(**{k.name: getattr(best[k.name], "item", lambda: best[k.name])() for k in SPACE})


def test_corrupted_schedule_is_pruned_by_gate_and_never_exported(small_config, tmp_path):
    bad = BASELINES[0]
    cfg = small_config(trials=5)
    result = run_sweep(cfg, Hooks(corrupt=lambda s: s == bad))
    trials = result.studies[0].get_trials()
    pruned = [t for t in trials if t.user_attrs.get("schedule") == bad.to_dict()]
    assert pruned and all(t.state == TrialState.PRUNED and t.user_attrs["stage"] == "gate" for t in pruned)
    df = ladder.build(result.studies)
    assert len(df) >= 1                                   # others passed, so the export is not empty
    written = export.export(df, cfg.arch, tmp_path / "schedules")
    exported = [e.schedule for p in written for e in schedules_db.load_file(p)]
    assert exported and bad not in exported
    assert not ((df["block_m"] == bad.block_m) & (df["block_n"] == bad.block_n) & (df["lds"] == bad.lds)
                & (df["waves_m"] == bad.waves_m) & (df["waves_n"] == bad.waves_n) & (df["block_k"] == bad.block_k)
                & (df["raster"] == bad.raster) & (df["load_bits"] == bad.load_bits)).any()


def test_export_refuses_rows_that_failed_the_gate(tmp_path, small_config):
    cfg = small_config(trials=2)
    df = ladder.build(run_sweep(cfg).studies)
    assert len(df) and adapter("gemm").documents(df, cfg.arch)
    df["validated"] = False
    assert export.export(df, cfg.arch, tmp_path / "none") == []


def test_rerun_of_finished_sweep_adds_nothing(small_config):
    cfg = small_config(trials=3)
    first = run_sweep(cfg).studies[0]
    n = len(first.get_trials())
    again = run_sweep(cfg).studies[0]
    assert len(again.get_trials()) == n
    assert open_storage(cfg.storage_url) is not None and str(cfg.storage_url).endswith("optuna.journal")


def test_gate_problem_scales_with_the_tile_not_the_problem():
    from wmma_gen.ops.gemm.signature import spec_key
    d, s = GemmDirective("f16"), Schedule(block_m=32, block_n=256, block_k=16)
    (small,) = registry.get("gemm").gate_problems(d, s, spec_key(d, s, GemmProblem(8192, 8192, 8192).as_dict()))
    assert (small.m, small.n, small.k) == (64, 256, 32)
