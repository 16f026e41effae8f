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

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

import optuna
import pandas as pd

from wmma_gen.errors import WmmaGenError

from wmma_gen.ops import registry
from wmma_gen.ops.registry import tuning as adapter

from .plot import plot

RESULT_COLUMNS = ["seconds", "tflops", "unit", "peak_tflops", "fraction_of_peak", "source", "est_low", "est_high",
                  "default_tflops", "default_source", "model_flips", "validated", "gate_source", "gate_max_abs", "vgprs", "lds_bytes",
                  "occupancy", "limiter", "isa_hash",
                  "object_sha256",
                  "toolchain_mlir", "toolchain_lld", "wmma_gen_version", "timestamp", "ladder_rows"]
# est_low / est_high: a model row's TFLOP/s times the calibration band (wmma_gen.model.calibration,
# results/model_calibration.md); empty for timed (hip) rows. Ladders written before they existed
# read back with the two columns empty.
# default_tflops / default_source: the op's built-in default schedule on the same problem, measured
# the same way in the same study (default_figure below); export keeps only entries that beat it.
# model_flips: for a model-ranked row above the default, the variations of the model's guessed
# parameters under which it would lose to the default (model/robustness.py); "" = none found or
# not checked. Such a row ranks below every row without flips (robust_order): the bucket keeps
# the best robust schedule, or the default's own trial.
OPTIONAL_COLUMNS = ("est_low", "est_high", "object_sha256", "default_tflops", "default_source",
                    "model_flips")   # older ladders
# read back with them empty; an absent default_source reads back as None ("not recorded"), never as "missing"


def _est_band(arch: str, op: str, dtype: str, tflops: float, source: str) -> tuple[float, float]:
    if source != "model":
        return float("nan"), float("nan")
    from wmma_gen.model.calibration import band_bounds
    return band_bounds(arch, registry.get(op).family, dtype, tflops)


def columns(op: str) -> list[str]:
    """arch, op, the op's problem columns, study/trial/rank, its schedule knobs, the results."""
    ad = adapter(op)
    return (["arch", "op"] + list(ad.columns) + list(ad.extra_columns)
            + ["study", "trial", "rank"] + [k.name for k in registry.get(op).space] + RESULT_COLUMNS)


def required(op: str) -> list[str]:
    """Cells every row must have (the rest may be empty, e.g. occupancy on an old row)."""
    ad = adapter(op)
    return (["arch", "op"] + list(ad.columns) + ["study", "trial", "rank"] + [k.name for k in registry.get(op).space]
            + ["tflops", "unit", "fraction_of_peak", "source", "validated", "vgprs", "lds_bytes", "isa_hash",
               "ladder_rows"])


LEGACY_OP = "gemm"     # what a study or ladder from before studies recorded their op holds
SCHEDULE_COLUMNS = [k.name for k in registry.get(LEGACY_OP).space]
COLUMNS = columns(LEGACY_OP)
REQUIRED = required(LEGACY_OP)


class LadderError(WmmaGenError, ValueError):
    """A ladder file is unreadable, of another schema, or incomplete; the message names it."""


@contextlib.contextmanager
def _no_schedule_files():
    """Every op's lookup reads schedule files through schedule_files.lookup, which walks
    search_dirs(); with no directory to search it finds nothing and the op falls back to its
    built-in default. (The registry has no lookup-free default_schedule; this keeps the ladder
    free of op names.)"""
    from wmma_gen import schedule_files as sf
    saved = sf.search_dirs
    sf.search_dirs = lambda shipped=None: []
    try:
        yield
    finally:
        sf.search_dirs = saved


def builtin_default(op: str, directive: dict, arch: str, problem: dict | None):
    """(directive, problem, the op's built-in default schedule): what the op runs when no
    schedule file has an entry for the call (never the user's or the shipped tuned files)."""
    from wmma_gen.ops import registry
    spec = registry.get(op)
    d = spec.directive.from_dict(directive)
    with _no_schedule_files():
        return d, problem, spec.default_schedule(d, arch, problem)


def default_figure(study: optuna.Study) -> dict:
    """The op's built-in default schedule on this study's problem, measured the same way: the
    study's own trial of it (the sweep enqueues it as a baseline into every new study, so a GPU
    times it in the same run), else -- for a model-ranked study only -- the model's estimate of
    its compiled kernel (deterministic: the same as a trial would give). default_source is the
    figure's source, "failed" (the default was pruned or cannot run the problem: 0 TFLOP/s, so
    any validated schedule beats it) or "missing" (a timed study without the default's trial:
    nothing to compare with)."""
    ua = study.user_attrs
    op = ua.get("op", LEGACY_OP)
    try:
        d, p, s = builtin_default(op, ua["directive"], ua["arch"], ua.get("problem") or ua.get("row"))
    except (WmmaGenError, ValueError, TypeError, KeyError):
        return {"default_tflops": 0.0, "default_source": "failed"}
    want, failed, sources = s.to_dict(), False, set()
    for t in study.get_trials(deepcopy=False):
        sources.add(t.user_attrs.get("source"))
        if t.user_attrs.get("schedule") != want:
            continue
        if t.state == optuna.trial.TrialState.COMPLETE and t.user_attrs.get("validated"):
            return {"default_tflops": float(t.value), "default_source": str(t.user_attrs.get("source"))}
        failed = failed or t.state in (optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL)
    if failed:
        return {"default_tflops": 0.0, "default_source": "failed"}
    if "hip" in sources:
        return {"default_tflops": float("nan"), "default_source": "missing"}
    from wmma_gen.ops import registry
    try:
        e = registry.get(op).estimate_of(d, s, p, ua["arch"])
    except WmmaGenError:
        return {"default_tflops": 0.0, "default_source": "failed"}
    return {"default_tflops": float(e.tflops), "default_source": e.source}


def robust_order(study: optuna.Study, ok: pd.DataFrame, default: dict) -> dict:
    """{trial row index: "why it is not robust"} for the model-ranked trials above the default,
    best first, up to the first whose win survives every variation of the model's guessed
    parameters (model/robustness.flips); rows past it are not checked. Empty for timed studies:
    a measurement needs no such check."""
    if default.get("default_source") != "model" or not len(ok):
        return {}
    from wmma_gen.model import robustness
    from .model_tie import beats
    ua = study.user_attrs
    op = ua.get("op", LEGACY_OP)
    spec = registry.get(op)
    d, p, s_default = builtin_default(op, ua["directive"], ua["arch"], ua.get("problem") or ua.get("row"))
    out = {}
    for i, t in ok.iterrows():
        if t["user_attrs_source"] != "model" or not beats(float(t["value"]), default["default_tflops"]):
            break               # at or within the model's resolution of the default: ranked by tie_values
        s = spec.schedule.from_dict(t["user_attrs_schedule"])
        if s == s_default:
            break
        found = robustness.flips(ua["arch"], lambda: (spec.estimate_of(d, s, p, ua["arch"]).tflops,
                                                       spec.estimate_of(d, s_default, p, ua["arch"]).tflops))
        if not found:
            break
        out[i] = "; ".join(map(str, found))
    return out


def tie_values(study: optuna.Study, ok: pd.DataFrame, default: dict) -> dict:
    """{trial row index: sort key} by value, best first, except that in a model-ranked study a trial within the
    model's resolution of the default's own trial (autotune/model_tie.py) sorts as the default's figure and
    after it: a model tie is not evidence, so the default keeps the bucket."""
    keys = {i: (-float(ok.at[i, "value"]), 0) for i in ok.index}
    if default.get("default_source") != "model" or not len(ok):
        return keys
    from .model_tie import ties
    want = _default_schedule(study).to_dict()
    mine = [i for i in ok.index if ok.at[i, "user_attrs_schedule"] == want]
    if not mine:
        return keys
    base = float(ok.at[mine[0], "value"])
    for i in ok.index:
        if ok.at[i, "user_attrs_source"] == "model" and ties(float(ok.at[i, "value"]), base):
            keys[i] = (-base, 0 if i == mine[0] else 1, -float(ok.at[i, "value"]))
    return keys


def _default_schedule(study: optuna.Study):
    ua = study.user_attrs
    return builtin_default(ua.get("op", LEGACY_OP), ua["directive"], ua["arch"], ua.get("problem") or ua.get("row"))[2]


def study_rows(study: optuna.Study, top_k: int = 3) -> list[dict]:
    ua = study.user_attrs
    op = ua.get("op", LEGACY_OP)
    ad = adapter(op)
    d = ua["directive"]
    # extra columns (epilogue; window/varlen) with what studies from before they existed imply
    # a study without a row: its columns from the directive and the problem (older GEMM studies
    # stored the sizes in the directive)
    fields = {**d, **(ua.get("problem") or {})}
    problem = {**ad.extra_columns, **(ua.get("row") or {c: fields[c] for c in ad.columns})}
    df = study.trials_dataframe(attrs=("number", "state", "value", "datetime_complete", "user_attrs"),
                                multi_index=False)
    if df.empty or "user_attrs_validated" not in df:
        return []
    ok = df[(df["state"] == "COMPLETE") & (df["user_attrs_validated"] == True)]  # noqa: E712
    ok = ok.sort_values("value", ascending=False)
    default = default_figure(study) if len(ok) else {}
    flips = robust_order(study, ok, default)
    value = tie_values(study, ok, default)
    ok = ok.loc[sorted(ok.index, key=lambda i: (bool(flips.get(i)),) + value[i])].head(top_k)
    rows = []
    for rank, (i, t) in enumerate(ok.iterrows(), start=1):
        tc = t.get("user_attrs_toolchain") or {}
        row = {"arch": ua["arch"], "op": ua["op"], **problem, "study": study.study_name,
               "trial": int(t["number"]), "rank": rank}
        row.update({k.name: t["user_attrs_schedule"][k.name] for k in registry.get(op).space})
        row.update({"seconds": t["user_attrs_seconds"], "tflops": t["value"], "unit": ua["unit"],
                    "peak_tflops": ua["peak_tflops"], "fraction_of_peak": t["value"] / ua["peak_tflops"],
                    "source": t["user_attrs_source"], "validated": bool(t["user_attrs_validated"]),
                    **dict(zip(("est_low", "est_high"), _est_band(ua["arch"], ua["op"], d["dtype"], t["value"],
                                                           t["user_attrs_source"]))), **default,
                    "model_flips": flips.get(i, ""),
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
    op = op or (studies[0].user_attrs.get("op", LEGACY_OP) if studies else LEGACY_OP)
    rows = [r for s in studies for r in study_rows(s, top_k)]
    for r in rows:
        r["ladder_rows"] = len(rows)
    df = pd.DataFrame(rows, columns=columns(op))
    keys = [c for c in adapter(op).columns if c != "acc"] + ["rank"]
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
               "png": lambda t: plot(df, t, arch, op, peaks)}   # autotune/plot.py
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
    fill = {"object_sha256": "", "default_source": None, "model_flips": ""}
    df = df.assign(**{c: fill.get(c, float("nan")) for c in OPTIONAL_COLUMNS if c not in df.columns})
    for c, v in adapter(op).extra_columns.items():   # older ladders: what they imply
        df[c] = df[c].where(df[c].notna(), v) if c in df.columns else v
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

