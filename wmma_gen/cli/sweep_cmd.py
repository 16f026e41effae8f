"""`wmma-gen sweep`: Optuna search of GEMM schedules per (arch, dtype, shape) -> ladder.

Each trial: validate -> compile -> correctness gate (GPU, or the emulator) -> GPU time
(source=hip) or the model's estimate (source=model). Studies live in an Optuna journal under
results/<arch>/ (or --storage), so rerunning continues them. Writes
results/<arch>/<op>_ladder.{parquet,csv,png}; `wmma-gen export` turns the ladder into
schedules/*.json.
"""
from __future__ import annotations

import argparse
import time

from ..errors import ScheduleError
from ..targets import get_target
from .options import (add_json, add_target, csv_list, emit, in_dtype, int_at_least, known_ops, positive_seconds,
                      shape_text, shapes_file, storage_url, writable_dir)

QUICK = {"dtypes": "f16,i8", "shapes": "1024,2048", "trials": 12}
DEFAULTS = {"dtypes": "f16,bf16,i8,i4", "shapes": "1024,2048,4096", "trials": 40}


def register(sub) -> None:
    p = sub.add_parser("sweep", help="tune GEMM schedules with Optuna; writes the TFLOP/s ladder under --results")
    p.add_argument("--op", default="gemm", choices=known_ops(), help="directive to tune")
    add_target(p, checked=True)
    p.add_argument("--dtypes", default=None, type=csv_list(in_dtype, "input dtypes"),
                   help=f"comma-separated input dtypes (default {DEFAULTS['dtypes']}; --quick: {QUICK['dtypes']})")
    p.add_argument("--shapes", default=None, type=csv_list(shape_text, "shapes"),
                   help="comma-separated sizes N (NxNxN) or MxNxK "
                        f"(default {DEFAULTS['shapes']}; --quick: {QUICK['shapes']})")
    p.add_argument("--shapes-file", default=None, type=shapes_file,
                   help="file with one shape per line (N or MxNxK; # comments)")
    p.add_argument("--trials", type=int_at_least(1), default=None,
                   help=f"trials per study, counted across reruns (default {DEFAULTS['trials']}; --quick: {QUICK['trials']})")
    p.add_argument("--timeout", type=positive_seconds, default=None, help="seconds for the whole sweep")
    p.add_argument("--device", default="auto", choices=["auto", "hip", "emu"],
                   help="gate (and, on hip, timing) device; auto = a visible GPU, else the emulator + model")
    p.add_argument("--storage", default="", type=storage_url,
                   help="Optuna storage: a journal file path or an RDB URL (postgresql://..., sqlite:///...); "
                        "default results/<arch>/optuna.journal")
    p.add_argument("--study-name", default="", type=study_prefix, help="prefix of every study name (separate campaigns)")
    p.add_argument("--workers", type=int_at_least(1, 256), default=1,
                   help="worker processes (each pinned to one GPU when several)")
    p.add_argument("--seed", type=int_at_least(0, 2**31 - 1), default=0, help="TPE sampler seed")
    p.add_argument("--results", default="results", type=writable_dir, help="results directory (default ./results)")
    p.add_argument("--top-k", type=int_at_least(1), default=3, help="ladder rows per study")
    p.add_argument("--quick", action="store_true", help=f"small sweep (~1 min without a GPU): dtypes {QUICK['dtypes']}, "
                                                        f"shapes {QUICK['shapes']}, {QUICK['trials']} trials each")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json(p)
    p.set_defaults(func=run)


def study_prefix(text: str) -> str:
    if text != text.strip() or any(not c.isprintable() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: printable characters without "
                                         "leading or trailing spaces")
    return text


def _shapes(args) -> tuple[tuple[int, int, int], ...]:
    """--shapes-file and --shapes (both already parsed and checked), else the defaults."""
    shapes = tuple(args.shapes_file or ()) + tuple(args.shapes or ())
    if not shapes:
        shapes = csv_list(shape_text, "shapes")((QUICK if args.quick else DEFAULTS)["shapes"])
    return tuple(dict.fromkeys(shapes))


def config_from(args):
    from autotune.study import SweepConfig
    base = QUICK if args.quick else DEFAULTS
    t = get_target(args.arch)
    dtypes = args.dtypes or tuple(base["dtypes"].split(","))
    for dt in dtypes:
        if dt not in t.dtypes:
            raise ScheduleError("--dtypes", dt, f"{args.arch} has WMMA for {', '.join(t.dtypes)}")
    return SweepConfig(arch=args.arch, op=args.op, dtypes=dtypes, shapes=_shapes(args),
                       trials=base["trials"] if args.trials is None else args.trials, timeout=args.timeout,
                       device=args.device, storage=args.storage, study_name=args.study_name, workers=args.workers,
                       seed=args.seed, results=args.results, top_k=args.top_k,
                       progress=not (args.no_progress or args.json))


def summarize(result, df) -> list[dict]:
    from optuna.trial import TrialState
    rows = []
    for st in result.studies:
        ua, trials = st.user_attrs, st.get_trials(deepcopy=False)
        d = ua["directive"]
        count = {s.name.lower(): sum(t.state == s for t in trials)
                 for s in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)}
        best = df[(df["study"] == st.study_name) & (df["rank"] == 1)] if len(df) else df
        row = {"study": st.study_name, "dtype": d["dtype"], "shape": f"{d['m']}x{d['n']}x{d['k']}", **count,
               "best": None, "unit": ua["unit"], "fraction_of_peak": None, "source": None, "schedule": None}
        if len(best):
            b = best.iloc[0]
            row.update(best=round(float(b["tflops"]), 2), fraction_of_peak=round(float(b["fraction_of_peak"]), 3),
                       source=b["source"], trial=int(b["trial"]),
                       schedule=f"{b['block_m']}x{b['block_n']}x{b['block_k']} w{b['waves_m']}x{b['waves_n']} "
                                f"lds={b['lds']} ld{b['load_bits']} {b['raster']} sk{b['split_k']}")
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    head = f"{'dtype':5} {'shape':>15} {'done':>4} {'pruned':>6} {'fail':>4} {'best':>9} {'unit':7} {'%peak':>6} {'source':6}  schedule"
    lines = [head, "-" * len(head)]
    for r in rows:
        best = f"{r['best']:9.2f}" if r["best"] is not None else f"{'-':>9}"
        frac = f"{100 * r['fraction_of_peak']:5.1f}%" if r["fraction_of_peak"] is not None else f"{'-':>6}"
        lines.append(f"{r['dtype']:5} {r['shape']:>15} {r['complete']:>4} {r['pruned']:>6} {r['fail']:>4} {best} "
                     f"{r['unit']:7} {frac} {r['source'] or '-':6}  {r['schedule'] or 'no valid schedule'}")
    return "\n".join(lines)


def run(args) -> int:
    """Exit 0 with a ladder; 1 (and no ladder written) when no study has a validated schedule."""
    from autotune import ladder
    from autotune.study import run_sweep
    cfg = config_from(args)
    t0 = time.time()
    result = run_sweep(cfg)
    df = ladder.build(result.studies, top_k=cfg.top_k)
    t = get_target(cfg.arch)
    paths = (ladder.write(df, cfg.results, cfg.arch, cfg.op, {dt: t.peak_tflops(dt) for dt in cfg.dtypes})
             if len(df) else {})
    rows = summarize(result, df)
    info = {"arch": cfg.arch, "op": cfg.op, "seconds": round(time.time() - t0, 1), "storage": cfg.storage_url,
            "recovered_interrupted_trials": result.recovered, "studies": rows,
            "ladder": {k: str(v) for k, v in paths.items()}}
    sources = sorted({r["source"] for r in rows if r["source"]})
    note = ("\nnumbers are model estimates (no GPU): not measurements" if sources == ["model"] else "")
    tail = (f"ladder: {paths['parquet']}, {paths['csv']}, {paths['png']}\n"
            f"next: wmma-gen export --arch {cfg.arch} --from {cfg.results}" if paths else
            "no study has a validated schedule (see the pruned/failed counts; --timeout too short?): "
            "no ladder written")
    emit(args, info, f"{table(rows)}{note}\n"
                     f"sweep of {len(rows)} studies took {info['seconds']} s; storage {cfg.storage_url}\n"
                     f"reconciled: {result.recovered} stale RUNNING trials (owner gone or heartbeat expired) "
                     f"failed and re-queued\n{tail}")
    return 0 if paths else 1
