"""Export: best validated schedule per (arch, op, dtype, shape bucket) -> versioned JSON.

Reads a ladder (autotune/ladder.py), keeps rank-1 rows whose correctness gate passed and
writes one file per (arch, op, dtype) in the format wmma_gen/schedules_db.py documents and
reads back. Each document is re-validated with schedules_db.parse before it is written
(atomically: temp file + os.replace), so an export can never produce a file lookup refuses.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import pandas as pd

import wmma_gen
from wmma_gen import schedules_db
from wmma_gen.schedule import SPACE

from . import ladder as ladder_mod
from .study import OPS


def ladder_files(src: str | Path, arch: str) -> list[Path]:
    """`src` is a ladder file, or a results directory holding <arch>/<op>_ladder.parquet."""
    src = Path(src)
    if src.is_file():
        return [src]
    for base in (src / arch, src):
        found = [p for op in OPS for p in [base / f"{op}_ladder.parquet"] if p.is_file()]
        if found:
            return found
    return []


def _scalar(v):
    if hasattr(v, "item"):
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def documents(df: pd.DataFrame, arch: str) -> dict[str, dict]:
    """file name -> schema document, from the ladder's validated rank-1 rows for `arch`."""
    best = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))]
    docs: dict[str, dict] = {}
    for (op, dtype), rows in best.groupby(["op", "dtype"], sort=True):
        rows = rows.sort_values(["acc", "layout", "m", "n", "k", "tflops"], ascending=[True, True, True, True, True, False])
        rows = rows.drop_duplicates(["acc", "layout", "m", "n", "k"])
        entries = []
        for _, r in rows.iterrows():
            entries.append({
                "bucket": {"m": int(r["m"]), "n": int(r["n"]), "k": int(r["k"])},
                "acc": r["acc"], "layout": r["layout"],
                "schedule": {k.name: _scalar(r[k.name]) for k in SPACE},
                "tflops": round(float(r["tflops"]), 3), "unit": r["unit"],
                "fraction_of_peak": round(float(r["fraction_of_peak"]), 4), "source": r["source"],
                "validated": True, "gate_source": _scalar(r.get("gate_source")) or "",
                "vgprs": int(r["vgprs"]), "lds_bytes": int(r["lds_bytes"]),
                "occupancy": None if _scalar(r.get("occupancy")) is None else int(r["occupancy"]), "isa_hash": r["isa_hash"],
                "study": r["study"], "trial": int(r["trial"]),
                "toolchain": {"mlir": r["toolchain_mlir"], "lld": r["toolchain_lld"]},
                "timestamp": str(r["timestamp"]),
            })
        tcs = sorted({(e["toolchain"]["mlir"], e["toolchain"]["lld"]) for e in entries})
        docs[schedules_db.file_name(arch, op, dtype)] = {
            "schema": schedules_db.SCHEMA, "schema_version": schedules_db.SCHEMA_VERSION,
            "arch": arch, "op": op, "dtype": dtype, "generated": ladder_mod.stamp(),
            "wmma_gen_version": wmma_gen.__version__,
            "toolchain": {"mlir": tcs[0][0], "lld": tcs[0][1]} if len(tcs) == 1
            else {"mixed": [{"mlir": m, "lld": lld} for m, lld in tcs]},
            "entries": entries,
        }
    return docs


def export(df: pd.DataFrame, arch: str, out: str | Path) -> list[Path]:
    """Every op's documents (its adapter's format), each re-validated by that op's reader."""
    from .ops import adapter
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    docs = []
    for op in sorted(set(df["op"])) if len(df) else []:
        ad = adapter(op)
        docs += [(ad, name, doc) for name, doc in ad.documents(df[df["op"] == op], arch).items()]
    for ad, name, doc in docs:
        ad.validate_document(doc, out / name)   # the reader's validator, before anything is written
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=out)
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, out / name)
        written.append(out / name)
    return written


def export_from(src: str | Path, arch: str, out: str | Path) -> list[Path]:
    files = ladder_files(src, arch)
    if not files:
        from wmma_gen.errors import ScheduleError
        raise ScheduleError("from", str(src), f"a ladder file or a results directory with {arch}/<op>_ladder.parquet "
                                              "(run `wmma-gen sweep` first)")
    written = []
    for f in files:   # one ladder per op: their columns differ
        written += export(ladder_mod.read(f), arch, out)
    return written
