"""Export: best validated schedule per (arch, op, dtype, shape bucket) -> versioned JSON.

Reads ladders (autotune/ladder.py), keeps rank-1 rows whose correctness gate passed and
writes one file per (arch, op, dtype) in the format every op's lookup reads back
(wmma_gen/schedule_files.py; each op's entries from its tuning adapter's `documents`,
autotune/ops/). Default destination: the user's schedules dir (wmma_gen.userdirs), which the
lookup reads before the shipped files.

All or nothing, across ops: every ladder is read, every document built and re-validated with
its op's reader (so an export never produces a file lookup refuses), and every file written to
a temp file in the destination before the first `os.replace`; a failure anywhere before that
removes the temp files and leaves no file of any op written or changed.
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


def documents(df: pd.DataFrame, arch: str) -> list[tuple[str, dict, object]]:
    """(file name, document, adapter) of every op in `df` (one ladder: its columns are one op's)."""
    from .ops import adapter
    docs = []
    for op in sorted(set(df["op"])) if len(df) else []:
        ad = adapter(op)
        docs += [(name, doc, ad) for name, doc in ad.documents(df[df["op"] == op], arch).items()]
    return docs


def write_all(docs: list[tuple[str, dict, object]], out: str | Path) -> list[Path]:
    """Validate every document, write each to a temp file in `out`, then os.replace them all."""
    out = Path(out)
    names = [name for name, _, _ in docs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        from wmma_gen.errors import ScheduleError
        raise ScheduleError("ladders", ", ".join(dup), "one ladder per (op, dtype): two ladders give the same file")
    for name, doc, ad in docs:
        ad.validate_document(doc, out / name)     # the reader's validator, before anything is written
    if not docs:
        return []
    out.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[str, Path]] = []
    try:
        for name, doc, _ in docs:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
            temps.append((name, Path(tmp)))
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=False)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
    except BaseException:
        for _, tmp in temps:
            tmp.unlink(missing_ok=True)
        raise
    for name, tmp in temps:
        os.replace(tmp, out / name)
    return [out / name for name, _ in temps]


def export(df: pd.DataFrame, arch: str, out: str | Path) -> list[Path]:
    """Every op's documents of one ladder, written all or nothing."""
    return write_all(documents(df, arch), out)


def export_many(dfs, arch: str, out: str | Path) -> list[Path]:
    """Several ladders (one per op), written all or nothing across them."""
    return write_all([d for df in dfs if len(df) for d in documents(df, arch)], out)


def export_from(src: str | Path, arch: str, out: str | Path) -> list[Path]:
    files = ladder_files(src, arch)
    if not files:
        from wmma_gen.errors import ScheduleError
        raise ScheduleError("from", str(src), f"a ladder file or a results directory with {arch}/<op>_ladder.parquet "
                                              "(run `wmma-gen sweep` first)")
    return export_many([ladder_mod.read(f) for f in files], arch, out)   # every ladder read before any write
