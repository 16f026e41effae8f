"""Calibration of the GPU-less model against published real-GPU measurements (others' figures,
docs/calibration/points.csv). A calibrated estimate is still an estimate: source = "model".

    measured ~= estimate(boost clock, efficiency 1) x sustained_ghz / boost_ghz x efficiency[family]

  sustained_ghz  per target (targets.Target.sustained_ghz, each with its source): the clock the
                 WMMA pipe sustains. From a WMMA microbenchmark where one is published (the
                 model's estimate of a generated WMMA-only loop kernel, kernels/wmma_loop.py,
                 reproduces it); fitted from the target's GEMM and attention points otherwise;
                 the boost clock where no point exists.
  efficiency     per kernel family ("gemm": ops/gemm/model.py, "loop": model/loop_kernel.py;
                 params.EFFICIENCY): what the model does not see (dependency stalls, barrier skew,
                 scheduling), fitted on the family's fit points. It divides the compute time only;
                 memory terms keep their own parameters.
  band           per family (params.BAND): [min, max] of measured / calibrated estimate over the
                 fit points, widened by BAND_MARGIN each side. An Estimate carries it as
                 est_low / est_high (TFLOP/s). Targets without a sustained clock get the band
                 stretched by the lowest and highest sustained/boost ratio measured anywhere.

The fit (`fit`) is log least squares: unknowns log efficiency[family] and log clock ratio of
the targets with fit points but no microbenchmark; observations log(measured / estimate at the
microbenchmark clocks). bench/calibrate.py runs it and writes results/model_calibration.md;
the fitted values are copied into targets.py and params.py by hand, and that report and
tests/unit/test_calibration.py check the two agree.
"""
from __future__ import annotations

import contextlib
import contextvars
import csv
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from ..ops import registry     # light (contract + names); an op's spec loads on first get
from ..targets import TARGETS, Target, get_target
from . import params

POINTS_CSV = Path(__file__).resolve().parents[2] / "docs" / "calibration" / "points.csv"
KINDS = ("wmma_microbench", "library_gemm", "peer_attention")
ROLES = ("fit:clock", "fit:gemm", "fit:loop", "held_out")
PEAK = "peak"                # the one point "op" that is no registry op: a WMMA-only microbenchmark (clock)
BANDS = ("gemm", "loop")     # the model bands; a registry op names its own (OpSpec.family)
BAND_MARGIN = 0.05
COLUMNS = ("id", "arch", "kind", "op", "implementation", "dtype", "config", "tflops", "measured_note", "assumed",
           "role", "source_title", "source_link", "origin")


class CalibrationDataError(ValueError):
    """A row of the calibration table is malformed; the message names the file, row and field."""


@dataclass(frozen=True)
class Point:
    """One published measurement (never ours): what ran, where, how fast, and who said so."""
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

    @property
    def family(self) -> str:
        """PEAK for a microbenchmark point, else the band its op's OpSpec names."""
        return PEAK if self.op == PEAK else registry.get(self.op).family

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
    module = registry.sibling(op, "calibration_point") if op in registry.names() else None
    if module is None:
        raise ValueError(f"op={op!r} is not allowed: {PEAK} or one of {', '.join(point_ops())} (an op whose "
                         "folder has calibration_point.py)")
    return module


def point_ops() -> tuple[str, ...]:
    """The registry ops a calibration point can name (their folder reads its config)."""
    return tuple(n for n in registry.names() if registry.sibling(n, "calibration_point") is not None)


def __getattr__(name: str):
    if name == "FAMILY":       # point op -> family, derived from the registry (bench/calibrate.py reads it)
        return {PEAK: PEAK, **{op: registry.get(op).family for op in point_ops()}}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise CalibrationDataError(f"{path}: columns {reader.fieldnames}, expected {list(COLUMNS)}")
        rows = list(reader)
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
        family = "clock" if r["op"] == PEAK else registry.get(r["op"]).family    # what its fit role names
        if r["role"].startswith("fit:") and r["role"][4:] != family:
            raise CalibrationDataError(f"{where}: role {r['role']} does not fit op {r['op']}")
        points.append(Point(**{**r, "config": _config(r["config"], r["op"], where), "tflops": tflops}))
    return points


# --- the calibration the model applies ------------------------------------------------------
@dataclass(frozen=True)
class Calibration:
    """What the model applies: sustained clocks on or off (with per-arch overrides while
    fitting), an efficiency and a band per family."""
    sustained: bool
    efficiency: dict
    band: dict
    clocks: dict | None = None   # while fitting: arch -> GHz for every calibrated arch (else targets.py)


CALIBRATED = Calibration(True, dict(params.EFFICIENCY), dict(params.BAND))
NOMINAL = Calibration(False, {band: 1.0 for band in BANDS}, {})   # the bands (not ops), uncorrected
_ACTIVE: contextvars.ContextVar[Calibration] = contextvars.ContextVar("wmma_gen_calibration", default=CALIBRATED)


@contextlib.contextmanager
def use(cal: Calibration):
    """Run the model under `cal` (NOMINAL: boost clock, efficiency 1, no band) in this context."""
    token = _ACTIVE.set(cal)
    try:
        yield cal
    finally:
        _ACTIVE.reset(token)


def active() -> Calibration:
    """The calibration the model applies in this context (CALIBRATED unless `use` set another)."""
    return _ACTIVE.get()


def uncalibrated():
    return use(NOMINAL)


@dataclass(frozen=True)
class Factors:
    """What one estimate applies (reported in Estimate.figures['calibration'])."""
    clock_ghz: float
    clock_source: str
    efficiency: float
    band: tuple
    calibrated: bool

    def to_dict(self) -> dict:
        return asdict(self)


def _clock_ratios() -> list[float]:
    return [t.sustained_ghz / t.boost_ghz for t in TARGETS.values() if t.sustained_ghz]


def factors(t: Target, family: str) -> Factors:
    cal = _ACTIVE.get()
    if not cal.sustained:
        return Factors(t.boost_ghz, "boost clock (uncalibrated)", cal.efficiency.get(family, 1.0),
                       (math.nan, math.nan), False)
    ghz = t.sustained_ghz if cal.clocks is None else cal.clocks.get(t.arch, 0.0)
    lo, hi = cal.band.get(family, (math.nan, math.nan))
    if ghz:
        source = t.sustained_source if cal.clocks is None else "trial value while fitting"
    else:   # no published point for this target: boost clock, band stretched by the measured clock spread
        ghz, source = t.boost_ghz, "boost clock: no published measurement for this target (band widened)"
        ratios = _clock_ratios() or [1.0]
        lo, hi = lo * min(min(ratios), 1.0), hi * max(max(ratios), 1.0)
    return Factors(ghz, source, cal.efficiency.get(family, 1.0), (lo, hi), True)


def bounds(tflops: float, t: Target, dtype: str, f: Factors) -> tuple[float, float]:
    """(est_low, est_high) in TFLOP/s: the band around `tflops`, the high end capped at the dense
    peak (nominal, or sustained where that is higher): no kernel outruns the WMMA pipe."""
    cap = max(t.peak_tflops(dtype), t.sustained_peak_tflops(dtype))
    return tflops * f.band[0], min(tflops * f.band[1], cap)


def band_family(name: str) -> str:
    """The band of `name`: a band itself (an OpSpec.family), a registry op (its OpSpec.family), or
    PEAK (the microbenchmark reads the gemm band)."""
    if name in BANDS:
        return name
    if name == PEAK:
        return "gemm"
    if name not in registry.names() or registry.get(name).family not in BANDS:
        raise ValueError(f"band={name!r} is not allowed: one of {', '.join(BANDS)} (an OpSpec.family), a "
                         f"registry op ({', '.join(registry.names())}) or {PEAK}")
    return registry.get(name).family


def band_for(arch: str, family: str) -> tuple[float, float]:
    """(low, high) multipliers of a model TFLOP/s figure of band `family` on `arch` (NaN if uncalibrated)."""
    return factors(get_target(arch), band_family(family)).band


def band_bounds(arch: str, family: str, dtype: str, tflops: float) -> tuple[float, float]:
    """(est_low, est_high) of a model TFLOP/s figure in band `family` (an OpSpec.family: ladders, summaries)."""
    t = get_target(arch)
    return bounds(tflops, t, dtype, factors(t, band_family(family)))


# --- the fit --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fit:
    sustained_ghz: dict      # arch -> GHz
    clock_how: dict          # arch -> "microbenchmark <ids>" | "fitted from <ids>"
    efficiency: dict         # family -> factor
    efficiency_from: dict    # family -> point ids


def fit(points: list[Point], clocked: dict[str, float], raw: dict[str, float]) -> Fit:
    """Fit clocks and efficiencies. `raw[id]`: the uncalibrated estimate (boost clock, efficiency 1);
    `clocked[id]`: the estimate at the microbenchmark clocks with efficiency 1 (= raw where a
    target has no microbenchmark). Pure arithmetic: numpy least squares in log space."""
    import numpy as np
    ratio: dict[str, list[float]] = {}
    how: dict[str, str] = {}
    for p in points:
        if p.role == "fit:clock":
            ratio.setdefault(p.arch, []).append(p.tflops / raw[p.id])
            how[p.arch] = (how.get(p.arch, "microbenchmark") + " " + p.id)
    clock = {a: math.exp(sum(map(math.log, v)) / len(v)) for a, v in ratio.items()}
    fitpts = [p for p in points if p.role in ("fit:gemm", "fit:loop")]
    fams = sorted({p.family for p in fitpts})
    free = sorted({p.arch for p in fitpts} - set(clock))
    cols = fams + free
    A = np.zeros((len(fitpts), len(cols)))
    b = np.zeros(len(fitpts))
    for i, p in enumerate(fitpts):
        A[i, cols.index(p.family)] = 1.0
        if p.arch in free:
            A[i, cols.index(p.arch)] = 1.0
        b[i] = math.log(p.tflops / clocked[p.id])
    x = np.linalg.lstsq(A, b, rcond=None)[0] if len(cols) else np.zeros(0)
    eff = {f: float(math.exp(x[cols.index(f)])) for f in fams}
    for a in free:
        clock[a] = float(math.exp(x[cols.index(a)]))
        how[a] = "fitted from " + " ".join(p.id for p in fitpts if p.arch == a)
    return Fit({a: get_target(a).boost_ghz * r for a, r in clock.items()}, how, eff,
               {f: [p.id for p in fitpts if p.family == f] for f in fams})


def band_from(ratios: list[float], margin: float = BAND_MARGIN) -> tuple[float, float]:
    """[min - margin, max + margin] of measured / calibrated estimate, rounded outward to 0.01."""
    return (math.floor((min(ratios) - margin) * 100) / 100, math.ceil((max(ratios) + margin) * 100) / 100)
