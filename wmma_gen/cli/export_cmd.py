"""`wmma-gen export`: best validated schedules of a sweep's ladders -> <arch>-<op>-<dtype>.json.

Writes to the user's schedules dir by default (wmma_gen.userdirs.schedules_dir(), which the
lookup reads before the shipped files, so gemm()/attention()/attention_backward() use the
result at once; `wmma-gen schedules list` shows it), or to --out. All or nothing across ops
(autotune/export.py). --storage URL rebuilds the ladders from the study storage alone
(autotune/rebuild.py: PostgreSQL, sqlite or a journal, which must exist: export never creates
one) instead of reading ladder files; --from and --storage are alternatives."""
from __future__ import annotations

import json

from .options import add_json, add_target, emit, existing_storage, ladder_source, writable_dir


def register(sub) -> None:
    p = sub.add_parser("export", help="write the best validated schedule per (op, dtype, shape) to versioned JSON")
    add_target(p, checked=True)
    p.add_argument("--from", dest="src", default=None, type=ladder_source,
                   help="a results directory (reads <arch>/<op>_ladder.parquet) or a ladder .parquet/.csv file "
                        "(default: the sweep's default results dir, $XDG_DATA_HOME/wmma_gen/results)")
    p.add_argument("--storage", default=None, type=existing_storage,
                   help="instead of --from: rebuild the ladders from this study storage alone "
                        "(postgresql://..., sqlite:///FILE.db or a journal file; must exist)")
    p.add_argument("--study-name", default=None, help="with --storage: only this campaign's studies")
    p.add_argument("--out", default=None, type=writable_dir,
                   help="output directory (default: the user's schedules dir, $XDG_DATA_HOME/wmma_gen/schedules "
                        "or ~/.local/share/wmma_gen/schedules, which the lookup reads before the shipped files)")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.out is None:
        from ..userdirs import schedules_dir
        args.out = _checked_dir(str(schedules_dir()), "--out")
    written = from_storage(args) if args.storage else from_ladders(args)
    info = []
    for path in written:
        doc = json.loads(path.read_text())
        info.append({"file": str(path), "op": doc["op"], "dtype": doc["dtype"], "entries": len(doc["entries"]),
                     "sources": sorted({e["source"] for e in doc["entries"]})})
    text = "\n".join(f"wrote {i['file']}: {i['entries']} shape buckets ({'/'.join(i['sources'])})" for i in info)
    source = args.storage and _shown(args.storage) or args.src
    emit(args, info, text or f"no validated schedules for {args.arch} in {source}: nothing written")
    return 0 if written else 1


def _checked_dir(path: str, flag: str) -> str:
    import argparse

    from ..errors import ScheduleError
    try:
        return writable_dir(path)
    except argparse.ArgumentTypeError as e:
        raise ScheduleError(flag, path, f"{e} (pass {flag} DIR)") from None


def from_ladders(args) -> list:
    import argparse

    from autotune.export import export_from

    from ..errors import ScheduleError
    from ..userdirs import results_dir
    if args.study_name is not None:
        raise ScheduleError("--study-name", args.study_name, "only with --storage (a ladder file has no campaigns)")
    if args.src is None:
        try:
            args.src = ladder_source(str(results_dir()))
        except argparse.ArgumentTypeError as e:
            raise ScheduleError("--from", str(results_dir()), f"{e} (run `wmma-gen sweep` first, or pass --from DIR "
                                                              "or --storage URL)") from None
    return export_from(args.src, args.arch, args.out)


def from_storage(args) -> list:
    from autotune.export import export_many
    from autotune.rebuild import ladders

    from ..errors import ScheduleError
    if args.src is not None:
        raise ScheduleError("--from", args.src, "nothing together with --storage: they are alternatives")
    return export_many(ladders(args.storage, arch=args.arch, prefix=args.study_name).values(), args.arch, args.out)


def _shown(url: str) -> str:
    from autotune.storage import shown
    return shown(url)
