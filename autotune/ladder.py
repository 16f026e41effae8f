"""Ladders: a pandas view of the studies (STYLE rule 8), written as parquet + csv + png.

One row per (arch, op, dtype, shape, schedule) for the best `top_k` validated trials of each
study (`rank` 1 is the best). Rows come from `study.trials_dataframe()` plus the user attrs
the objective recorded; nothing is measured here. TFLOP/s is TOP/s for integer dtypes
(`unit`), and `source` says whether the number was timed (hip) or estimated (model).
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Iterable

import optuna
import pandas as pd

from wmma_gen.schedule import SPACE

SCHEDULE_COLUMNS = [k.name for k in SPACE]
COLUMNS = (["arch", "op", "dtype", "acc", "layout", "m", "n", "k", "batch", "study", "trial", "rank"]
           + SCHEDULE_COLUMNS
           + ["seconds", "tflops", "unit", "peak_tflops", "fraction_of_peak", "source", "validated",
              "gate_source", "gate_max_abs", "vgprs", "lds_bytes", "occupancy", "limiter", "isa_hash",
              "toolchain_mlir", "toolchain_lld", "wmma_gen_version", "timestamp"])


def study_rows(study: optuna.Study, top_k: int = 3) -> list[dict]:
    ua = study.user_attrs
    d = ua["directive"]
    df = study.trials_dataframe(attrs=("number", "state", "value", "datetime_complete", "user_attrs"),
                                multi_index=False)
    if df.empty or "user_attrs_validated" not in df:
        return []
    ok = df[(df["state"] == "COMPLETE") & (df["user_attrs_validated"] == True)]  # noqa: E712
    ok = ok.sort_values("value", ascending=False).head(top_k)
    rows = []
    for rank, (_, t) in enumerate(ok.iterrows(), start=1):
        tc = t.get("user_attrs_toolchain") or {}
        row = {"arch": ua["arch"], "op": ua["op"], "dtype": d["dtype"], "acc": d["acc"], "layout": d["layout"],
               "m": d["m"], "n": d["n"], "k": d["k"], "batch": d["batch"], "study": study.study_name,
               "trial": int(t["number"]), "rank": rank}
        row.update({c: t["user_attrs_schedule"][c] for c in SCHEDULE_COLUMNS})
        row.update({"seconds": t["user_attrs_seconds"], "tflops": t["value"], "unit": ua["unit"],
                    "peak_tflops": ua["peak_tflops"], "fraction_of_peak": t["value"] / ua["peak_tflops"],
                    "source": t["user_attrs_source"], "validated": bool(t["user_attrs_validated"]),
                    "gate_source": t.get("user_attrs_gate_source", ""),
                    "gate_max_abs": t.get("user_attrs_gate_max_abs", float("nan")),
                    "vgprs": int(t["user_attrs_vgprs"]), "lds_bytes": int(t["user_attrs_lds_bytes"]),
                    "occupancy": t.get("user_attrs_occupancy"), "limiter": t.get("user_attrs_limiter", ""),
                    "isa_hash": t["user_attrs_isa_hash"], "toolchain_mlir": tc.get("mlir", ""),
                    "toolchain_lld": tc.get("lld", ""), "wmma_gen_version": t.get("user_attrs_wmma_gen_version", ""),
                    "timestamp": t["datetime_complete"]})
        rows.append(row)
    return rows


def build(studies: Iterable[optuna.Study], top_k: int = 3) -> pd.DataFrame:
    rows = [r for s in studies for r in study_rows(s, top_k)]
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.sort_values(["dtype", "m", "n", "k", "rank"], ignore_index=True) if len(df) else df


def paths(results: str | Path, arch: str, op: str) -> dict[str, Path]:
    base = Path(results) / arch / f"{op}_ladder"
    return {"parquet": base.with_suffix(".parquet"), "csv": base.with_suffix(".csv"), "png": base.with_suffix(".png")}


def write(df: pd.DataFrame, results: str | Path, arch: str, op: str, peaks: dict[str, float]) -> dict[str, Path]:
    """Write the ladder as parquet, csv and a png plot; returns the paths."""
    p = paths(results, arch, op)
    p["parquet"].parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(p["parquet"], index=False)
    df.to_csv(p["csv"], index=False)
    plot(df, p["png"], arch, op, peaks)
    return p


def read(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def _size(row) -> float:
    return float(row["m"] * row["n"] * row["k"]) ** (1 / 3)


def plot(df: pd.DataFrame, path: str | Path, arch: str, op: str, peaks: dict[str, float]) -> Path:
    """TFLOP/s (best schedule per shape) against problem size, one line per dtype, with the
    dtype's peak drawn dashed; each line's label names its source (hip or model)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    best = df[df["rank"] == 1].copy() if len(df) else df
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, dtype in enumerate(sorted(set(best["dtype"]) | set(peaks))):
        color = colors[i % len(colors)]
        sub = best[best["dtype"] == dtype]
        if len(sub):
            sub = sub.assign(size=sub.apply(_size, axis=1)).sort_values("size")
            sources = "+".join(sorted(set(sub["source"])))
            unit = sub["unit"].iloc[0]
            ax.plot(sub["size"], sub["tflops"], "o-", color=color, label=f"{dtype} ({sources}, {unit})")
        if dtype in peaks and (len(sub) or not len(best)):
            ax.axhline(peaks[dtype], color=color, ls="--", lw=0.8, label=f"{dtype} peak {peaks[dtype]:.0f}")
    ax.set_xscale("log", base=2)
    if len(best):
        ticks = sorted(set(best.apply(_size, axis=1).round(1)))
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
        ax.minorticks_off()
    ax.set_xlabel("problem size (M*N*K)^(1/3)")
    ax.set_ylabel("TFLOP/s (TOP/s for integer dtypes)")
    kinds = sorted(set(best["source"])) if len(best) else []
    note = "model estimates, not measurements" if kinds == ["model"] else ", ".join(kinds) or "no valid schedules"
    ax.set_title(f"{op} on {arch}: best schedule per shape ({note})", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path


def stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
