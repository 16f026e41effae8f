"""Export keeps a tuned entry only if it beats the op's default measured the same way (issue 25 item 3)."""
import math

import pandas as pd
import pytest

from autotune import export, ladder
from wmma_gen.ops.gemm.schedule import Schedule

SMALL = Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2)


def frame(**cases) -> pd.DataFrame:
    """One rank-1 model row per case: name -> (tflops, default_tflops, default_source, source)."""
    rows = []
    for i, (name, (tf, dflt, dsrc, src)) in enumerate(cases.items()):
        rows.append(dict(arch="gfx1100", op="gemm", dtype="f16", acc="f32", layout="NN", m=256 * (i + 1), n=256,
                         k=256, batch=1, study=name, trial=i, rank=1, **SMALL.to_dict(), seconds=1e-3, tflops=tf,
                         unit="TFLOP/s", peak_tflops=122.88, fraction_of_peak=tf / 122.88, source=src,
                         est_low=math.nan, est_high=math.nan, default_tflops=dflt, default_source=dsrc,
                         validated=True, gate_source="emulator", gate_max_abs=0.0, vgprs=100, lds_bytes=0,
                         occupancy=4.0, limiter="wmma_issue", isa_hash="ab" * 16, toolchain_mlir="m",
                         toolchain_lld="l", wmma_gen_version="0", timestamp="2026-01-01 00:00:00"))
    return pd.DataFrame(rows, columns=ladder.COLUMNS).assign(ladder_rows=len(rows))


def gate(df):
    lines = []
    kept = export.beats_default(df, "gfx1100", lines.append)
    return set(kept["study"]), lines


def test_rows_that_do_not_beat_the_default_are_dropped_with_one_line_each():
    kept, lines = gate(frame(win=(60.0, 50.0, "model", "model"), lose=(40.0, 50.0, "model", "model"),
                             tie=(50.0, 50.0, "model", "model")))
    assert kept == {"win", "tie"}          # a tie is the default itself: it keeps its bucket on the default
    (line,) = lines
    assert line.startswith("dropped gemm") and "m=512" in line and "50.00" in line and "40.00" in line


def test_a_default_that_cannot_run_the_problem_is_beaten_by_any_validated_row():
    kept, lines = gate(frame(only=(1.0, 0.0, "failed", "model")))
    assert kept == {"only"} and lines == []


@pytest.mark.parametrize("dflt, dsrc, src", [(math.nan, "missing", "hip"), (50.0, "model", "hip")])
def test_no_default_measured_the_same_way_drops_the_row(dflt, dsrc, src):
    kept, (line,) = gate(frame(timed=(90.0, dflt, dsrc, src)))
    assert kept == set() and "measured the same way (hip)" in line


def test_a_ladder_without_default_figures_is_exported_unchecked_with_a_line(tmp_path):
    df = frame(old=(60.0, math.nan, None, "model")).drop(columns=["default_tflops", "default_source"])
    path = tmp_path / "gfx1100" / "gemm_ladder.parquet"
    path.parent.mkdir()
    df.to_parquet(path)
    back = ladder.read(path)
    assert back["default_source"].isna().all()
    kept, (line,) = gate(back)
    assert kept == {"old"} and line.startswith("not compared with the default")


def test_export_writes_only_the_entries_that_beat_the_default(tmp_path):
    lines = []
    written = export.export(frame(win=(60.0, 50.0, "model", "model"), lose=(40.0, 50.0, "model", "model")),
                            "gfx1100", tmp_path, note=lines.append)
    import json
    (doc,) = [json.loads(p.read_text()) for p in written]
    assert [e["bucket"]["m"] for e in doc["entries"]] == [256]
    dropped, kept = ([x for x in lines if x.startswith(w)] for w in ("dropped", "kept"))
    assert len(dropped) == 1 and "m=512" in dropped[0]            # the row that lost to its default
    assert len(kept) == 1 and "m=256" in kept[0] and len(lines) == 2   # export's shadow line for the winner
    assert export.export(frame(lose=(40.0, 50.0, "model", "model")), "gfx1100", tmp_path / "none",
                         note=lines.append) == []
