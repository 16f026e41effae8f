"""The dummy op's Tuning: studies per (dtype, n), the generic objective (autotune SpecObjective)."""
from __future__ import annotations

import wmma_gen
from wmma_gen import schedule_files as sf
from wmma_gen.ops.contract import Tuning
from wmma_gen.targets import get_target

from .spec import DTYPES, AxpyDirective

COLUMNS = ("dtype", "n")


def items(cfg):
    """One study per (dtype, n): n from its sweep axis `lengths` (sweep_axes.py, --lengths), or
    the rows of a problems file (autotune/problems.py reads them from the spec)."""
    if cfg.problems:
        return [(p.directive(), p.sizes()) for p in cfg.problems]
    return [(AxpyDirective(dt), {"n": n}) for dt in cfg.dtypes for n in cfg.axes["lengths"]]


def study_name(cfg, d, p) -> str:
    base = f"dummy-{cfg.arch}-{d.dtype}-n{p['n']}"
    return f"{cfg.study_name}:{base}" if cfg.study_name else base


def row(d, p) -> dict:
    return {"dtype": d.dtype, "n": p["n"]}


def study_attrs(cfg, d, p) -> dict:
    return {"arch": cfg.arch, "op": "dummy", "dtype": d.dtype, "directive": d.to_dict(), "problem": p,
            "row": row(d, p), "peak_tflops": get_target(cfg.arch).peak_tflops("f16"), "unit": "TFLOP/s"}


def documents(df, arch: str) -> dict:
    from wmma_gen.tuner import stamp
    best = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))]
    docs = {}
    for dtype, rows in best.groupby("dtype"):
        entries = [{"bucket": {"n": int(r["n"])}, "schedule": {"block": int(r["block"])},
                    "tflops": float(r["tflops"]), "unit": r["unit"], "source": r["source"], "validated": True}
                   for _, r in rows.iterrows()]
        docs[sf.file_name(arch, "dummy", dtype)] = {
            "schema": sf.SCHEMA, "schema_version": sf.SCHEMA_VERSION, "arch": arch, "op": "dummy", "dtype": dtype,
            "generated": stamp(), "wmma_gen_version": wmma_gen.__version__, "entries": entries}
    return docs


def validate_document(doc, path) -> None:
    sf.header(doc, path, "dummy", DTYPES)


def tuning() -> Tuning:
    from wmma_gen.tuner.objective import spec_objective
    quick = {"dtypes": DTYPES, "lengths": (100, 4096), "trials": 2}
    return Tuning(COLUMNS, DTYPES, quick, quick, "vector length n",
                  baselines=lambda d, p, arch: [], items=items, study_name=study_name, row=row,
                  label=lambda ua: f"n{ua['problem']['n']}", series=lambda r: str(r["dtype"]),
                  size=lambda r: float(r["n"]), schedule_text=lambda b: f"block {b['block']}",
                  documents=documents, validate_document=validate_document,
                  objective=spec_objective("dummy"), study_attrs=study_attrs, module=__name__)
