"""The ladder plot (issue 25 item 5): TFLOP/s of the best schedule per shape, one panel per dtype.

Each panel (one input dtype; integer dtypes in TOP/s):
  - y from 0, the dtype's peak as a dashed black line (peaks: dtype -> TFLOP/s)
  - per series of the op (gemm: the dtype; attention: dtype, head dim, mask) the tuned line
    (rank-1 rows, label names the source: hip = timed, model = estimate) and, for model rows,
    the calibration band est_low..est_high shaded (wmma_gen/model/calibration.py)
  - the op's built-in default on the same problems, measured the same way (ladder columns
    default_tflops / default_source, autotune/ladder.py): grey crosses on a dotted line
  - the best point of each series labelled with its schedule (the adapter's schedule_text)
  - optional baselines (bench --vs torch): {dtype: [(size, TFLOP/s, label)]}, drawn as squares

matplotlib is imported inside plot(): importing this module (and the ladder) stays light.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from wmma_gen.ops.registry import tuning as adapter


def _finite(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def panels(df: pd.DataFrame, peaks: dict[str, float]) -> list[str]:
    """The dtypes that get a panel: those with rank-1 rows, else every dtype with a peak."""
    best = df[df["rank"] == 1] if len(df) else df
    return sorted(set(best["dtype"])) if len(best) else sorted(peaks)


def plot(df: pd.DataFrame, path: str | Path, arch: str, op: str, peaks: dict[str, float],
         baselines: dict[str, list[tuple[float, float, str]]] | None = None) -> Path:
    """Write the ladder plot to `path` (png)."""
    import matplotlib.pyplot as plt
    fig = figure(df, arch, op, peaks, baselines)
    path = Path(path)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def figure(df: pd.DataFrame, arch: str, op: str, peaks: dict[str, float],
           baselines: dict[str, list[tuple[float, float, str]]] | None = None):
    """The matplotlib Figure of the ladder plot (the caller closes it)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ad = adapter(op)
    best = df[df["rank"] == 1].copy() if len(df) else df.copy()
    dtypes = panels(df, peaks) or ["-"]
    fig, axes = plt.subplots(1, len(dtypes), figsize=(max(6.4, 5.2 * len(dtypes)), 4.4), dpi=110, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, dt in zip(axes[0], dtypes):
        sub = best[best["dtype"] == dt] if len(best) else best
        top = _panel(ax, sub, ad, colors)
        unit = str(sub["unit"].iloc[0]) if len(sub) else ("TOP/s" if dt.startswith("i") else "TFLOP/s")
        for x, y, name in (baselines or {}).get(dt, []):
            ax.plot([x], [y], "s", color="tab:red", ms=5, label=name)
            top = max(top, y)
        if dt in peaks:
            ax.axhline(peaks[dt], color="k", ls="--", lw=0.8, label=f"peak {peaks[dt]:.0f} {unit}")
            top = max(top, peaks[dt])
        ax.set_ylim(0, top * 1.12 if top > 0 else 1.0)
        ax.set_xscale("log", base=2)
        if len(sub):
            ticks = sorted(set(sub.apply(ad.size, axis=1).round(1)))
            ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
            ax.minorticks_off()
        ax.set_xlabel(ad.size_label)
        ax.set_ylabel(unit)
        ax.set_title(dt if len(sub) else f"{dt}: no validated schedule", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, loc="lower right")
    kinds = sorted(set(best["source"])) if len(best) else []
    note = "model estimates, not measurements" if kinds == ["model"] else ", ".join(kinds) or "no valid schedules"
    fig.suptitle(f"{op} on {arch}: best schedule per shape ({note})", fontsize=9)
    fig.tight_layout()
    return fig


def _panel(ax, sub: pd.DataFrame, ad, colors) -> float:
    """Draw one dtype's series; returns the largest value drawn (for the y range)."""
    top = 0.0
    if not len(sub):
        return top
    sub = sub.assign(series=sub.apply(ad.series, axis=1), size=sub.apply(ad.size, axis=1))
    for i, (name, s) in enumerate(sorted(sub.groupby("series"), key=lambda kv: kv[0])):
        color = colors[i % len(colors)]
        s = s.sort_values("size")
        sources = "+".join(sorted(set(s["source"])))
        ax.plot(s["size"], s["tflops"], "o-", color=color, label=f"{name} tuned ({sources})")
        top = max(top, float(s["tflops"].max()))
        band = s[(s["source"] == "model") & s["est_low"].map(_finite) & s["est_high"].map(_finite)]
        if len(band):   # shaded between shapes, and a bar at each shape (a one-shape ladder has no area)
            lo, hi = band["est_low"].astype(float), band["est_high"].astype(float)
            ax.fill_between(band["size"], lo, hi, color=color, alpha=0.15, lw=0, label=f"{name} model band")
            ax.vlines(band["size"], lo, hi, color=color, alpha=0.3, lw=5)
            top = max(top, float(band["est_high"].astype(float).max()))
        if "default_tflops" in s:
            dflt = s[s["default_tflops"].map(_finite)]
            if len(dflt):
                src = "+".join(sorted({str(v) for v in dflt["default_source"]}))
                ax.plot(dflt["size"], dflt["default_tflops"].astype(float), "x:", color="0.45", ms=6,
                        label=f"{name} default ({src})")
                top = max(top, float(dflt["default_tflops"].astype(float).max()))
        b = s.loc[s["tflops"].idxmax()]
        right = len(s) > 1 and b["size"] == s["size"].max()      # keep the label inside the panel
        ax.annotate(f"best: {ad.schedule_text(b)}\n{float(b['tflops']):.1f} {b['unit']} ({b['source']})",
                    (b["size"], b["tflops"]), textcoords="offset points", xytext=(-8 if right else 8, 8 + 24 * i),
                    ha="right" if right else "left", fontsize=6, color=color)
    return top
