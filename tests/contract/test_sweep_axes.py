"""Sweep axes from the op's declaration (ops/contract.py SweepAxis; issue 26): `wmma-gen sweep`
derives each op's flags from its spec's SWEEP_AXES and fills SweepConfig.axes, which the op's
Tuning.items crosses -- a new op (the dummy, registered by one line) gets `--lengths` with no
tuner edit; paged_attention gets --batches and --kv-dtypes."""
import json

import pytest

from wmma_gen.cli import main as cli
from wmma_gen.cli.main import main
from wmma_gen.cli.sweep_cmd import config_from
from wmma_gen.ops import registry

ARCH = "gfx1100"


@pytest.fixture
def dummy(tmp_path, monkeypatch):
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(tmp_path / "cache"))
    registry.register("dummy", "dummy_op.spec")          # the one registration line
    yield
    registry.unregister("dummy")


def _config(argv: list[str], op: str):
    args = cli.parser("sweep").parse_args(["sweep", "--arch", ARCH, "--op", op] + argv)
    return config_from(args, op)


def test_the_dummy_flag_reaches_its_studies(dummy, tmp_path, capsys):
    rc = main(["sweep", "--arch", ARCH, "--op", "dummy", "--lengths", "300", "--trials", "1", "--device", "emu",
               "--results", str(tmp_path / "results"), "--no-progress", "--json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    info = json.loads(out[out.index("{"):])
    assert [s["study"] for s in info["studies"]] == ["dummy-gfx1100-f16-n300"]
    assert info["studies"][0]["complete"] == 1
    ladder = (tmp_path / "results" / ARCH / "dummy_ladder.csv").read_text().splitlines()
    n_col = ladder[0].split(",").index("n")
    assert {row.split(",")[n_col] for row in ladder[1:]} == {"300"}


def test_the_dummy_defaults_come_from_its_tuning(dummy):
    from dummy_op.tuning import tuning
    cfg = _config([], "dummy")
    assert cfg.axes == {"lengths": tuple(tuning().defaults["lengths"])}
    assert [p["n"] for _, p in cfg.items()] == list(tuning().defaults["lengths"])


def test_an_axis_flag_of_another_op_is_refused(dummy, capsys):
    rc = main(["sweep", "--arch", ARCH, "--op", "gemm", "--lengths", "300", "--device", "emu", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "--lengths does not apply to --op gemm: --op gemm takes --shapes, --shapes-file" in err
    rc = main(["sweep", "--arch", ARCH, "--op", "dummy", "--batches", "2", "--device", "emu", "--no-progress"])
    assert rc == 2 and "--batches does not apply to --op dummy: --op dummy takes --lengths" in capsys.readouterr().err


def test_paged_batches_and_kv_dtypes_reach_its_studies():
    cfg = _config(["--dtypes", "f16", "--head-dims", "64", "--seqs", "256", "--causal", "on", "--batches", "2,4",
                   "--kv-dtypes", "same,fp8e5m2"], "paged_attention")
    assert cfg.axes["batches"] == (2, 4) and cfg.axes["kv_dtypes"] == ("", "fp8e5m2")
    got = {(d.kv_dtype, p["batch"]) for d, p in cfg.items()}
    assert got == {(kv, b) for kv in ("f16", "fp8e5m2") for b in (2, 4)}
    from autotune.study import study_name
    names = [study_name(cfg, d, p) for d, p in cfg.items()]
    assert len(set(names)) == 4 and all(n.endswith(f"-L256-b{p['batch']}") and f"-kv{d.kv_dtype}-" in n
                                        for n, (d, p) in zip(names, cfg.items()))


def test_paged_defaults_are_the_module_buckets_so_study_names_stay():
    """Without the new flags the studies are those the module constants gave before (journals resume)."""
    from wmma_gen.ops.paged_attention import tuning
    cfg = _config(["--dtypes", "f16", "--head-dims", "64", "--seqs", "256", "--causal", "on"], "paged_attention")
    got = [(d.kv_dtype, p["batch"]) for d, p in cfg.items()]
    assert got == [("f16" if kv == "" else kv, b) for kv in tuning.KV_DTYPES for b in tuning.BATCHES]


@pytest.mark.parametrize("value, why", [("f32", "same (the query dtype) or fp8e4m3, fp8e5m2"),
                                        ("", "empty list")])
def test_a_bad_kv_dtype_is_a_usage_error_naming_the_flag(value, why, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parser("sweep").parse_args(["sweep", "--arch", ARCH, "--op", "paged_attention", "--kv-dtypes", value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--kv-dtypes" in err and why in err


def test_a_problems_file_row_of_the_dummy_is_read_from_its_spec(dummy, tmp_path, capsys):
    """No problem_file module declared by the dummy: the row is its directive's and Problem's fields."""
    (tmp_path / "p.yaml").write_text("- {op: dummy, dtype: f16, n: 333}\n")
    rc = main(["sweep", "--arch", ARCH, "--problems", str(tmp_path / "p.yaml"), "--trials", "1", "--device", "emu",
               "--results", str(tmp_path / "results"), "--no-progress", "--json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert [s["study"] for s in json.loads(out[out.index("{"):])["studies"]] == ["dummy-gfx1100-f16-n333"]


def test_a_spec_row_is_checked_by_the_op_naming_item_and_field(dummy, tmp_path):
    from autotune.problems import ProblemFileError, parse
    from wmma_gen.tuner.rows import dumps
    with pytest.raises(ProblemFileError, match=r"problems\[1\]\.n = 0 is not allowed: an integer >= 1"):
        parse([{"op": "dummy", "dtype": "f16", "n": 5}, {"op": "dummy", "dtype": "f16", "n": 0}], "p.yaml", ARCH)
    with pytest.raises(ProblemFileError, match=r"problems\[0\]\.dtype = 'bf16' is not allowed: one of f16"):
        parse([{"op": "dummy", "dtype": "bf16", "n": 5}], "p.yaml", ARCH)
    with pytest.raises(ProblemFileError, match=r"problems\[0\]\.n = None is not allowed: given: dummy needs n"):
        parse([{"op": "dummy", "dtype": "f16"}], "p.yaml", ARCH)
    rows = parse([{"op": "paged_attention", "dtype": "f16", "head_dim": 64, "block_size": 16, "causal": True,
                   "batch": 2, "heads": 8, "kv_heads": 2, "seq_q": 1, "seq_len": 256}], "p.yaml", ARCH)
    assert rows[0].sizes()["seq_len"] == 256 and rows[0].directive().head_dim == 64
    assert parse(__import__("yaml").safe_load(dumps(rows)), "p.yaml", ARCH) == rows      # round trip
