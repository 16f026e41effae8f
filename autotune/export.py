"""Export: best validated schedule per (arch, op, dtype, shape bucket) -> versioned JSON.

Reads a ladder (autotune/ladder.py), keeps rank-1 rows whose correctness gate passed and
writes one file per (arch, op, dtype) in the format the op's lookup reads back (its tuning
adapter's `documents`, autotune/ops/). Each document is re-validated with the op's reader before
it is written (atomically: temp file + os.replace), so an export can never produce a file lookup refuses.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd

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
