"""Ladders: a pandas view of the studies (STYLE rule 8), written as parquet + csv + png.

One row per (arch, op, dtype, shape, schedule) for the best `top_k` validated trials of each
study (`rank` 1 is the best). Rows come from `study.trials_dataframe()` plus the user attrs
the objective recorded; nothing is measured here. TFLOP/s is TOP/s for integer dtypes
(`unit`), and `source` says whether the number was timed (hip) or estimated (model).

Files are written atomically (temp file in the same directory, then os.replace): a crash
leaves the previous complete ladder, never a partial one. `read` checks what it is given: the
file parses, every column of COLUMNS is there, the required cells of every row are filled,
a CSV ends with its newline, and the row count equals `ladder_rows` (written in every row),
so a ladder cut short anywhere -- mid-row or at a line boundary -- is a LadderError naming the
file, never a silently smaller export.
"""
from __future__ import annotations

import datetime as _dt
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

import optuna
import pandas as pd

from wmma_gen.errors import WmmaGenError

from .ops import adapter

RESULT_COLUMNS = ["seconds", "tflops", "unit", "peak_tflops", "fraction_of_peak", "source", "est_low", "est_high",
                  "validated", "gate_source", "gate_max_abs", "vgprs", "lds_bytes", "occupancy", "limiter", "isa_hash",
                  "object_sha256",
                  "toolchain_mlir", "toolchain_lld", "wmma_gen_version", "timestamp", "ladder_rows"]
# est_low / est_high: a model row's TFLOP/s times the calibration band (wmma_gen.model.calibration,
# results/model_calibration.md); empty for timed (hip) rows. Ladders written before they existed
# read back with the two columns empty.
OPTIONAL_COLUMNS = ("est_low", "est_high", "object_sha256")   # older ladders read back with them empty


def _est_band(arch: str, op: str, dtype: str, tflops: float, source: str) -> tuple[float, float]:
    if source != "model":
        return float("nan"), float("nan")
    from wmma_gen.model.calibration import band_bounds
    return band_bounds(arch, op, dtype, tflops)


def columns(op: str) -> list[str]:
    """arch, op, the op's problem columns, study/trial/rank, its schedule knobs, the results."""
    ad = adapter(op)
    return (["arch", "op"] + ad.PROBLEM_COLUMNS + ["study", "trial", "rank"] + [k.name for k in ad.SPACE]
            + RESULT_COLUMNS)


def required(op: str) -> list[str]:
    """Cells every row must have (the rest may be empty, e.g. occupancy on an old row)."""
    ad = adapter(op)
    return (["arch", "op"] + ad.PROBLEM_COLUMNS + ["study", "trial", "rank"] + [k.name for k in ad.SPACE]
            + ["tflops", "unit", "fraction_of_peak", "source", "validated", "vgprs", "lds_bytes", "isa_hash",
               "ladder_rows"])


SCHEDULE_COLUMNS = [k.name for k in adapter("gemm").SPACE]
COLUMNS = columns("gemm")
REQUIRED = required("gemm")


class LadderError(WmmaGenError, ValueError):
    """A ladder file is unreadable, of another schema, or incomplete; the message names it."""


def study_rows(study: optuna.Study, top_k: int = 3) -> list[dict]:
    ua = study.user_attrs
    ad = adapter(ua.get("op", "gemm"))
    d = ua["directive"]
    problem = ua.get("row") or {c: d[c] for c in ad.PROBLEM_COLUMNS}
    df = study.trials_dataframe(attrs=("number", "state", "value", "datetime_complete", "user_attrs"),
                                multi_index=False)
    if df.empty or "user_attrs_validated" not in df:
        return []
    ok = df[(df["state"] == "COMPLETE") & (df["user_attrs_validated"] == True)]  # noqa: E712
    ok = ok.sort_values("value", ascending=False).head(top_k)
    rows = []
    for rank, (_, t) in enumerate(ok.iterrows(), start=1):
        tc = t.get("user_attrs_toolchain") or {}
        row = {"arch": ua["arch"], "op": ua["op"], **problem, "study": study.study_name,
               "trial": int(t["number"]), "rank": rank}
        row.update({k.name: t["user_attrs_schedule"][k.name] for k in ad.SPACE})
        row.update({"seconds": t["user_attrs_seconds"], "tflops": t["value"], "unit": ua["unit"],
                    "peak_tflops": ua["peak_tflops"], "fraction_of_peak": t["value"] / ua["peak_tflops"],
                    "source": t["user_attrs_source"], "validated": bool(t["user_attrs_validated"]),
                    **dict(zip(("est_low", "est_high"), _est_band(ua["arch"], ua["op"], d["dtype"], t["value"],
                                                           t["user_attrs_source"]))),
                    "gate_source": t.get("user_attrs_gate_source", ""),
                    "gate_max_abs": t.get("user_attrs_gate_max_abs", float("nan")),
                    "vgprs": int(t["user_attrs_vgprs"]), "lds_bytes": int(t["user_attrs_lds_bytes"]),
                    "occupancy": t.get("user_attrs_occupancy"), "limiter": t.get("user_attrs_limiter", ""),
                    "isa_hash": t["user_attrs_isa_hash"],
                    "object_sha256": t.get("user_attrs_object_sha256", ""), "toolchain_mlir": tc.get("mlir", ""),
                    "toolchain_lld": tc.get("lld", ""), "wmma_gen_version": t.get("user_attrs_wmma_gen_version", ""),
                    "timestamp": t["datetime_complete"]})
        rows.append(row)
    return rows


def build(studies: Iterable[optuna.Study], top_k: int = 3, op: str | None = None) -> pd.DataFrame:
    studies = list(studies)
    op = op or (studies[0].user_attrs.get("op", "gemm") if studies else "gemm")
    rows = [r for s in studies for r in study_rows(s, top_k)]
    for r in rows:
        r["ladder_rows"] = len(rows)
    df = pd.DataFrame(rows, columns=columns(op))
    keys = [c for c in adapter(op).PROBLEM_COLUMNS if c != "acc"] + ["rank"]
    return df.sort_values(keys, ignore_index=True) if len(df) else df


def paths(results: str | Path, arch: str, op: str) -> dict[str, Path]:
    base = Path(results) / arch / f"{op}_ladder"
    return {"parquet": base.with_suffix(".parquet"), "csv": base.with_suffix(".csv"), "png": base.with_suffix(".png")}


def _staged(path: Path, write: Callable[[Path], object]) -> Path:
    """Write through `write(tmp)` to a temp file next to `path`; returns the temp path."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write(df: pd.DataFrame, results: str | Path, arch: str, op: str, peaks: dict[str, float]) -> dict[str, Path]:
    """Write the ladder as parquet, csv and a png plot, each atomically; returns the paths."""
    p = paths(results, arch, op)
    p["parquet"].parent.mkdir(parents=True, exist_ok=True)
    df = df.assign(ladder_rows=len(df))
    writers = {"parquet": lambda t: df.to_parquet(t, index=False), "csv": lambda t: df.to_csv(t, index=False),
               "png": lambda t: plot(df, t, arch, op, peaks)}
    staged: dict[str, Path] = {}
    try:
        for kind, fn in writers.items():
            staged[kind] = _staged(p[kind], fn)
        for kind, tmp in staged.items():
            os.replace(tmp, p[kind])
    finally:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
    return p


def read(path: str | Path) -> pd.DataFrame:
    """A ladder file (.parquet or .csv), checked as the module doc says; raises LadderError."""
    path = Path(path)
    what = f"ladder {path}"
    redo = "rerun `wmma-gen sweep` to rewrite it (the studies are kept in their storage)"
    if path.suffix not in (".parquet", ".csv"):
        raise LadderError(f"{what}: a ladder is a .parquet or .csv file written by `wmma-gen sweep`")
    try:
        if path.suffix == ".parquet":
            df = pd.read_parquet(path)
        else:
            raw = path.read_bytes()
            if raw and not raw.endswith(b"\n"):
                raise LadderError(f"{what} is truncated: its last row is cut short (no final newline); {redo}")
            df = pd.read_csv(path)
    except LadderError:
        raise
    except Exception as e:  # pandas/pyarrow raise many kinds for an unreadable file
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise LadderError(f"{what} cannot be read as {path.suffix[1:]} ({first}); {redo}") from None
    op = str(df["op"].iloc[0]) if len(df) and "op" in df.columns else path.stem.replace("_ladder", "")
    try:
        cols, req = columns(op), required(op)
    except WmmaGenError:
        raise LadderError(f"{what}: op {op!r} is not one the tuner knows; {redo}") from None
    df = df.assign(**{c: "" if c == "object_sha256" else float("nan") for c in OPTIONAL_COLUMNS if c not in df.columns})
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise LadderError(f"{what} lacks columns {', '.join(missing)} (another schema, or an older wmma_gen); {redo}")
    if len(df):
        empty = df[req].isna()
        if empty.any().any():
            row = int(empty.any(axis=1).to_numpy().nonzero()[0][0])
            gaps = [c for c in req if empty.iloc[row][c]]
            raise LadderError(f"{what} is incomplete: row {row + 1} has no {', '.join(gaps)}; {redo}")
        expected = set(df["ladder_rows"].astype(int))
        if expected != {len(df)}:
            raise LadderError(f"{what} is truncated: it holds {len(df)} rows, it was written with "
                              f"{', '.join(map(str, sorted(expected)))}; {redo}")
    return df


def plot(df: pd.DataFrame, path: str | Path, arch: str, op: str, peaks: dict[str, float]) -> Path:
    """TFLOP/s (best schedule per shape) against problem size, one line per dtype, with the
    dtype's peak drawn dashed; each line's label names its source (hip or model)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _size = adapter(op).size
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    best = df[df["rank"] == 1].copy() if len(df) else df
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    series = adapter(op).series
    best = best.assign(series=best.apply(series, axis=1)) if len(best) else best.assign(series=[])
    for i, name in enumerate(sorted(set(best["series"]) | set(peaks))):
        color = colors[i % len(colors)]
        sub = best[best["series"] == name]
        if len(sub):
            sub = sub.assign(size=sub.apply(_size, axis=1)).sort_values("size")
            sources = "+".join(sorted(set(sub["source"])))
            unit = sub["unit"].iloc[0]
            ax.plot(sub["size"], sub["tflops"], "o-", color=color, label=f"{name} ({sources}, {unit})")
        if name in peaks and (len(sub) or not len(best)):
            ax.axhline(peaks[name], color=color, ls="--", lw=0.8, label=f"{name} peak {peaks[name]:.0f}")
    ax.set_xscale("log", base=2)
    if len(best):
        ticks = sorted(set(best.apply(_size, axis=1).round(1)))
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
        ax.minorticks_off()
    ax.set_xlabel(adapter(op).SIZE_LABEL)
    ax.set_ylabel("TFLOP/s (TOP/s for integer dtypes)")
    kinds = sorted(set(best["source"])) if len(best) else []
    note = "model estimates, not measurements" if kinds == ["model"] else ", ".join(kinds) or "no valid schedules"
    ax.set_title(f"{op} on {arch}: best schedule per shape ({note})", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
