"""The command line of distributed sweeps (issue #16): `wmma-gen sweep --storage postgresql://...
--workers 2` end to end, `wmma-gen ladder` and `wmma-gen export --storage` from the database
alone, `wmma-gen dashboard`, and one-line refusals of bad storage URLs."""
from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
import urllib.request

import pandas as pd
import pytest
from optuna.trial import TrialState

from autotune.study import Hooks, run_sweep
from wmma_gen.cli.main import main

from test_postgres_server import ROOT, Fake, _free_port, config, pg_server, pg_url, the_study  # noqa: F401


def cli(*argv, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wmma_gen.cli.main", *map(str, argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def in_process(capsys, *argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of main(argv) in this process (argparse's refusals exit 2)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


# ladder and export in-process (a subprocess each cost ~2 s of imports): their real entry point is
# driven by test_a_bad_storage_url_is_refused_in_one_line_by_every_command
def test_ladder_and_export_come_from_the_database_alone(pg_url, tmp_path, capsys):
    run_sweep(config(pg_url, tmp_path / "sweep", 6), Hooks(objective=functools.partial(Fake, pause=0.0)))
    complete = sorted(t.number for t in the_study(pg_url).get_trials() if t.state == TrialState.COMPLETE)
    capsys.readouterr()
    rc, out, err = in_process(capsys, "ladder", "--storage", pg_url, "--arch", "gfx1100", "--op", "gemm",
                              "--top-k", 50, "--results", tmp_path / "elsewhere", "--json")
    assert rc == 0, err
    (info,) = json.loads(out)
    df = pd.read_parquet(info["ladder"]["parquet"])
    assert info["rows"] == len(df) and sorted(df["trial"]) == complete
    assert (tmp_path / "elsewhere" / "gfx1100" / "gemm_ladder.png").is_file()
    assert not (tmp_path / "sweep" / "gfx1100").exists()               # nothing came from a results dir
    out = tmp_path / "schedules"
    rc, _, err = in_process(capsys, "export", "--arch", "gfx1100", "--storage", pg_url, "--out", out)
    assert rc == 0, err
    doc = json.loads((out / "gfx1100-gemm-f16.json").read_text())
    best = df[df["rank"] == 1].iloc[0]
    assert [e["trial"] for e in doc["entries"]] == [int(best["trial"])]


@pytest.mark.parametrize("command", [["ladder"], ["export", "--arch", "gfx1100"], ["dashboard"],
                                     ["sweep", "--arch", "gfx1100"]], ids=lambda c: c[0])
def test_a_bad_storage_url_is_refused_in_one_line_by_every_command(command, tmp_path):
    r = cli(*command, "--storage", "mongodb://u:secret@db.invalid/sweeps", timeout=120)
    assert r.returncode == 2
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"wmma-gen {command[0]}: error: argument --storage: storage URL mongodb://u:***@")
    assert "scheme 'mongodb' is not supported" in last and "postgresql://USER:PASSWORD@HOST:PORT/DATABASE" in last
    assert "Traceback" not in r.stderr and "secret" not in r.stderr


def test_dashboard_without_the_extra_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna_dashboard", None)      # `import optuna_dashboard` fails
    rc, _, err = in_process(capsys, "dashboard", "--storage", tmp_path / "optuna.journal")
    assert rc == 2
    assert err.strip() == ("wmma-gen dashboard: error: optuna-dashboard is not installed: "
                                "pip install 'wmma-gen[dashboard]' (or: pip install optuna-dashboard)")


def test_dashboard_serves_the_study_storage(pg_url, tmp_path):
    pytest.importorskip("optuna_dashboard", reason="optional extra `dashboard` not installed")
    run_sweep(config(pg_url, tmp_path / "r", 3), Hooks(objective=Fake))
    name = the_study(pg_url).study_name
    port = _free_port()
    p = subprocess.Popen([sys.executable, "-m", "wmma_gen.cli.main", "dashboard", "--storage", pg_url,
                          "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, body = time.time() + 90, None
        while body is None:
            assert p.poll() is None, p.stderr.read()[-2000:]
            assert time.time() < deadline, "the dashboard never answered"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies", timeout=5) as resp:
                    body = json.loads(resp.read())
            except OSError:
                time.sleep(0.5)
        assert [s["study_name"] for s in body["study_summaries"]] == [name]
    finally:
        p.terminate()
        p.wait(timeout=30)
    assert "optuna-dashboard" in p.stdout.read() and "***" not in name


def test_sweep_with_two_workers_on_postgresql_end_to_end(pg_url, tmp_path):
    """The real objective (compile, gate on the emulator, model) with `--workers 2`: both
    processes share the study, and the ladder rebuilt from the database equals the sweep's."""
    sweep = cli("sweep", "--arch", "gfx1100", "--dtypes", "f16", "--shapes", "256", "--trials", 4, "--device", "emu",
                "--storage", pg_url, "--workers", 2, "--results", tmp_path / "r", "--no-progress", "--seed", 5)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    trials = the_study(pg_url).get_trials()
    assert sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials) == 4
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    assert len({t.user_attrs["worker_pid"] for t in trials if "worker_pid" in t.user_attrs}) == 2
    rebuilt = cli("ladder", "--storage", pg_url, "--results", tmp_path / "again")
    assert rebuilt.returncode == 0, rebuilt.stderr
    a = pd.read_csv(tmp_path / "r" / "gfx1100" / "gemm_ladder.csv")
    b = pd.read_csv(tmp_path / "again" / "gfx1100" / "gemm_ladder.csv")
    pd.testing.assert_frame_equal(a, b)
