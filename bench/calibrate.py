"""Model calibration report: every published point of docs/calibration/points.csv (others'
measurements on real GPUs) next to our model's estimate, before and after calibration.

    python bench/calibrate.py [--points docs/calibration/points.csv] [--out results]

What is estimated for each point (all source=model, no GPU involved):
  wmma_microbench  a generated WMMA-only loop kernel (wmma_gen/kernels/wmma_loop.py: 8 independent
                   v_wmma chains per wave, 4 waves, loop overhead only) compiled like every kernel
                   and estimated from its ISA by model/loop_kernel.py at efficiency 1 (the "peak"
                   family: nothing is fitted to it but the clock)
  library_gemm     OUR default GEMM schedule for that shape/layout/dtype (registry default_schedule,
                   compiled with compile_gemm) and ops/gemm/model.py -- not the library's kernel.
                   That is what gemm() runs out of the box: the shipped schedule files' entry for
                   the nearest bucket, else the built-in default. The lookup sees the shipped files
                   only while this runs (shipped_schedules_only: $WMMA_GEN_SCHEDULES and the user
                   data dir hidden), so a user's own exports never change the calibration
  peer_attention   a Triton peer (tutorial 06, AITER prefill, tuned Triton backward): OUR OWN Triton
                   FA-2 kernel of the same family (bench/peers_triton.py, forward or backward)
                   compiled here offline for the point's arch and problem and estimated exactly as
                   bench/peers.py does (model/loop_kernel.py, "loop" family) -- the measured family,
                   not the peer's own code (measured_family; needs Triton, else the fit refuses);
                   any other peer (CK, HIP, assembly): OUR default attention forward/backward through
                   the registry's estimate (model/loop_kernel.py; built-in table, ops/attention*/defaults.py)
so a ratio mixes the model's error with what differs between the kernel estimated and the peer's.
Every row also reports our default kernel's estimate and ratio (what wmma_gen runs), and the
Triton estimate alone ("n/a (no triton)" when Triton is not installed).

Steps: (0) the model's lds_exposed share (params.py) from the fit points' published library tiles
(ops/calibration_ranking.fit_lds_exposed: the smallest value ranking each pick above every smaller
per-wave tile and every no-LDS tile; held-out tiles only checked); (1) estimates uncalibrated (boost clock, efficiency 1);
(2) sustained clocks from the fit:clock rows (microbenchmarks), raised to the clock floors the published
figures prove (clock_floors; capped at boost); (3) log least squares for the family
efficiencies and the clocks of targets with fit rows but no microbenchmark; (4) band = fit-row ratio range +-margin;
(5) estimates with the values stored in targets.py / params.py (what the model uses), checked
against the fit. Writes results/model_calibration.{md,csv,png} and prints the fit.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

from wmma_gen.model import calibration as C, params
from wmma_gen.ops import calibration_points as CP
from wmma_gen.targets import TARGETS, get_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results_header  # noqa: E402  (bench/: the provenance line)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from calibration_basis import (NO_TRITON, TRITON_PEERS, NeedsTriton, clock_floors, floor_lines,  # noqa: E402,F401
                               is_triton_peer, measured_family, triton_peer_estimates)


def estimate_point(p: CP.Point) -> tuple[float, str, str]:
    """(TFLOP/s, limiter, schedule) of our model for point p under the active calibration."""
    from wmma_gen.ops import registry
    if p.op == C.PEAK:
        e = estimate_wmma_loop(p.arch, p.dtype)
        return e.tflops, e.limiter, f"wmma_loop chains={MB_CHAINS} waves={MB_WAVES}"
    spec, d, problem = registry.get(p.op), p.directive(), p.problem()   # read by the op's calibration_point.py
    s = spec.default_schedule(d, p.arch, problem)     # the problem picks the shipped entry (GEMM: its bucket)
    e = spec.estimate_of(d, s, problem, p.arch)
    sched = s.to_json() if hasattr(s, "to_json") else repr(s)
    return e.tflops, e.limiter, sched


def fit_estimate(p: CP.Point) -> float:
    """The model's estimate of point p's measured kernel family under the active calibration (measured_family)."""
    if is_triton_peer(p):
        return measured_family([p], {}, triton_peer_estimates([p], C.active()))[p.id]
    return estimate_point(p)[0]


MB_CHAINS, MB_WAVES, MB_TRIPS = 8, 4, 1 << 20   # WMMA-only loop: chains x waves, trips per wave


def estimate_wmma_loop(arch: str, dtype: str):
    """The model's estimate of the generated WMMA-only loop kernel (source=model): compiled from
    MLIR, its main loop read from the ISA, at the active clock and efficiency 1 (family "peak")."""
    from dataclasses import replace
    from wmma_gen.compiler import compile_mlir
    from wmma_gen.kernels.wmma_loop import wmma_loop_mlir
    from wmma_gen.model.loop_kernel import estimate_loop_kernel
    t = get_target(arch)
    k = compile_mlir(wmma_loop_mlir(arch, dtype, chains=MB_CHAINS, waves=MB_WAVES), arch)
    wgs = 64 * t.cus                       # enough workgroups to fill every CU at any occupancy
    flops = wgs * MB_WAVES * MB_TRIPS * MB_CHAINS * 2 * 16 * 16 * t.instr(dtype, "i32" if dtype == "i8" else "f32").k
    cal = C.active()
    with C.use(replace(cal, efficiency={**cal.efficiency, "loop": cal.efficiency.get("peak", 1.0)})):
        return estimate_loop_kernel(k, t, dtype, total_trips=wgs * MB_TRIPS, workgroups=wgs, l2_bytes=0.0,
                                    compulsory_bytes=float(k.metadata.kernarg_size), flops=flops)


@contextlib.contextmanager
def shipped_schedules_only():
    """The schedule lookup reads the shipped files only: no $WMMA_GEN_SCHEDULES, an empty user data dir."""
    saved = {k: os.environ.get(k) for k in ("WMMA_GEN_SCHEDULES", "XDG_DATA_HOME")}
    with tempfile.TemporaryDirectory() as empty:
        os.environ.pop("WMMA_GEN_SCHEDULES", None)
        os.environ["XDG_DATA_HOME"] = empty
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def estimates(points, cal: C.Calibration) -> dict[str, tuple[float, str, str]]:
    with C.use(cal):
        return {p.id: estimate_point(p) for p in points}


def run(points_csv: Path, out: Path) -> dict:
    points = CP.load_points(points_csv)
    from wmma_gen.ops import calibration_ranking as R
    exposed, exposed_from = R.fit_lds_exposed(points)
    raw_ours = estimates(points, C.NOMINAL)
    raw = measured_family(points, raw_ours, triton_peer_estimates(points, C.NOMINAL))
    floors = clock_floors(points)
    # microbenchmark clocks raised to the clock floors first (fit step 1), then estimates at those clocks for step 2
    micro = C.fit([p for p in points if p.role == "fit:clock"], {}, raw, floors)
    at = C.Calibration(True, {"gemm": 1.0, "loop": 1.0}, {}, dict(micro.sustained_ghz))
    clocked = measured_family(points, estimates(points, at), triton_peer_estimates(points, at))
    f = C.fit(points, clocked, raw, floors)
    at = C.Calibration(True, f.efficiency, {}, dict(f.sustained_ghz))
    trial = measured_family(points, estimates(points, at), triton_peer_estimates(points, at))
    bands = {fam: C.band_from([p.tflops / trial[p.id] for p in points if p.fit and p.family == fam])
             for fam in f.efficiency}
    stored = estimates(points, C.CALIBRATED)   # what the model uses today (targets.py, params.py)
    tri = triton_peer_estimates(points)
    basis = measured_family(points, stored, tri)
    rows = []
    for p in points:
        # a microbenchmark row that set its target's clock has no band: the WMMA-only kernel reproduces the stored
        # clock (1 MHz) -> +-0.5%; one below a clock floor reads the gemm band (calibration.band_family)
        band = C.factors(get_target(p.arch), C.band_family(p.family)).band
        if p.op == C.PEAK and f.clock_how[p.arch].startswith("microbenchmark"):
            band = (0.995, 1.005)
        after, ours = basis[p.id], stored[p.id][0]
        ratio = p.tflops / after
        rows.append({"id": p.id, "arch": p.arch, "kind": p.kind, "implementation": p.implementation, "op": p.op,
                     "dtype": p.dtype, "config": " ".join(f"{k}={v}" for k, v in p.config.items()),
                     "published_tflops": p.tflops, "role": p.role, "assumed": p.assumed,
                     "estimated_kernel": "our Triton FA-2" if is_triton_peer(p) else "ours",
                     "est_before": round(raw[p.id], 2), "ratio_before": round(p.tflops / raw[p.id], 3),
                     "est_after": round(after, 2), "ratio_after": round(ratio, 3),
                     "est_low": round(after * band[0], 2), "est_high": round(after * band[1], 2),
                     "in_band": bool(band[0] <= ratio <= band[1]), "limiter": stored[p.id][1],
                     "our_est": round(ours, 2), "our_ratio": round(p.tflops / ours, 3),
                     "our_schedule": stored[p.id][2], "source_title": p.source_title, "source_link": p.source_link,
                     "estimate_source": "model", **_triton_cols(tri.get(p.id), p.tflops)})
    df = pd.DataFrame(rows)
    check = compare_stored(f, bands, exposed)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "model_calibration.csv", index=False)
    plot(df, out / "model_calibration.png")
    sys.path.insert(0, str(ROOT / "bench"))
    from calibration_misses import section      # the out-of-band points, explained with instruction counts
    (out / "model_calibration.md").write_text(report(df, f, bands, check, points_csv, section(df, points, exposed),
                                                     exposed, exposed_from, floors))
    return {"df": df, "fit": f, "bands": bands, "check": check, "lds_exposed": exposed, "floors": floors}


def _triton_cols(t, published: float) -> dict:
    if t is None:
        return {"triton_peer_est": "", "triton_peer_ratio": "", "triton_peer_config": ""}
    if t[0] is None:
        return {"triton_peer_est": t[1], "triton_peer_ratio": t[1], "triton_peer_config": ""}
    return {"triton_peer_est": round(t[0], 2), "triton_peer_ratio": round(published / t[0], 3),
            "triton_peer_config": t[1]}


def _triton_cell(r) -> str:
    if r.triton_peer_config:
        return f"{float(r.triton_peer_est):.1f} / {float(r.triton_peer_ratio):.2f}"
    return r.triton_peer_est or "-"


def compare_stored(f: C.Fit, bands: dict, exposed: float | None = None) -> list[str]:
    """Differences between the fit and the values the model uses (targets.py, params.py)."""
    issues = []
    try:
        import triton
        if triton.__version__ != params.FIT_TRITON:
            issues.append(f"params.FIT_TRITON={params.FIT_TRITON} but this fit compiled with Triton {triton.__version__}")
    except ImportError:
        pass    # measured_family refused already
    if exposed is not None and not math.isclose(params.LDS_EXPOSED, exposed):
        issues.append(f"params.LDS_EXPOSED={params.LDS_EXPOSED} but the fit gives {exposed}")
    for arch, ghz in f.sustained_ghz.items():
        if not math.isclose(TARGETS[arch].sustained_ghz, ghz, rel_tol=0.005):
            issues.append(f"targets.py {arch}.sustained_ghz={TARGETS[arch].sustained_ghz} but the fit gives {ghz:.3f}")
    for fam, e in f.efficiency.items():
        if not math.isclose(params.EFFICIENCY.get(fam, 1.0), e, rel_tol=0.005):
            issues.append(f"params.EFFICIENCY[{fam!r}]={params.EFFICIENCY.get(fam)} but the fit gives {e:.3f}")
    for fam, b in bands.items():
        if tuple(params.BAND.get(fam, ())) != b:
            issues.append(f"params.BAND[{fam!r}]={params.BAND.get(fam)} but the fit gives {b}")
    return issues


def _summary(df: pd.DataFrame, role_fit: bool) -> str:
    sub = df[(df["role"] != "held_out") == role_fit]
    if not len(sub):
        return "none"
    rb, ra = sub["ratio_before"], sub["ratio_after"]
    return (f"{len(sub)} points: published/estimate before {rb.min():.2f}-{rb.max():.2f} "
            f"(geo-mean {math.exp(rb.map(math.log).mean()):.2f}), after {ra.min():.2f}-{ra.max():.2f} "
            f"(geo-mean {math.exp(ra.map(math.log).mean()):.2f}); inside the band: {int(sub['in_band'].sum())}/{len(sub)}")


def report(df: pd.DataFrame, f: C.Fit, bands: dict, check: list[str], points_csv: Path,
           misses: list[str] = (), exposed: float | None = None, exposed_from: tuple = (),
           floors: dict | None = None) -> str:
    L = ["# Model calibration against published measurements", "",
         results_header.line("model, published"), "",
         "Model state: `" + results_header.commit(dirty=True) + "`. Every estimate here is "
         "**source=model** (no GPU); every published figure is **someone else's measurement** on a real GPU, "
         f"from `{points_csv.relative_to(ROOT) if points_csv.is_relative_to(ROOT) else points_csv}` (source per row). "
         "Each row estimates the kernel family that was measured, as far as it compiles here: for a peer that "
         "is a Triton flash-attention kernel (tutorial 06, AITER prefill, tuned Triton backward) our own Triton "
         "FA-2 kernel (bench/peers_triton.py: forward, or the backward's preprocess + dK/dV + dQ kernels) "
         "compiled here offline with Triton for the row's arch, dtype and problem and estimated as bench/peers.py "
         "does (model/loop_kernel.py from its ISA) -- the same family as the peer's, not its own code; for every "
         "other GEMM and attention row *our* default kernel for the same problem (library GEMMs, CK, HIP and "
         "assembly forwards: no compiler for their code here); microbenchmark rows a generated WMMA-only loop "
         "kernel (wmma_gen/kernels/wmma_loop.py, 8 v_wmma chains x 4 waves) from its ISA at efficiency 1. The "
         "fit and the bands use these estimates (issue 38 item 4: fitted on our own forward, the loop efficiency "
         "absorbed the Triton loops' looseness and under-estimated every compiled kernel of our structure). "
         "ratio = published / estimate. Column *our default kernel*: the same for our default kernel on every "
         "row (what `wmma_gen` runs); column *Triton peer compiled here*: the Triton estimate alone.", "",
         "## Fitted parameters", "",
         "| parameter | value | fitted on | source |", "|---|---|---|---|"]
    for arch, ghz in sorted(f.sustained_ghz.items()):
        t = TARGETS[arch]
        L.append(f"| {arch} sustained WMMA clock | {ghz:.3f} GHz ({ghz / t.boost_ghz:.3f} x {t.boost_ghz} boost) "
                 f"| {f.clock_how[arch]} | targets.py `sustained_source` |")
    for fam, e in f.efficiency.items():
        L.append(f"| {fam} efficiency | {e:.3f} | {' '.join(f.efficiency_from[fam])} | params.EFFICIENCY |")
    for fam, b in bands.items():
        L.append(f"| {fam} band (published/estimate) | {b[0]:.2f} .. {b[1]:.2f} | fit rows of {fam}, +-{C.BAND_MARGIN} "
                 "| params.BAND |")
    if exposed is not None:
        L.append(f"| lds_exposed (share of the CU's LDS clocks the WMMAs do not hide) | {exposed:.2f} "
                 f"| published tiles of {' '.join(exposed_from)} (held-out tiles: checked, below) | params.LDS_EXPOSED |")
    L += ["", *floor_lines(floors or {}, f)]
    nodata = [a for a, t in TARGETS.items() if not t.sustained_ghz]
    L += ["", f"Targets without any point ({', '.join(nodata)}): boost clock, fitted efficiencies, band stretched "
          "by the lowest/highest sustained/boost ratio measured.", "",
          "Stored values (targets.py, params.py) vs this fit: " + ("identical (within 0.5%)." if not check else
                                                                   "**differ**: " + "; ".join(check)), "",
          "## Summary", "", f"* fit points: {_summary(df, True)}", f"* held-out points: {_summary(df, False)}", "",
          "## Every point", "",
          "| id | arch | published (kind, impl, dtype, config) | TFLOP/s | role | before: est / ratio | "
          "after: est [low..high] / ratio | in band | our default kernel: est / ratio | our limiter "
          "| Triton peer compiled here: est / ratio |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples():
        assumed = f"; assumed: {r.assumed}" if r.assumed else ""
        L.append(f"| {r.id} | {r.arch} | {r.kind}, {r.implementation}, {r.dtype}, {r.config or '-'}{assumed} "
                 f"| {r.published_tflops:g} | {r.role} | {r.est_before:.1f} / {r.ratio_before:.2f} "
                 f"| {r.est_after:.1f} [{r.est_low:.1f}..{r.est_high:.1f}] / {r.ratio_after:.2f} "
                 f"| {'yes' if r.in_band else 'no'} | {r.our_est:.1f} / {r.our_ratio:.2f} | {r.limiter} "
                 f"| {_triton_cell(r)} |")
    L += ["", *misses, "## Sources", ""] + [f"* {r.id}: {r.source_title} -- {r.source_link}" for r in df.itertuples()]
    L += ["", "Plot: `model_calibration.png` (published vs estimate, before and after; fit and held-out marked).", ""]
    return "\n".join(L)


def plot(df: pd.DataFrame, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), dpi=110, sharey=True)
    for ax, col, title in ((axes[0], "est_before", "before (boost clock, efficiency 1)"),
                           (axes[1], "est_after", "after calibration")):
        for role, marker in (("fit", "o"), ("held_out", "x")):
            sub = df[(df["role"] != "held_out") == (role == "fit")]
            for arch, g in sub.groupby("arch"):
                ax.scatter(g[col], g["published_tflops"], marker=marker, label=f"{arch} {role}")
        top = max(df["published_tflops"].max(), df[["est_before", "est_after"]].max().max()) * 1.1
        bottom = min(df["published_tflops"].min(), df[["est_before", "est_after"]].min().min()) / 1.1
        ax.plot([bottom, top], [bottom, top], "k-", lw=0.7, label="published = estimate")
        if col == "est_after":
            for (fam, (lo, hi)), ls in zip(params.BAND.items(), ("--", ":")):
                for r in (lo, hi):
                    ax.plot([bottom, top], [bottom * r, top * r], "k", ls=ls, lw=0.5,
                            label=f"{fam} band {lo}..{hi}" if r == lo else None)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("our model's estimate, TFLOP/s (source=model)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("published measurement, TFLOP/s (others' real GPUs)")
    axes[1].legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=Path, default=CP.POINTS_CSV)
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    args = ap.parse_args(argv)
    with shipped_schedules_only():
        try:
            res = run(args.points, args.out)
        except NeedsTriton as e:
            print(f"calibrate: {e}", file=sys.stderr)
            return 2
    f, df = res["fit"], res["df"]
    print("fit:", ", ".join(f"{a} sustained {g:.3f} GHz ({f.clock_how[a]})" for a, g in sorted(f.sustained_ghz.items())))
    print("     efficiency " + ", ".join(f"{k} {v:.3f}" for k, v in f.efficiency.items())
          + "; band " + ", ".join(f"{k} {b[0]:.2f}..{b[1]:.2f}" for k, b in res["bands"].items()))
    print(f"     lds_exposed {res['lds_exposed']:.2f} (ranking at the fit points' published tiles)")
    print("fit points     :", _summary(df, True))
    print("held-out points:", _summary(df, False))
    for line in res["check"]:
        print("STORED VALUES DIFFER:", line)
    print(f"wrote {args.out / 'model_calibration.md'}, .csv, .png")
    return 1 if res["check"] else 0


if __name__ == "__main__":
    sys.exit(main())
