"""`wmma-gen ladder`: the TFLOP/s ladders rebuilt from a study storage alone (issue #16).

Reads every wmma_gen study in the storage (a PostgreSQL URL, sqlite:///..., or a journal file),
optionally only one arch, op or campaign (--study-name), and writes
<results>/<arch>/<op>_ladder.{parquet,csv,png} exactly as `wmma-gen sweep` would -- from any
host, while workers are still running or after they are gone.
"""
from __future__ import annotations

from .options import add_json, arch_name, emit, existing_storage, int_at_least, known_ops, writable_dir


def register(sub) -> None:
    p = sub.add_parser("ladder", help="rebuild the ladders (parquet, csv, png) from a study storage alone")
    p.add_argument("--storage", default="", type=existing_storage,
                   help="the sweeps' storage: postgresql://..., sqlite:///FILE.db or a journal file, which must "
                        "exist (default <results>/<arch>/optuna.journal, which needs --arch)")
    p.add_argument("--arch", default=None, type=arch_name, help="only this target's studies")
    p.add_argument("--op", default=None, choices=known_ops(), help="only this op's studies")
    p.add_argument("--study-name", default=None, help="only the studies of this campaign (sweep --study-name)")
    p.add_argument("--top-k", type=int_at_least(1), default=3, help="ladder rows per study (default 3)")
    p.add_argument("--results", default=None, type=writable_dir,
                   help="where the ladders go (default: the sweep's, $XDG_DATA_HOME/wmma_gen/results)")
    add_json(p)
    p.set_defaults(func=run)


def results_of(args) -> str:
    """--results, else the user's results dir (wmma_gen.userdirs; the sweep's default)."""
    if not getattr(args, "results", None):
        from ..userdirs import results_dir
        args.results = str(results_dir())
    return args.results


def default_storage(args) -> str:
    from ..errors import ScheduleError
    if args.storage:
        return args.storage
    results_of(args)
    if not args.arch:
        raise ScheduleError("--storage", "", "a storage URL or journal path, or --arch ARCH for the default "
                                             f"{args.results}/ARCH/optuna.journal")
    from pathlib import Path
    journal = Path(args.results) / args.arch / "optuna.journal"
    if not journal.is_file():
        raise ScheduleError("--storage", str(journal), "an existing storage: no sweep wrote this default journal; "
                                                       "pass --storage")
    return str(journal)


def run(args) -> int:
    from autotune import ladder
    from autotune.rebuild import studies
    from autotune.storage import shown

    from ..targets import get_target
    url = default_storage(args)
    results_of(args)
    found = studies(url, args.arch, args.op, args.study_name)
    info, lines = [], []
    for (arch, op), group in found.items():
        df = ladder.build(group, top_k=args.top_k, op=op)
        t = get_target(arch)
        paths = (ladder.write(df, args.results, arch, op, {dt: t.peak_tflops(dt) for dt in sorted(set(df["dtype"]))})
                 if len(df) else {})
        best = df[df["rank"] == 1] if len(df) else df
        info.append({"arch": arch, "op": op, "studies": len(group), "rows": len(df),
                     "ladder": {k: str(v) for k, v in paths.items()},
                     "best": [{"study": r["study"], "trial": int(r["trial"]), "tflops": round(float(r["tflops"]), 2),
                               "unit": r["unit"], "source": r["source"]} for _, r in best.iterrows()]})
        where = (f"-> {paths['parquet'].with_suffix('')}.{{parquet,csv,png}}" if paths
                 else "(no validated trial: not written)")
        lines.append(f"{arch} {op}: {len(df)} rows from {len(group)} studies {where}")
        lines += [f"  {r['study']:48} best {float(r['tflops']):9.2f} {r['unit']:7} "
                  f"({r['source']}, trial {int(r['trial'])})" for _, r in best.iterrows()]
    want = ", ".join(f"{k} {v}" for k, v in (("arch", args.arch), ("op", args.op), ("campaign", args.study_name)) if v)
    emit(args, info, "\n".join(lines) if lines else
         f"no wmma_gen studies in {shown(url)}{' for ' + want if want else ''}: nothing written")
    return 0 if any(i["rows"] for i in info) else 1
