"""Bad input to the CLI (issue #13 items 4-7): each command x malformed argument must exit 2 with
a message naming the argument (or the file), print no traceback and write nothing.

Every case runs `main()` in-process inside an empty working directory; an exception escaping
main (a traceback) fails the case, and the directory tree must be unchanged afterwards."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from autotune import ladder
from wmma_gen.cli.main import main
from wmma_gen.ops.gemm.schedule import Schedule

SWEEP = ["sweep", "--arch", "gfx1100", "--device", "emu", "--no-progress", "--dtypes", "f16", "--shapes", "64",
         "--trials", "1", "--results", "res"]
EXPORT = ["export", "--arch", "gfx1100", "--from", "ladders/gemm_ladder.csv", "--out", "out"]
CHECK = ["check", "--arch", "gfx1100", "--dtype", "f16", "--shape", "16x16x16", "--device", "emu"]
COMPILE = ["compile", "--arch", "gfx1100", "--dtype", "f16", "--shape", "16x16x16", "--out", "kernel"]
ATTN = ["check", "--arch", "gfx1100", "--dtype", "f16", "--op", "attention", "--device", "emu"]
COMPILE_ATTN = ["compile", "--arch", "gfx1100", "--dtype", "f16", "--op", "attention", "--out", "kernel"]


def with_arg(base: list[str], flag: str, value: str | None) -> list[str]:
    """`base` with `flag` set to `value` (replaced if present; value None drops the flag)."""
    out, i = [], 0
    while i < len(base):
        if base[i] == flag:
            i += 2
            continue
        out.append(base[i])
        i += 1
    return out + ([flag, value] if value is not None else [])


# (id, argv, text the message must contain)
SWEEP_CASES = [
    ("trials-zero", with_arg(SWEEP, "--trials", "0"), "--trials"),
    ("trials-negative", with_arg(SWEEP, "--trials", "-3"), "--trials"),
    ("trials-text", with_arg(SWEEP, "--trials", "many"), "--trials"),
    ("trials-float", with_arg(SWEEP, "--trials", "1.5"), "--trials"),
    ("dtypes-empty", with_arg(SWEEP, "--dtypes", ""), "--dtypes"),
    ("dtypes-blank-item", with_arg(SWEEP, "--dtypes", "f16,,i8"), "--dtypes"),
    ("dtypes-unknown", with_arg(SWEEP, "--dtypes", "f17"), "--dtypes"),
    ("dtypes-not-on-arch", with_arg(SWEEP, "--dtypes", "fp8"), "--dtypes"),
    ("shapes-empty", with_arg(SWEEP, "--shapes", ""), "--shapes"),
    ("shapes-zero", with_arg(SWEEP, "--shapes", "0"), "--shapes"),
    ("shapes-two-dims", with_arg(SWEEP, "--shapes", "16x16"), "--shapes"),
    ("shapes-text", with_arg(SWEEP, "--shapes", "big"), "--shapes"),
    ("shapes-too-large", with_arg(SWEEP, "--shapes", "65536x65536x1024"), "--shapes"),
    ("shapes-file-missing", SWEEP + ["--shapes-file", "nope.txt"], "--shapes-file"),
    ("shapes-file-empty", SWEEP + ["--shapes-file", "empty.txt"], "--shapes-file"),
    ("shapes-file-bad-line", SWEEP + ["--shapes-file", "bad_shapes.txt"], "--shapes-file"),
    ("timeout-zero", SWEEP + ["--timeout", "0"], "--timeout"),
    ("timeout-negative", SWEEP + ["--timeout", "-5"], "--timeout"),
    ("timeout-nan", SWEEP + ["--timeout", "nan"], "--timeout"),
    ("timeout-inf", SWEEP + ["--timeout", "inf"], "--timeout"),
    ("workers-zero", SWEEP + ["--workers", "0"], "--workers"),
    ("workers-huge", SWEEP + ["--workers", "100000"], "--workers"),
    ("compile-workers-negative", SWEEP + ["--compile-workers", "-1"], "--compile-workers"),
    ("compile-workers-text", SWEEP + ["--compile-workers", "all"], "--compile-workers"),
    ("compile-timeout-zero", SWEEP + ["--compile-timeout", "0"], "--compile-timeout"),
    ("compile-timeout-nan", SWEEP + ["--compile-timeout", "nan"], "--compile-timeout"),
    ("seed-negative", SWEEP + ["--seed", "-1"], "--seed"),
    ("top-k-zero", SWEEP + ["--top-k", "0"], "--top-k"),
    ("arch-unknown", with_arg(SWEEP, "--arch", "gfx906"), "--arch"),
    ("op-unknown", SWEEP + ["--op", "conv"], "--op"),
    ("device-unknown", with_arg(SWEEP, "--device", "tpu"), "--device"),
    ("storage-unknown-scheme", SWEEP + ["--storage", "foo://bar/baz"], "--storage"),
    ("storage-unparsable-url", SWEEP + ["--storage", "postgresql://host:notaport/db"], "--storage"),
    ("storage-no-driver-or-unreachable", SWEEP + ["--storage", "mysql://u:secret@127.0.0.1:1/db"], "--storage"),
    ("storage-sqlite-not-a-db", SWEEP + ["--storage", "sqlite:///notes.txt"], "--storage"),
    ("storage-sqlite-unwritable", SWEEP + ["--storage", "sqlite:////proc/no/such/dir/s.db"], "--storage"),
    ("storage-journal-is-dir", SWEEP + ["--storage", "ladders"], "--storage"),
    ("storage-journal-garbage", SWEEP + ["--storage", "garbage.journal"], "--storage"),
    ("results-is-file", with_arg(SWEEP, "--results", "notes.txt"), "--results"),
    ("results-unwritable", with_arg(SWEEP, "--results", "/proc/wmma_gen_results"), "--results"),
    ("study-name-spaces", SWEEP + ["--study-name", " padded "], "--study-name"),
]
EXPORT_CASES = [
    ("from-missing", with_arg(EXPORT, "--from", "nowhere"), "--from"),
    ("from-not-a-ladder", with_arg(EXPORT, "--from", "notes.txt"), "--from"),
    ("from-csv-cut-mid-row", with_arg(EXPORT, "--from", "ladders/cut_mid_row.csv"), "cut_mid_row.csv"),
    ("from-csv-cut-at-row", with_arg(EXPORT, "--from", "ladders/cut_at_row.csv"), "cut_at_row.csv"),
    ("from-csv-other-schema", with_arg(EXPORT, "--from", "ladders/other_schema.csv"), "other_schema.csv"),
    ("from-csv-empty-cells", with_arg(EXPORT, "--from", "ladders/empty_cells.csv"), "empty_cells.csv"),
    ("from-parquet-cut", with_arg(EXPORT, "--from", "ladders/cut.parquet"), "cut.parquet"),
    ("from-parquet-garbage", with_arg(EXPORT, "--from", "ladders/garbage.parquet"), "garbage.parquet"),
    ("from-dir-without-ladder", with_arg(EXPORT, "--from", "empty_dir"), "from"),
    ("out-is-file", with_arg(EXPORT, "--out", "notes.txt"), "--out"),
    ("out-unwritable", with_arg(EXPORT, "--out", "/proc/wmma_gen_out"), "--out"),
    ("arch-unknown", with_arg(EXPORT, "--arch", "gfx9000"), "--arch"),
]
DIRECTIVE_CASES = [
    ("alpha-not-f32", CHECK + ["--alpha", "1e39"], "--alpha"),
    ("alpha-rounds", CHECK + ["--alpha", "0.1"], "--alpha"),
    ("beta-not-f32", CHECK + ["--beta", "1e-50"], "--beta"),
    ("alpha-text", CHECK + ["--alpha", "one"], "--alpha"),
    ("batch-zero", CHECK + ["--batch", "0"], "--batch"),
    ("schedule-json-malformed", CHECK + ["--schedule-json", '{"block_m": 64,'], "--schedule-json"),
    ("schedule-json-missing-file", CHECK + ["--schedule-json", "nope.json"], "--schedule-json"),
    ("schedule-json-not-object", CHECK + ["--schedule-json", "list.json"], "--schedule-json"),
    ("schedule-json-unknown-field", CHECK + ["--schedule-json", '{"block_q": 64}'], "--schedule-json"),
    ("schedule-json-bad-value", CHECK + ["--schedule-json", '{"block_m": 3}'], "--schedule-json"),
    ("compile-alpha-not-f32", COMPILE + ["--alpha", "1e39"], "--alpha"),
    ("compile-schedule-json-malformed", COMPILE + ["--schedule-json", "{nope}"], "--schedule-json"),
    # issue 24: the tracebacks and the values checked at parse time
    ("seed-negative", CHECK + ["--seed", "-1"], "argument --seed: -1 is out of range"),
    ("seq-k-beyond-i32", ATTN + ["--seq-k", "2147483648"], "argument --seq-k: 2147483648 is out of range"),
    ("seq-q-negative", ATTN + ["--seq-q", "-5"], "argument --seq-q: -5 is out of range"),
    ("heads-zero", ATTN + ["--heads", "0"], "argument --heads: 0 is out of range"),
    ("seq-k-over-host-budget", ATTN + ["--seq-q", "100000", "--seq-k", "100000"],
     "fit 16 GiB of host memory (this one needs about"),
    ("gemm-over-host-budget", with_arg(CHECK, "--shape", "40000x40000x16"), "fit 16 GiB of host memory"),
    ("window-malformed", ATTN + ["--window", "1,2,3"], "--window='1,2,3' is not allowed"),
    ("window-below-minus-one", ATTN + ["--window=-2,0"], "--window='-2,0' is not allowed"),
    ("compile-out-in-proc", with_arg(COMPILE, "--out", "/proc/wmma_gen_kernel"), "argument --out: '/proc/wmma_gen_kernel' cannot be written"),
    ("compile-out-is-a-file", with_arg(COMPILE, "--out", "notes.txt"), "argument --out: 'notes.txt' exists and is not a directory"),
    ("schedule-json-deeply-nested", CHECK + ["--schedule-json", "deep.json"], "nested too deeply"),
    ("schedule-json-nested-field", CHECK + ["--schedule-json", '{"block_m": {"a": 1}}'], "field 'block_m' holds a dict"),
    # issue 24 item 3: a flag of another op is an error naming the op and the flags it takes
    ("attention-with-shape", ATTN + ["--shape", "64"], "--shape does not apply to --op attention; --op attention takes"),
    ("attention-with-layout", ATTN + ["--layout", "TN"], "--layout does not apply to --op attention"),
    ("attention-with-gemm-knob", ATTN + ["--block-k", "32"], "--block-k does not apply to --op attention"),
    ("attention-block-m-48", ATTN + ["--block-m", "48"], "--block-m=48 is not allowed: one of 16, 32, 64, 128, 256 for --op attention"),
    ("gemm-with-causal", CHECK + ["--causal"], "--causal does not apply to --op gemm; --op gemm takes --shape"),
    ("gemm-with-heads", CHECK + ["--heads", "4"], "--heads does not apply to --op gemm"),
    ("gemm-with-attention-knob", CHECK + ["--q-in", "lds"], "--q-in does not apply to --op gemm"),
    ("bwd-with-forward-knob", with_arg(ATTN, "--op", "attention_bwd") + ["--split-kv", "2"],
     "--split-kv does not apply to --op attention_bwd"),
    ("attention-schedule-json-gemm-field", ATTN + ["--schedule-json", '{"block_k": 32}'], "--schedule-json"),
    ("compile-attention-with-sizes", COMPILE_ATTN + ["--seq-q", "64"], "attention sizes are kernel arguments"),
    ("compile-attention-bwd", with_arg(COMPILE_ATTN, "--op", "attention_bwd"), "argument --op: invalid choice"),
    ("sweep-gemm-head-dims", SWEEP + ["--head-dims", "64"], "--head-dims does not apply to --op gemm: --op gemm takes --shapes"),
    ("sweep-gemm-causal", SWEEP + ["--causal", "on"], "--causal does not apply to --op gemm"),
    ("sweep-attention-shapes", with_arg(SWEEP, "--dtypes", "f16") + ["--op", "attention"],
     "--shapes does not apply to --op attention: --op attention takes --head-dims, --seqs, --causal"),
]


def _ladder_frame(n: int = 4) -> pd.DataFrame:
    rows = []
    for i in range(n):
        m = 256 << i
        rows.append(dict(arch="gfx1100", op="gemm", dtype="f16", acc="f32", layout="NN", m=m, n=m, k=m, batch=1,
                         study=f"s{i}", trial=i, rank=1, **Schedule().to_dict(), seconds=1e-3, tflops=10.0 + i,
                         unit="TFLOP/s", peak_tflops=122.88, fraction_of_peak=(10.0 + i) / 122.88, source="model",
                         validated=True, gate_source="emulator", gate_max_abs=0.0, vgprs=100, lds_bytes=0,
                         occupancy=4.0, limiter="alu", isa_hash="ab" * 16, toolchain_mlir="m", toolchain_lld="l",
                         wmma_gen_version="0", timestamp="2026-01-01 00:00:00"))
    return pd.DataFrame(rows, columns=ladder.COLUMNS)


@pytest.fixture
def workdir(_inputs, tmp_path, monkeypatch):
    """An empty working directory with the input files the cases refer to (a copy of one tree built
    per module: the ladder files take ~0.3 s of CPU to write, the copy a few ms)."""
    shutil.copytree(_inputs, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def _inputs(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("bad_input_files")
    (tmp_path / "notes.txt").write_text("not a ladder, not a database\n")
    (tmp_path / "empty.txt").write_text("# no shapes here\n\n")
    (tmp_path / "bad_shapes.txt").write_text("256\n12x0x4\n")
    (tmp_path / "list.json").write_text("[64, 64]\n")
    (tmp_path / "deep.json").write_text('{"block_m": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "garbage.journal").write_text('{"op_code":0,"worker_id":"w","study_name":"x","directions":[1]}\n'
                                              "not json at all\n{\"op_code\":4}\n")
    (tmp_path / "empty_dir").mkdir()
    d = tmp_path / "ladders"
    d.mkdir()
    paths = ladder.write(_ladder_frame(), tmp_path / "tmp_results", "gfx1100", "gemm", {"f16": 122.88})
    for kind in ("csv", "parquet"):
        os.replace(paths[kind], d / f"gemm_ladder.{kind}")
    (tmp_path / "tmp_results" / "gfx1100" / "gemm_ladder.png").unlink()
    (tmp_path / "tmp_results" / "gfx1100").rmdir()
    (tmp_path / "tmp_results").rmdir()
    csv = (d / "gemm_ladder.csv").read_bytes()
    lines = csv.split(b"\n")
    (d / "cut_mid_row.csv").write_bytes(csv[: len(csv) * 2 // 3])
    (d / "cut_at_row.csv").write_bytes(b"\n".join(lines[:2]) + b"\n")          # header + 1 of 4 rows
    (d / "other_schema.csv").write_text("arch,dtype,tflops\ngfx1100,f16,1.0\n")
    df = _ladder_frame().assign(ladder_rows=4)
    df.loc[2, "isa_hash"] = None
    df.to_csv(d / "empty_cells.csv", index=False)
    pq = (d / "gemm_ladder.parquet").read_bytes()
    (d / "cut.parquet").write_bytes(pq[: len(pq) // 2])
    (d / "garbage.parquet").write_bytes(b"PAR1" + b"\x00" * 64)
    return tmp_path


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_size if p.is_file() else None) for p in sorted(root.rglob("*"))}


def _run(argv, capsys) -> tuple[int, str]:
    try:
        rc = main(argv)
    except SystemExit as e:        # argparse: exit status 2 after printing the usage and the error
        rc = e.code
    captured = capsys.readouterr()
    return rc, captured.err + captured.out


@pytest.mark.parametrize("argv,needle", [c[1:] for c in SWEEP_CASES + EXPORT_CASES + DIRECTIVE_CASES],
                         ids=[c[0] for c in SWEEP_CASES + EXPORT_CASES + DIRECTIVE_CASES])
def test_bad_argument_exits_2_names_it_and_writes_nothing(workdir, capsys, argv, needle):
    before = _tree(workdir)
    rc, text = _run(argv, capsys)
    assert rc == 2, text
    assert needle in text, text
    assert "Traceback" not in text
    assert _tree(workdir) == before


DROP_REASONS = ("main-loop density", "is below the default's", "the entry it would shadow")


def _export_lines(text: str) -> tuple[list[str], list[str]]:
    kept = [ln for ln in text.splitlines() if ln.startswith("wmma-gen export: kept gemm gfx1100 f16 m=")]
    dropped = [ln for ln in text.splitlines() if ln.startswith("wmma-gen export: dropped gemm gfx1100 f16 m=")]
    return kept, dropped


def test_the_valid_ladder_fixture_exports(workdir, capsys, monkeypatch):
    """Control for the export cases: the uncut ladder exports, with no other schedule file in the
    search path (autotune/shadow.py drops entries that do not beat a same-bucket entry of another
    file, which the next test checks). Each of the four buckets is kept or dropped with one line
    naming it and why: the fixture's ladder has no default figure, so each entry is compared with
    today's model figure of the default (autotune/model_tie.py: it must beat it by more than 1%)
    and with the default's main-loop density (autotune/loop_density.py, issue 38). The 2048 bucket,
    which the default fills, must not take the fixture's looser one-wave-per-fragment tile."""
    from wmma_gen import schedule_files as sf
    monkeypatch.setattr(sf, "SHIPPED_DIR", workdir / "no_shipped_files")
    rc, text = _run(EXPORT, capsys)
    assert rc == 0, text
    kept, dropped = _export_lines(text)
    assert len(kept) + len(dropped) == 4 and kept, text
    assert all(any(r in ln for r in DROP_REASONS[:2]) for ln in dropped), text
    assert any(" m=2048 " in ln for ln in dropped), text
    doc = json.loads((workdir / "out" / "gfx1100-gemm-f16.json").read_text())
    assert sorted(e["bucket"]["m"] for e in doc["entries"]) == sorted(
        int(ln.split(" m=")[1].split()[0]) for ln in kept)


def test_export_says_which_entries_the_shipped_file_keeps(workdir, capsys):
    """With the shipped gfx1100 gemm f16 file in the search path, every fixture entry is either
    kept or dropped with one line naming the bucket and why (the shipped figure it was compared
    with, the default's model figure, or the default's main-loop density)."""
    rc, text = _run(EXPORT, capsys)
    assert rc == 0, text
    kept, dropped = _export_lines(text)
    assert len(kept) + len(dropped) == 4 and dropped
    assert all(any(r in ln for r in DROP_REASONS) for ln in dropped), "\n".join(dropped)
    shadowed = [ln for ln in dropped if "the entry it would shadow" in ln]
    assert all("(shipped)" in ln for ln in shadowed), "\n".join(shadowed)
    doc = json.loads((workdir / "out" / "gfx1100-gemm-f16.json").read_text()) if kept else {"entries": []}
    assert len(doc["entries"]) == len(kept)


def test_ladder_is_written_atomically(tmp_path, monkeypatch):
    """A failure while writing leaves the previous ladder whole and no temp files behind."""
    first = ladder.write(_ladder_frame(2), tmp_path, "gfx1100", "gemm", {"f16": 122.88})
    old = {k: p.read_bytes() for k, p in first.items()}

    def broken_png(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(ladder, "plot", broken_png)
    with pytest.raises(OSError):
        ladder.write(_ladder_frame(4), tmp_path, "gfx1100", "gemm", {"f16": 122.88})
    assert {k: p.read_bytes() for k, p in first.items()} == old
    assert sorted(p.name for p in (tmp_path / "gfx1100").iterdir()) == sorted(p.name for p in first.values())


def test_unwritable_cache_runs_uncached_with_one_warning(tmp_path, monkeypatch, capsys):
    from wmma_gen.compiler import cache as cache_mod
    blocker = tmp_path / "file_not_dir"
    blocker.write_text("x")
    monkeypatch.setenv("WMMA_GEN_CACHE_DIR", str(blocker / "cache"))    # below a file: cannot be created
    monkeypatch.setattr(cache_mod, "_WARNED", set())
    from collections import OrderedDict

    from wmma_gen.ops import compile_op
    monkeypatch.setattr(compile_op, "_LRU", OrderedDict())   # a kernel compiled earlier in the session would skip the cache
    for _ in range(2):
        rc, text = _run(["compile", "--arch", "gfx1100", "--dtype", "f16", "--shape", "16x16x16",
                         "--block-m", "16", "--block-n", "16", "--block-k", "16", "--waves-m", "1", "--waves-n", "1",
                         "--out", str(tmp_path / "k"), "--json"], capsys)
        assert rc == 0, text
        assert text.count("warning: kernel cache") == (1 if _ == 0 else 0)
    assert blocker.read_text() == "x"


def test_directive_api_refuses_inexact_alpha_beta_and_wrong_types():
    from wmma_gen.ops.gemm.directive import GemmDirective
    for kw, name in [({"alpha": 1e39}, "alpha"), ({"beta": 0.1}, "beta"), ({"alpha": "2"}, "alpha"),
                     ({"beta": True}, "beta"), ({"unsigned": "yes"}, "unsigned")]:
        with pytest.raises(ValueError, match=rf"^{name}="):
            GemmDirective("f16", **kw)
    assert GemmDirective("f16", alpha=float("inf"), beta=-1.25).alpha == float("inf")
