"""`wmma-gen schedules list|show|remove`, `export` to the user dir (all or nothing across ops),
read-only `--storage` that never creates a file, and the sweep's untracked default results dir."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from autotune import export as export_mod, ladder
from wmma_gen import schedule_files as sf, userdirs
from wmma_gen.cli.main import main
from wmma_gen.ops.gemm import lookup as gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule

SMALL = Schedule(block_m=32, block_n=32, block_k=16, waves_m=1, waves_n=2)


def gemm_doc(dtype="f16", schedule=SMALL, **top) -> dict:
    acc = "i32" if dtype == "i8" else "f32"
    return {"schema": sf.SCHEMA, "schema_version": 1, "arch": "gfx1100", "op": "gemm", "dtype": dtype,
            "entries": [{"bucket": {"m": 64, "n": 64, "k": 64}, "acc": acc, "layout": "NN",
                         "schedule": schedule.to_dict(), "tflops": 10.0, "unit": "TFLOP/s", "source": "model",
                         "validated": True}], **top}


@pytest.fixture
def places(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    env, shipped = tmp_path / "env", tmp_path / "shipped"
    monkeypatch.setenv(sf.ENV_DIRS, str(env))
    monkeypatch.setattr(sf, "SHIPPED_DIR", shipped)
    monkeypatch.setattr(gemm, "DEFAULT_DIR", shipped)
    for d in (env, shipped):
        d.mkdir()
    return {"env": env, "user": userdirs.schedules_dir(), "shipped": shipped}


def put(directory, doc: dict, name: str | None = None):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or sf.file_name(doc["arch"], doc["op"], doc["dtype"]))
    path.write_text(json.dumps(doc))
    return path


def run(argv, capsys) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


# ---- list / show / remove ------------------------------------------------------------------------
def test_list_shows_every_file_in_lookup_order_and_which_wins(places, capsys):
    put(places["shipped"], gemm_doc())
    put(places["user"], gemm_doc())
    put(places["shipped"], gemm_doc("i8"))
    bad = put(places["env"], gemm_doc("bf16", schema_version=7))
    (places["env"] / "notes.json").write_text("{}")
    rc, out, _ = run(["schedules", "list", "--json"], capsys)
    assert rc == 0
    got = json.loads(out)
    assert [(d["origin"], d["exists"]) for d in got["search_path"]] == [(sf.ENV_DIRS, True), ("user", True),
                                                                         ("shipped", True)]
    rows = [(r["origin"], r["op"], r["dtype"], r["entries"], r["status"]) for r in got["files"]]
    assert rows == [(sf.ENV_DIRS, "gemm", "bf16", None, "refused"), (sf.ENV_DIRS, None, None, None, "ignored"),
                    ("user", "gemm", "f16", 1, "used"), ("shipped", "gemm", "f16", 1, "used"),
                    ("shipped", "gemm", "i8", 1, "used")]
    assert [r.get("precedence") for r in got["files"]] == [None, None, 1, 2, 1]
    assert got["files"][0]["error"].startswith(f"{bad}: field 'schema_version' = 7 is not allowed")
    rc, text, _ = run(["schedules", "list", "--op", "gemm", "--arch", "gfx1100"], capsys)
    assert rc == 0 and "search path" in text and "(does not exist)" not in text
    assert f"{places['user'] / 'gfx1100-gemm-f16.json'}" in text and "used #1" in text and "used #2" in text


def test_list_skips_a_fifo_named_like_a_schedule_file(places, capsys):
    """A FIFO is never opened (opening it would block until a writer comes: the old hang)."""
    put(places["shipped"], gemm_doc())
    places["env"].mkdir(parents=True, exist_ok=True)
    os.mkfifo(places["env"] / "gfx1100-gemm-f16.json")
    rc, out, _ = run(["schedules", "list", "--json"], capsys)
    assert rc == 0
    assert [(r["origin"], r["status"]) for r in json.loads(out)["files"]] == [("shipped", "used")]
    with pytest.raises(sf.ScheduleFileError, match="not a regular file"):
        sf.read(places["env"] / "gfx1100-gemm-f16.json")


@pytest.mark.parametrize("argv,needle", [(["--op", "nope"], "--op='nope' is not allowed: one of gemm"),
                                         (["--arch", "gfx9999"], "gfx9999")])
def test_list_refuses_an_unknown_op_or_arch(places, capsys, argv, needle):
    rc, _, err = run(["schedules", "list"] + argv, capsys)
    assert rc == 2 and needle in err and "error" in err


def test_list_with_nothing_says_defaults_are_used(places, capsys):
    rc, text, _ = run(["schedules", "list"], capsys)
    assert rc == 0 and "(does not exist)" in text and "default schedule" in text


def test_show_by_key_shows_the_winning_file_and_by_path(places, capsys):
    put(places["shipped"], gemm_doc())
    user = put(places["user"], gemm_doc())
    rc, out, _ = run(["schedules", "show", "gfx1100-gemm-f16", "--json"], capsys)
    assert rc == 0
    info = json.loads(out)
    assert info["file"] == str(user) and info["origin"] == "user"
    assert info["other_files"] == [str(places["shipped"] / "gfx1100-gemm-f16.json")]
    assert info["entries"][0]["key"] == "m=64 n=64 k=64 acc=f32 layout=NN" and info["entries"][0]["tflops"] == 10.0
    rc, text, _ = run(["schedules", "show", str(places["shipped"] / "gfx1100-gemm-f16.json")], capsys)
    assert rc == 0 and "(given)" in text and "block_m=32" in text


@pytest.mark.parametrize("arg,needle", [("gfx1100-gemm-bf16", "no gfx1100-gemm-bf16.json in"),
                                        ("nonsense", "ARCH-OP-DTYPE"),
                                        ("gfx1100-gemm-i8", "field 'entries[0].tflops' = nan")])
def test_show_refusals_exit_2_naming_the_problem(places, capsys, arg, needle):
    d = gemm_doc("i8")
    d["entries"][0]["tflops"] = float("nan")
    put(places["user"], d)
    rc, out, err = run(["schedules", "show", arg], capsys)
    assert rc == 2 and needle in err and "Traceback" not in err, err


def test_remove_deletes_from_the_user_dir_only(places, capsys):
    shipped = put(places["shipped"], gemm_doc())
    user = put(places["user"], gemm_doc())
    env = put(places["env"], gemm_doc("i8"))
    for arg in (str(shipped), str(env), "gfx1100-gemm-i8"):     # not in the user dir: refused, nothing deleted
        rc, _, err = run(["schedules", "remove", arg], capsys)
        assert rc == 2 and str(places["user"]) in err, err
    rc, _, err = run(["schedules", "remove", "gfx1100-gemm-f16", "gfx1100-gemm-i8"], capsys)   # all or none
    assert rc == 2 and user.exists() and shipped.exists() and env.exists()
    rc, text, _ = run(["schedules", "remove", "gfx1100-gemm-f16"], capsys)
    assert rc == 0 and not user.exists() and shipped.exists()
    assert text.strip() == f"removed {user}; lookups for gfx1100-gemm-f16 now use {shipped}"
    assert gemm.lookup_entry("gfx1100", GemmDirective("f16"), GemmProblem(64, 64, 64)).path == str(shipped)


def test_schedules_command_starts_without_heavy_modules(places):
    probe = ("import sys, contextlib, io; from wmma_gen.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): code = main(['schedules', 'list'])\n"
             "print(code, sorted(m for m in ('mlir', 'optuna', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["0", "[]"], done.stdout


# ---- export: user dir by default, all or nothing across ops ----------------------------------------
def ladder_frame(dtypes=("f16", "i8"), bad_dtype=None) -> pd.DataFrame:
    rows = []
    for i, dt in enumerate(dtypes):
        sched = SMALL.to_dict() | ({"block_m": 48} if dt == bad_dtype else {})
        rows.append(dict(arch="gfx1100", op="gemm", dtype=dt, acc="i32" if dt == "i8" else "f32", layout="NN",
                         m=256, n=256, k=256, batch=1, study=f"s{i}", trial=i, rank=1, **sched, seconds=1e-3,
                         tflops=10.0, unit="TFLOP/s", peak_tflops=122.88, fraction_of_peak=10 / 122.88,
                         source="model", validated=True, gate_source="emulator", gate_max_abs=0.0, vgprs=100,
                         lds_bytes=0, occupancy=4.0, limiter="alu", isa_hash="ab" * 16, toolchain_mlir="m",
                         toolchain_lld="l", wmma_gen_version="0", timestamp="2026-01-01 00:00:00"))
    return pd.DataFrame(rows, columns=ladder.COLUMNS).assign(ladder_rows=len(rows))


def results_with(tmp_path, df, garbage_attention=False):
    res = tmp_path / "res"
    (res / "gfx1100").mkdir(parents=True)
    df.to_parquet(res / "gfx1100" / "gemm_ladder.parquet")
    if garbage_attention:
        (res / "gfx1100" / "attention_ladder.parquet").write_bytes(b"PAR1" + b"\0" * 64)
    return res


def test_export_writes_the_user_dir_by_default_and_lookup_uses_it(places, tmp_path, capsys):
    res = results_with(tmp_path, ladder_frame())
    rc, text, err = run(["export", "--arch", "gfx1100", "--from", str(res)], capsys)
    assert rc == 0, err
    assert sorted(p.name for p in places["user"].iterdir()) == ["gfx1100-gemm-f16.json", "gfx1100-gemm-i8.json"]
    assert gemm.lookup_entry("gfx1100", GemmDirective("f16"), GemmProblem(256, 256, 256)).path.startswith(str(places["user"]))


def test_export_reads_the_sweeps_default_results_dir(places, tmp_path, capsys):
    res = userdirs.results_dir()
    res.mkdir(parents=True)
    (res / "gfx1100").mkdir()
    ladder_frame().to_parquet(res / "gfx1100" / "gemm_ladder.parquet")
    rc, _, err = run(["export", "--arch", "gfx1100"], capsys)
    assert rc == 0, err
    assert (places["user"] / "gfx1100-gemm-i8.json").is_file()


@pytest.mark.parametrize("case", ["garbage-attention-ladder", "one-doc-illegal", "write-fails"])
def test_export_is_all_or_nothing_across_ops(places, tmp_path, capsys, monkeypatch, case):
    out = tmp_path / "out"
    out.mkdir()
    old = put(out, gemm_doc("f16"))
    before = old.read_bytes()
    df = ladder_frame(bad_dtype="i8" if case == "one-doc-illegal" else None)
    res = results_with(tmp_path, df, garbage_attention=case == "garbage-attention-ladder")
    if case == "write-fails":
        calls = []

        class FullDisk:
            @staticmethod
            def dump(*a, **k):
                calls.append(1)
                if len(calls) == 2:
                    raise OSError(28, "No space left on device")
                return json.dump(*a, **k)
        monkeypatch.setattr(export_mod, "json", FullDisk)
        with pytest.raises(OSError):
            export_mod.export_from(res, "gfx1100", out)
    else:
        rc, _, err = run(["export", "--arch", "gfx1100", "--from", str(res), "--out", str(out)], capsys)
        assert rc == 2 and "Traceback" not in err, err
        assert ("attention_ladder.parquet" if case == "garbage-attention-ladder" else "block_m") in err
    assert sorted(p.name for p in out.iterdir()) == ["gfx1100-gemm-f16.json"]     # no i8 file, no temp file
    assert old.read_bytes() == before                                             # the old f16 file untouched


@pytest.mark.parametrize("command", ["export", "ladder"])
@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_read_only_storage_that_does_not_exist_is_refused_and_not_created(tmp_path, capsys, command, kind):
    missing = tmp_path / ("nope.journal" if kind == "journal" else "nope.db")
    url = str(missing) if kind == "journal" else f"sqlite:///{missing}"
    argv = [command, "--arch", "gfx1100", "--storage", url] + (["--out", str(tmp_path / "o")] if command == "export"
                                                                else ["--results", str(tmp_path / "r")])
    rc, _, err = run(argv, capsys)
    assert rc == 2 and "--storage" in err and "does not exist" in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ---- the README main job writes no tracked file --------------------------------------------------------
def test_sweep_default_results_dir_is_the_user_data_dir(places, tmp_path):
    from wmma_gen.cli import ladder_cmd, sweep_cmd
    from wmma_gen.cli.main import parser
    args = parser("sweep").parse_args(["sweep", "--quick", "--arch", "gfx1100"])
    cfg = sweep_cmd.config_from(args, "gemm")
    assert cfg.results == str(tmp_path / "xdg" / "wmma_gen" / "results")
    assert cfg.storage_url == os.path.join(cfg.results, "gfx1100", "optuna.journal")
    assert sweep_cmd._from(cfg.results) == ""              # the printed `next: wmma-gen export` needs no --from
    largs = parser("ladder").parse_args(["ladder", "--arch", "gfx1100"])
    assert ladder_cmd.results_of(largs) == cfg.results
    from autotune.study import SweepConfig
    assert SweepConfig(arch="gfx1100").results == cfg.results
