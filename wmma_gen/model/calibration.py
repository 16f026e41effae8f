"""Calibration of the GPU-less model against published real-GPU measurements (others' figures,
docs/calibration/points.csv). A calibrated estimate is still an estimate: source = "model".

    measured ~= estimate(boost clock, efficiency 1) x sustained_ghz / boost_ghz x efficiency[family]

  sustained_ghz  per target (targets.Target.sustained_ghz, each with its source): the clock the
                 WMMA pipe sustains. From a WMMA microbenchmark where one is published (the
                 model's estimate of a generated WMMA-only loop kernel, kernels/wmma_loop.py,
                 reproduces it); fitted from the target's GEMM and attention points otherwise,
                 bounded by the boost clock (a fitted clock has no measurement of its own: above
                 boost it is the target's share of the family efficiency misfit, not a clock --
                 issue 38 found gfx1100 at 2.674 GHz over 2.5 that way; a microbenchmark may go
                 above boost, as partner cards do); the boost clock where no point exists.
                 Clock floors (issue 38 item 4): a published figure F of a kernel whose work per
                 clock we can count proves clock >= F / (TFLOP/s per GHz that kernel issues at
                 efficiency 1 with no stall) -- a GEMM's 2MNK FLOPs at the dense WMMA rate, or a
                 peer kernel's counted loops (bench/calibrate.py clock_floors). The clock is at
                 least the highest floor of its target, capped at boost: a microbenchmark reading
                 below it (gfx1151's, 9-21% thermal swing) is raised to it, a fitted clock pinned.
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
microbenchmark clocks, raised to their floors). The points reach it as plain data (`Observation`): the table is read
one layer up, by ops/calibration_points.py, which asks the registry for each op's band and
config reader (model imports nothing from ops). bench/calibrate.py runs the fit and writes
results/model_calibration.md;
the fitted values are copied into targets.py and params.py by hand, and that report and
tests/unit/test_calibration.py check the two agree.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import asdict, dataclass
from typing import Protocol

from ..targets import TARGETS, Target, get_target
from . import params

PEAK = "peak"                # the microbenchmark's family: a WMMA-only loop (the clock), no registry op
BANDS = ("gemm", "loop")     # the model bands; a registry op names its own (OpSpec.family)
BAND_MARGIN = 0.05


class Observation(Protocol):
    """What the fit reads of a published point (ops/calibration_points.Point is one): plain data."""
    id: str
    arch: str
    role: str           # fit:clock | fit:gemm | fit:loop | held_out
    family: str         # PEAK or a band of BANDS
    tflops: float


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
    """The band of `name`: a band itself (an OpSpec.family) or PEAK (the microbenchmark reads the
    gemm band). An op resolves its band first (OpSpec.family; ops/calibration_points.family_of)."""
    if name in BANDS:
        return name
    if name == PEAK:
        return "gemm"
    raise ValueError(f"band={name!r} is not allowed: one of {', '.join(BANDS)} (an OpSpec.family) or {PEAK}")


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
    clock_how: dict          # arch -> "microbenchmark <ids>" | "fitted from <ids>" | "lower bound ..." | "boost clock ..."
    efficiency: dict         # family -> factor
    efficiency_from: dict    # family -> point ids


def fit(points: list[Observation], clocked: dict[str, float], raw: dict[str, float],
        floors: dict[str, list[tuple[float, str]]] | None = None) -> Fit:
    """Fit clocks and efficiencies. `raw[id]`: the uncalibrated estimate (boost clock, efficiency 1);
    `clocked[id]`: the estimate at the clocks of step 1 (microbenchmarks, raised to their floors) with
    efficiency 1 (= raw where a target has neither). `floors[arch]`: (GHz, point id) lower bounds that
    published figures prove (module doc, "clock floors"). Pure arithmetic: numpy least squares in log space."""
    import numpy as np
    ratio: dict[str, list[float]] = {}
    how: dict[str, str] = {}
    for p in points:
        if p.role == "fit:clock":
            ratio.setdefault(p.arch, []).append(p.tflops / raw[p.id])
            how[p.arch] = (how.get(p.arch, "microbenchmark") + " " + p.id)
    clock = {a: math.exp(sum(map(math.log, v)) / len(v)) for a, v in ratio.items()}
    floor = {a: _floor(a, fl) for a, fl in (floors or {}).items() if fl}
    for a in clock:
        if a in floor and floor[a][0] > clock[a]:
            how[a] = (f"lower bound {floor[a][0] * get_target(a).boost_ghz:.3f} GHz from {floor[a][1]} "
                      f"(above the {how[a]} clock {clock[a] * get_target(a).boost_ghz:.3f} GHz)")
            clock[a] = floor[a][0]
    fitpts = [p for p in points if p.role in ("fit:gemm", "fit:loop")]
    fams = sorted({p.family for p in fitpts})
    free = sorted({p.arch for p in fitpts} - set(clock))
    pinned: dict[str, str] = {}
    while True:     # clocks within [floor, boost] (module doc): pin the worst offender, refit
        x, cols = _solve(fitpts, fams, free, clocked, np, {a: clock[a] for a in pinned})
        off = {a: e for a in free if (e := _outside(x[cols.index(a)], floor.get(a)))}
        if not off:
            break
        worst = max(off, key=lambda a: abs(off[a]))
        free.remove(worst)
        src = " ".join(p.id for p in fitpts if p.arch == worst)
        if x[cols.index(worst)] > 0.0:
            clock[worst] = 1.0
            pinned[worst] = (f"boost clock: the fit from {src} went above it, and only a microbenchmark "
                             "may put a clock there")
        else:
            clock[worst] = floor[worst][0]
            pinned[worst] = (f"lower bound {floor[worst][0] * get_target(worst).boost_ghz:.3f} GHz from "
                             f"{floor[worst][1]}: the fit from {src} went below it")
    eff = {f: float(math.exp(x[cols.index(f)])) for f in fams}
    for a in free:
        clock[a] = float(math.exp(x[cols.index(a)]))
        how[a] = "fitted from " + " ".join(p.id for p in fitpts if p.arch == a)
    how.update(pinned)
    return Fit({a: get_target(a).boost_ghz * r for a, r in clock.items()}, how, eff,
               {f: [p.id for p in fitpts if p.family == f] for f in fams})


def _outside(log_ratio: float, floor: tuple[float, str] | None) -> float:
    """How far (log) a fitted clock ratio lies outside [floor, boost]; 0.0 inside."""
    if log_ratio > 0.0:
        return log_ratio
    lo = math.log(floor[0]) if floor else -math.inf
    return log_ratio - lo if log_ratio < lo else 0.0


def _floor(arch: str, floors: list[tuple[float, str]]) -> tuple[float, str]:
    """(clock ratio to boost, point id) of the highest floor, capped at the boost clock (1.0)."""
    ghz, pid = max(floors)
    return min(ghz / get_target(arch).boost_ghz, 1.0), pid


def _solve(fitpts, fams: list, free: list, clocked: dict, np, pinned: dict | None = None):
    """Log least squares: columns log efficiency[family] + log clock ratio of the `free` targets (a
    target not free stays at its clocked estimate: microbenchmark clock or boost; `pinned` arch -> clock
    ratio moves its rows' estimates from boost to that clock)."""
    cols = fams + free
    A = np.zeros((len(fitpts), len(cols)))
    b = np.zeros(len(fitpts))
    for i, p in enumerate(fitpts):
        A[i, cols.index(p.family)] = 1.0
        if p.arch in free:
            A[i, cols.index(p.arch)] = 1.0
        b[i] = math.log(p.tflops / clocked[p.id]) - math.log((pinned or {}).get(p.arch, 1.0))
    return (np.linalg.lstsq(A, b, rcond=None)[0] if len(cols) else np.zeros(0)), cols


def band_from(ratios: list[float], margin: float = BAND_MARGIN) -> tuple[float, float]:
    """[min - margin, max + margin] of measured / calibrated estimate, rounded outward to 0.01."""
    return (math.floor((min(ratios) - margin) * 100) / 100, math.ceil((max(ratios) + margin) * 100) / 100)
