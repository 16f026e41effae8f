"""`wmma-gen export`: best validated schedules of a sweep's ladder -> schedules/*.json.

--storage URL rebuilds the ladders from the study storage alone (autotune/rebuild.py: a
PostgreSQL database shared by several hosts, sqlite, or a journal) instead of reading ladder
files; --from and --storage are alternatives."""
from __future__ import annotations

import json

from .options import add_json, add_target, emit, ladder_source, storage_url, writable_dir


def register(sub) -> None:
    p = sub.add_parser("export", help="write the best validated schedule per (op, dtype, shape) to versioned JSON")
    add_target(p, checked=True)
    p.add_argument("--from", dest="src", default=None, type=ladder_source,
                   help="a results directory (reads <arch>/<op>_ladder.parquet) or a ladder .parquet/.csv file "
                        "(default ./results)")
    p.add_argument("--storage", default=None, type=storage_url,
                   help="instead of --from: rebuild the ladders from this study storage alone "
                        "(postgresql://..., sqlite:///FILE.db or a journal file)")
    p.add_argument("--study-name", default=None, help="with --storage: only this campaign's studies")
    p.add_argument("--out", default="schedules", type=writable_dir, help="output directory (default ./schedules)")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    written = from_storage(args) if args.storage else from_ladders(args)
    info = []
    for path in written:
        doc = json.loads(path.read_text())
        info.append({"file": str(path), "dtype": doc["dtype"], "entries": len(doc["entries"]),
                     "sources": sorted({e["source"] for e in doc["entries"]})})
    text = "\n".join(f"wrote {i['file']}: {i['entries']} shape buckets ({'/'.join(i['sources'])})" for i in info)
    source = args.storage and _shown(args.storage) or args.src
    emit(args, info, text or f"no validated schedules for {args.arch} in {source}: nothing written")
    return 0 if written else 1


def from_ladders(args) -> list:
    import argparse

    from autotune.export import export_from

    from ..errors import ScheduleError
    if args.study_name is not None:
        raise ScheduleError("--study-name", args.study_name, "only with --storage (a ladder file has no campaigns)")
    if args.src is None:
        try:
            args.src = ladder_source("results")
        except argparse.ArgumentTypeError as e:
            raise ScheduleError("--from", "results", f"{e} (or pass --storage URL)") from None
    return export_from(args.src, args.arch, args.out)


def from_storage(args) -> list:
    from autotune.export import export
    from autotune.rebuild import ladders

    from ..errors import ScheduleError
    if args.src is not None:
        raise ScheduleError("--from", args.src, "nothing together with --storage: they are alternatives")
    written = []
    for df in ladders(args.storage, arch=args.arch, prefix=args.study_name).values():
        if len(df):
            written += export(df, args.arch, args.out)
    return written


def _shown(url: str) -> str:
    from autotune.storage import shown
    return shown(url)
