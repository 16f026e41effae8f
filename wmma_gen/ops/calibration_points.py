"""The published-measurement table docs/calibration/points.csv, read through the op registry.

Each row is someone else's measurement on a real GPU. Its `op` is PEAK (a WMMA-only
microbenchmark) or a registry op whose folder has calibration_point.py (KEYS, `problem(config)`,
`directive(dtype, config)`); that module reads the row's `key=value` config. A Point carries its
band (`family`, the op's OpSpec.family) as plain data, so model/calibration.py fits it without
asking the registry (model sits below ops and imports nothing from it).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..model.calibration import PEAK
from ..targets import TARGETS, get_target
from . import registry     # light (contract + names); an op's spec loads on first get

POINTS_CSV = Path(__file__).resolve().parents[2] / "docs" / "calibration" / "points.csv"
KINDS = ("wmma_microbench", "library_gemm", "peer_attention")
ROLES = ("fit:clock", "fit:gemm", "fit:loop", "held_out")
COLUMNS = ("id", "arch", "kind", "op", "implementation", "dtype", "config", "tflops", "measured_note", "assumed",
           "role", "source_title", "source_link", "origin")


class CalibrationDataError(ValueError):
    """A row of the calibration table is malformed; the message names the file, row and field."""


@dataclass(frozen=True)
class Point:
    """One published measurement (never ours): what ran, where, how fast, who said so, and the
    model band it is fitted in (`family`: PEAK, or its op's OpSpec.family)."""
    id: str
    arch: str
    kind: str
    op: str
    implementation: str
    dtype: str
    config: dict
    tflops: float
    measured_note: str
    assumed: str
    role: str
    source_title: str
    source_link: str
    origin: str
    family: str

    @property
    def fit(self) -> bool:
        return self.role != "held_out"

    def problem(self) -> dict:
        """The op's Problem values for this point (its folder's calibration_point.problem); {} for PEAK."""
        return {} if self.op == PEAK else reader(self.op).problem(self.config)

    def directive(self):
        """The directive the model estimates this point with (calibration_point.directive); None for PEAK."""
        return None if self.op == PEAK else reader(self.op).directive(self.dtype, self.config)


def reader(op: str):
    """The op's calibration_point module (KEYS, problem, directive) beside its spec; ValueError
    naming the ops that have one."""
    module = registry.light_module(op, "calibration_point") if op in registry.names() else None
    if module is None:
        raise ValueError(f"op={op!r} is not allowed: {PEAK} or one of {', '.join(point_ops())} (an op whose "
                         "folder has calibration_point.py)")
    return module


def point_ops() -> tuple[str, ...]:
    """The registry ops a calibration point can name (their folder reads its config)."""
    return tuple(n for n in registry.names() if registry.light_module(n, "calibration_point") is not None)


def family_of(op: str) -> str:
    """The model band a point of `op` is fitted and banded in: PEAK, or the op's OpSpec.family."""
    return PEAK if op == PEAK else registry.get(op).family


def _config(text: str, op: str, where: str) -> dict:
    """A point's `key=value ...` config, each value read by its op's calibration_point.KEYS."""
    keys = {} if op == PEAK else reader(op).KEYS
    raw: dict = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise CalibrationDataError(f"{where}: config item {item!r} is not key=value")
        raw[key] = value
    if set(raw) != set(keys):
        raise CalibrationDataError(f"{where}: config keys {sorted(raw)} for op {op}: expected {sorted(keys)}")
    try:
        return {k: keys[k](v) for k, v in raw.items()}
    except ValueError as e:
        raise CalibrationDataError(f"{where}: config {text!r} for op {op}: {e}") from None


def load_points(path: str | Path = POINTS_CSV) -> list[Point]:
    """Every row of the calibration table, checked: known arch/kind/op/role, a dtype the target
    has, a positive figure, the op's config keys, and a non-empty source title and link."""
    path = Path(path)
    with path.open(newline="") as fh:
        table = csv.DictReader(fh)
        if tuple(table.fieldnames or ()) != COLUMNS:
            raise CalibrationDataError(f"{path}: columns {table.fieldnames}, expected {list(COLUMNS)}")
        rows = list(table)
    points, seen = [], set()
    for i, r in enumerate(rows, start=2):
        where = f"{path.name} line {i} ({r.get('id')})"
        for name, allowed in (("arch", TARGETS), ("kind", KINDS), ("op", (PEAK, *point_ops())), ("role", ROLES)):
            if r[name] not in allowed:
                raise CalibrationDataError(f"{where}: {name}={r[name]!r}, one of {', '.join(allowed)}")
        if r["dtype"] not in get_target(r["arch"]).dtypes:
            raise CalibrationDataError(f"{where}: dtype={r['dtype']!r} not a WMMA dtype of {r['arch']}")
        for name in ("id", "implementation", "source_title", "source_link", "origin"):
            if not r[name].strip():
                raise CalibrationDataError(f"{where}: {name} is empty (every row names its source)")
        if r["id"] in seen:
            raise CalibrationDataError(f"{where}: duplicate id")
        seen.add(r["id"])
        tflops = float(r["tflops"])
        if not tflops > 0:
            raise CalibrationDataError(f"{where}: tflops={r['tflops']!r} must be > 0")
        family = family_of(r["op"])
        fitted_as = "clock" if family == PEAK else family           # what its fit role names
        if r["role"].startswith("fit:") and r["role"][4:] != fitted_as:
            raise CalibrationDataError(f"{where}: role {r['role']} does not fit op {r['op']}")
        points.append(Point(**{**r, "config": _config(r["config"], r["op"], where), "tflops": tflops,
                               "family": family}))
    return points
