"""`wmma-gen export`: best validated schedules of a sweep's ladder -> schedules/*.json."""
from __future__ import annotations

import json

from .options import add_json, add_target, emit, ladder_source, writable_dir


def register(sub) -> None:
    p = sub.add_parser("export", help="write the best validated schedule per (op, dtype, shape) to versioned JSON")
    add_target(p, checked=True)
    p.add_argument("--from", dest="src", default="results", type=ladder_source,
                   help="a results directory (reads <arch>/<op>_ladder.parquet) or a ladder .parquet/.csv file")
    p.add_argument("--out", default="schedules", type=writable_dir, help="output directory (default ./schedules)")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from autotune.export import export_from
    written = export_from(args.src, args.arch, args.out)
    info = []
    for path in written:
        doc = json.loads(path.read_text())
        info.append({"file": str(path), "dtype": doc["dtype"], "entries": len(doc["entries"]),
                     "sources": sorted({e["source"] for e in doc["entries"]})})
    text = "\n".join(f"wrote {i['file']}: {i['entries']} shape buckets ({'/'.join(i['sources'])})" for i in info)
    emit(args, info, text or f"no validated schedules for {args.arch} in {args.src}: nothing written")
    return 0 if written else 1
