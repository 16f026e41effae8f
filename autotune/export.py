"""Export: best validated schedule per (arch, op, dtype, shape bucket) -> versioned JSON.

Reads ladders (autotune/ladder.py), keeps rank-1 rows whose correctness gate passed and
writes one file per (arch, op, dtype) in the format every op's lookup reads back
(wmma_gen/schedule_files.py; each op's entries from its tuning adapter's `documents`,
ops/<op>/tuning.py). Default destination: the user's schedules dir (wmma_gen.userdirs), which the
lookup reads before the shipped files.

Never worse than the default (issue 25 item 3): a ladder's rank-1 row is exported only if its
figure is >= the op's built-in default schedule on the same problem, measured the same way in
the same study (ladder columns default_tflops / default_source, autotune/ladder.py) and, for a
model figure, only if that win survives the model's own guesses (ladder column model_flips,
model/robustness.py: the ladder ranks a non-robust model win below the default's trial); a row that
does not beat it, or whose study has no such figure, is dropped with one line saying so (`note`,
stderr by default). A row equal to the default (the default itself won) is kept: it pins its
bucket to the default, so the nearest-bucket lookup does not hand that size another bucket's tile.
Ladders written before the default figure was recorded (default_source absent) are exported
unchecked, with one line saying so.

Never worse than what it shadows (issue 37, autotune/shadow.py): an entry whose bucket another
schedule file in the search path already has (shipped or user) is kept only if it beats that
entry measured the same way; one line per entry says what was kept and dropped.

A model tie keeps the default (autotune/model_tie.py): a model-ranked entry that is not the default must
beat the default's model figure on its bucket problem by more than the model's resolution (1%); the ladder
ranks a tying trial below the default's own trial, so the default is the entry and pins its bucket, and an
entry whose study had no default trial is dropped with one line.

No looser than the default (issue 38 item 2, autotune/loop_density.py): a model-ranked entry whose
schedule is not the default is kept only if its main loop issues at least as many v_wmma per issued
instruction as the default's on its bucket problem; a GPU-measured entry (source hip) is exempt.

All or nothing, across ops: every ladder is read, every document built and re-validated with
its op's reader (so an export never produces a file lookup refuses), and every file written to
a temp file in the destination before the first `os.replace`; a failure anywhere before that
removes the temp files and leaves no file of any op written or changed.
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional

import pandas as pd

from . import ladder as ladder_mod
from .study import OPS


def ladder_files(src: str | Path, arch: str) -> list[Path]:
    """`src` is a ladder file, or a results directory holding <arch>/<op>_ladder.parquet."""
    src = Path(src)
    if src.is_file():
        return [src]
    for base in (src / arch, src):
        found = [p for op in OPS() for p in [base / f"{op}_ladder.parquet"] if p.is_file()]
        if found:
            return found
    return []


def _stderr(line: str) -> None:
    print(f"wmma-gen export: {line}", file=sys.stderr, flush=True)


def _figure(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def beats_default(df: pd.DataFrame, arch: str, note: Optional[Callable[[str], None]] = None) -> pd.DataFrame:
    """`df` without the rank-1 rows (of `arch`, validated) that do not beat the op's default
    measured the same way; one `note` line per dropped (or unchecked) row."""
    from wmma_gen.ops.registry import tuning as adapter
    note = note or _stderr
    drop = []
    rows = df[(df["arch"] == arch) & (df["rank"] == 1) & (df["validated"].astype(bool))] if len(df) else df
    for i, r in rows.iterrows():
        ad = adapter(r["op"])
        what = (f"{r['op']} {' '.join(f'{c}={r[c]}' for c in ad.columns)}: best "
                f"{ad.schedule_text(r)} {float(r['tflops']):.2f} {r['unit']} ({r['source']}, study {r['study']})")
        src = r.get("default_source")
        dflt = _figure(r.get("default_tflops"))
        if src is None or (isinstance(src, float) and math.isnan(src)):
            note(f"not compared with the default: {what}; the ladder has no default figure (written by an "
                 "older wmma_gen; `wmma-gen ladder --storage URL` rebuilds it with one)")
        elif src == "failed":
            continue            # the default was pruned or cannot run this problem: anything validated beats it
        elif src != r["source"] or math.isnan(dflt):
            drop.append(i)
            note(f"dropped {what}: no figure of the default schedule measured the same way ({r['source']}) "
                 "in its study (studies created before baselines were enqueued, or domains excluding the default)")
        elif float(r["tflops"]) < dflt:
            drop.append(i)
            note(f"dropped {what}: does not beat the default schedule's {dflt:.2f} {r['unit']} (same study, {src})")
        elif isinstance(r.get("model_flips"), str) and r["model_flips"]:
            drop.append(i)
            note(f"dropped {what}: its model win over the default ({dflt:.2f}) reverses when one of the model's "
                 f"guessed parameters varies ({r['model_flips']}) and no robust schedule or default trial is in its "
                 "ladder rows; a GPU measurement (source hip) settles it")
    return df.drop(index=drop)


def documents(df: pd.DataFrame, arch: str,
              note: Optional[Callable[[str], None]] = None) -> list[tuple[str, dict, object]]:
    """(file name, document, Tuning) of every op in `df` (one ladder: its columns are one op's),
    from the rows that beat the default (beats_default)."""
    from wmma_gen.ops.registry import tuning as adapter
    df = beats_default(df, arch, note)
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


def _gated(docs: list, out, note) -> list:
    """The model-tie rule (autotune/model_tie.py), the loop-density rule (autotune/loop_density.py), then the
    shadow rule (autotune/shadow.py)."""
    from .loop_density import no_looser_than_default
    from .model_tie import no_model_tie
    from .shadow import against_shadowed
    note = note or _stderr
    return against_shadowed(no_looser_than_default(no_model_tie(docs, note), note), out, note)


def export(df: pd.DataFrame, arch: str, out: str | Path, note=None) -> list[Path]:
    """Every op's documents of one ladder, written all or nothing."""
    return write_all(_gated(documents(df, arch, note), out, note), out)


def export_many(dfs, arch: str, out: str | Path, note=None) -> list[Path]:
    """Several ladders (one per op), written all or nothing across them."""
    docs = [d for df in dfs if len(df) for d in documents(df, arch, note)]
    return write_all(_gated(docs, out, note), out)


def export_from(src: str | Path, arch: str, out: str | Path, note=None) -> list[Path]:
    files = ladder_files(src, arch)
    if not files:
        from wmma_gen.errors import ScheduleError
        raise ScheduleError("from", str(src), f"a ladder file or a results directory with {arch}/<op>_ladder.parquet "
                                              "(run `wmma-gen sweep` first)")
    return export_many([ladder_mod.read(f) for f in files], arch, out, note)   # every ladder read before any write
