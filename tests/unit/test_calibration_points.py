"""wmma_gen.ops.calibration_points: the published-measurement table (docs/calibration/points.csv)
parses, names a source on every row, carries each point's band, and refuses a bad row naming the
field. (The op-agnostic reading through a dummy op's folder: tests/contract/test_consumers_read_the_registry.py.)"""
import csv

import pytest

from wmma_gen.model import calibration as C
from wmma_gen.ops import calibration_points as CP, registry
from wmma_gen.targets import TARGETS

# every figure issue #17 quotes: (arch, op, dtype, TFLOP/s)
ISSUE_17 = {("gfx1151", "peak", "bf16", 36.5), ("gfx1151", "peak", "f16", 36.5), ("gfx1151", "peak", "i8", 36.5),
            ("gfx1151", "gemm", "f16", 36.9), ("gfx1201", "peak", "bf16", 200.0), ("gfx1201", "gemm", "f16", 129.4),
            ("gfx1201", "gemm", "bf16", 133.4), ("gfx1100", "gemm", "f16", 105.4), ("gfx1100", "gemm", "bf16", 99.4),
            ("gfx1151", "gemm", "f16", 41.8), ("gfx1100", "attention", "f16", 25.5),
            ("gfx1100", "attention", "f16", 22.2), ("gfx1100", "attention_bwd", "f16", 24.9),
            ("gfx1100", "attention", "f16", 60.8), ("gfx1201", "attention", "f16", 83.2),
            ("gfx1151", "attention", "f16", 18.1)}


def test_table_parses_and_every_row_names_its_source():
    points = CP.load_points()
    assert len({p.id for p in points}) == len(points)
    for p in points:
        assert p.source_title.strip() and p.source_link.strip() and p.origin.strip(), p.id
        assert p.tflops > 0 and p.arch in TARGETS and p.role in CP.ROLES
    issue = {(p.arch, p.op, p.dtype, p.tflops) for p in points if p.origin == "issue #17"}
    assert ISSUE_17 <= issue
    assert all("issue #17" in p.source_link for p in points if p.origin == "issue #17")   # no invented links


def test_fit_and_held_out_rows_both_exist():
    roles = {p.role for p in CP.load_points()}
    assert {"fit:clock", "fit:gemm", "fit:loop", "held_out"} <= roles


@pytest.mark.parametrize("field,value,match", [("source_title", "", "source_title is empty"),
                                               ("source_link", " ", "source_link is empty"),
                                               ("arch", "gfx90a", "arch='gfx90a'"),
                                               ("tflops", "-3", "tflops"),
                                               ("config", "m=1 n=2", "config keys"),
                                               ("role", "fit:loop", "does not fit op gemm")])
def test_bad_rows_are_refused_naming_the_field(tmp_path, field, value, match):
    rows = list(csv.DictReader(CP.POINTS_CSV.open(newline="")))
    row = next(r for r in rows if r["op"] == "gemm")
    row[field] = value
    path = tmp_path / "points.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CP.COLUMNS)
        w.writeheader()
        w.writerow(row)
    with pytest.raises(CP.CalibrationDataError, match=match):
        CP.load_points(path)


def test_every_point_carries_its_band():
    """The band the model fits a point in is resolved here, from its op's OpSpec (PEAK: the clock)."""
    for p in CP.load_points():
        assert p.family == (C.PEAK if p.op == C.PEAK else registry.get(p.op).family), p.id
        assert p.family == C.PEAK or p.family in C.BANDS, p.id
        assert (p.problem() == {}) == (p.op == C.PEAK) and (p.directive() is None) == (p.op == C.PEAK), p.id
