"""`wmma-gen sweep`: Optuna search of schedules per op and problem -> ladder.

--op gemm: one study per (dtype, shape); --op attention: one per (dtype, head dim, mask,
sequence length). `--quick` without --op sweeps every sweepable op. An op's sweep flags
(--shapes, --head-dims, --batches, ...) are the SweepAxis rows of its ops/<op>/sweep_axes.py;
their values (else its Tuning's defaults) fill SweepConfig.axes, which its Tuning.items crosses. `--problems FILE` (autotune/problems.py;
written by hand or by wmma_gen.torch.record_problems()) instead tunes one study per listed
problem, on exactly that problem: GEMM layout, batch and epilogue; attention batch, heads, kv
heads, Sq, Sk, mask, window, varlen. Each trial: validate -> compile ->
correctness gate on the very object that is ranked (GPU, or the emulator) -> GPU time
(source=hip) or the model's estimate (source=model). Studies live in an Optuna journal under
results/<arch>/ (or --storage), so rerunning continues them. Writes <results>/<arch>/<op>_ladder.{parquet,csv,png}
(--results; default the user's results dir, $XDG_DATA_HOME/wmma_gen/results: never a checkout's
tracked results/); `wmma-gen export` turns the ladders into the user's schedule files.
"""
from __future__ import annotations

import argparse
import time

from ..errors import ScheduleError
from ..targets import get_target
from .options import (add_json, add_target, csv_list, emit, in_dtype, int_at_least, known_ops, positive_seconds,
                      shape_text, shapes_file, storage_url, writable_dir)

QUICK = {"dtypes": "f16,i8", "shapes": "1024,2048", "trials": 12}          # gemm (help text)
DEFAULTS = {"dtypes": "f16,bf16,i8,i4", "shapes": "1024,2048,4096", "trials": 40}
DEFAULT_OP = "gemm"   # what `sweep` tunes without --op and --quick (--quick: every sweepable op)
# An op's sweep flags (--shapes, --head-dims, --batches, ...) are its SweepAxis declarations
# (the op's spec module's SWEEP_AXES, read by registry.sweep_axes_of): no per-op flag list here.


def register(sub) -> None:
    p = sub.add_parser("sweep", help="tune schedules with Optuna; writes the TFLOP/s ladder under --results")
    p.add_argument("--op", default=None, choices=known_ops(),
                   help="op to tune (default gemm; --quick: gemm, attention, attention_bwd)")
    add_axis_flags(p)
    add_target(p, checked=True)
    p.add_argument("--dtypes", default=None, type=csv_list(in_dtype, "input dtypes"),
                   help=f"comma-separated input dtypes (default {DEFAULTS['dtypes']}; --quick: {QUICK['dtypes']})")
    p.add_argument("--problems", default=None, metavar="FILE",
                   help="YAML/JSON list of problems to tune, one study each (op, dtype; gemm: m, n, k, layout, "
                        "batch, epilogue; attention/attention_bwd: head_dim, batch, heads, kv_heads, seq_q, seq_k, "
                        "causal, window, varlen; another op: its directive's and problem's fields); written by "
                        "wmma_gen.torch.record_problems(); replaces --dtypes "
                        "and every op's sweep-axis flags (--shapes, --head-dims, --seqs, --causal, ...)")
    p.add_argument("--trials", type=int_at_least(1), default=None,
                   help=f"trials per study, counted across reruns (default {DEFAULTS['trials']}; --quick: {QUICK['trials']})")
    p.add_argument("--timeout", type=positive_seconds, default=None, help="seconds for the whole sweep")
    p.add_argument("--device", default="auto", choices=["auto", "hip", "emu"],
                   help="gate (and, on hip, timing) device; auto = a visible GPU, else the emulator + model")
    p.add_argument("--storage", default="", type=storage_url,
                   help="Optuna storage: a journal file path or an RDB URL (postgresql://..., sqlite:///...); "
                        "default <results>/<arch>/optuna.journal")
    p.add_argument("--study-name", default="", type=study_prefix, help="prefix of every study name (separate campaigns)")
    p.add_argument("--workers", type=int_at_least(1, 256), default=1,
                   help="worker processes (each pinned to one GPU when several)")
    p.add_argument("--compile-workers", type=int_at_least(0, 256), default=0,
                   help="compile the next N candidates in N worker processes while this one gates and times "
                        "(per sweep process); 0 = compile in-process, one trial at a time (default)")
    p.add_argument("--compile-timeout", type=positive_seconds, default=600.0,
                   help="with --compile-workers: seconds one compile may take before its trial is pruned "
                        "and its worker replaced (default 600)")
    p.add_argument("--seed", type=int_at_least(0, 2**31 - 1), default=0, help="TPE sampler seed")
    p.add_argument("--results", default=None, type=writable_dir,
                   help="results directory (default: the user's, $XDG_DATA_HOME/wmma_gen/results or "
                        "~/.local/share/wmma_gen/results)")
    p.add_argument("--top-k", type=int_at_least(1), default=3, help="ladder rows per study")
    p.add_argument("--quick", action="store_true", help=f"small sweep (~1 min without a GPU): dtypes {QUICK['dtypes']}, "
                                                        f"shapes {QUICK['shapes']}, {QUICK['trials']} trials each")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json(p)
    p.set_defaults(func=run)


def dest(flag: str) -> str:
    """The args attribute of a flag (--head-dims -> head_dims)."""
    return flag[2:].replace("-", "_")


def axis_flags(ax) -> tuple[str, ...]:
    """The flags a SweepAxis gives `wmma-gen sweep`: its own, then its file flag if any."""
    return (ax.flag,) + ((ax.file_flag,) if ax.file_flag else ())


def add_axis_flags(p) -> None:
    """One flag per sweep axis any registered op declares (ops/<op>/sweep_axes.py), in registry
    order; ops sharing an axis (attention, attention_bwd, paged_attention: --head-dims) share the flag."""
    from ..ops import registry
    seen: set = set()
    for op in registry.NAMES:
        for ax in registry.sweep_axes_of(op):
            if ax.flag in seen:
                continue
            seen.add(ax.flag)
            item = axis_value(ax)
            p.add_argument(ax.flag, default=None, type=csv_list(item, ax.what), help=ax.help or ax.what)
            if ax.file_flag:
                p.add_argument(ax.file_flag, default=None, type=shapes_file if ax.value == "shape" else
                               items_file(item, ax.what), help=f"file with one of the {ax.what} per line (# comments)")


def axis_value(ax):
    """The reader of one item of a sweep axis: a shared CLI reader named by the axis, or the op's
    callable (its ValueError becomes the usage error naming the flag)."""
    readers = {"int": int_at_least(1), "seq": int_at_least(1, 1 << 20), "shape": shape_text, "head_dim": head_dim,
               "on_off": on_off}
    if isinstance(ax.value, str):
        if ax.value not in readers:
            raise ValueError(f"SweepAxis {ax.name}: value={ax.value!r} is not allowed: a callable or one of "
                             f"{', '.join(readers)}")
        return readers[ax.value]

    def read(text: str):
        try:
            return ax.value(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return read


def items_file(item, what: str):
    """Type: a readable file with one item per line (# comments), at least one."""
    def parse(text: str) -> tuple:
        from pathlib import Path
        try:
            lines = Path(text).read_text().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise argparse.ArgumentTypeError(f"{text!r} cannot be read ({getattr(e, 'strerror', None) or e})") from None
        out = []
        for i, line in enumerate(lines, start=1):
            body = line.split("#")[0].strip()
            if body:
                try:
                    out.append(item(body))
                except argparse.ArgumentTypeError as e:
                    raise argparse.ArgumentTypeError(f"{text} line {i}: {e}") from None
        if not out:
            raise argparse.ArgumentTypeError(f"{text!r} holds none of the {what} (one per line)")
        return tuple(dict.fromkeys(out))
    return parse


def axes_from(args, op: str, base: dict) -> dict:
    """SweepConfig.axes of `op`: per declared axis the values of its file flag then its flag
    (duplicates dropped), else the op's defaults (`base`: its Tuning's defaults or quick table)."""
    from ..ops import registry
    axes = {}
    for ax in registry.sweep_axes_of(op):
        given = tuple(v for f in reversed(axis_flags(ax)) for v in (getattr(args, dest(f), None) or ()))
        if given:
            axes[ax.name] = tuple(dict.fromkeys(given))
        elif ax.name in base:
            axes[ax.name] = tuple(base[ax.name])
    return axes


def head_dim(text: str) -> int:
    from ..attention_common.directive import HEAD_DIMS    # light module: no MLIR import
    if not text.isdigit() or int(text) not in HEAD_DIMS:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: a multiple of 16 from 16 to 512 "
                                         f"({', '.join(map(str, HEAD_DIMS))})")
    return int(text)


def on_off(text: str) -> bool:
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: on or off")
    return text == "on"


def study_prefix(text: str) -> str:
    if text != text.strip() or any(not c.isprintable() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: printable characters without "
                                         "leading or trailing spaces")
    return text


def config_from(args, op: str = "gemm", problems: tuple = ()):
    """The SweepConfig of `op` from the parsed flags: its sweep axes from the op's flags
    (ops/<op>/sweep_axes.py), else its Tuning's defaults (ops/<op>/tuning.py); with `problems`
    (of this op, from --problems) exactly those studies."""
    from autotune.study import SweepConfig

    from ..ops.registry import tuning
    from ..userdirs import results_dir
    ad = tuning(op)
    base = ad.quick if args.quick else ad.defaults
    extra = {"problems": problems} if problems else {"axes": axes_from(args, op, base)}
    dtypes = tuple(dict.fromkeys(p.dtype for p in problems)) or args.dtypes or base["dtypes"]
    allowed = tuple(dt for dt in ad.dtypes if dt in get_target(args.arch).dtypes)
    for dt in dtypes:
        if dt not in allowed:
            raise ScheduleError("--dtypes", dt, f"{op} on {args.arch} takes {', '.join(allowed)}")
    return SweepConfig(arch=args.arch, op=op, dtypes=dtypes, **extra,
                       trials=base["trials"] if args.trials is None else args.trials, timeout=args.timeout,
                       device=args.device, storage=args.storage, study_name=args.study_name, workers=args.workers,
                       seed=args.seed, results=args.results or str(results_dir()), top_k=args.top_k,
                       compile_workers=args.compile_workers, compile_timeout=args.compile_timeout,
                       progress=not (args.no_progress or args.json))


def summarize(result, df) -> list[dict]:
    from optuna.trial import TrialState

    from autotune.ladder import LEGACY_OP

    from ..ops.registry import tuning
    rows = []
    for st in result.studies:
        ua, trials = st.user_attrs, st.get_trials(deepcopy=False)
        ad = tuning(ua.get("op", LEGACY_OP))
        d = ua["directive"]
        count = {s.name.lower(): sum(t.state == s for t in trials)
                 for s in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)}
        best = df[(df["study"] == st.study_name) & (df["rank"] == 1)] if len(df) else df
        row = {"study": st.study_name, "dtype": d["dtype"], "shape": ad.label(ua), **count,
               "best": None, "unit": ua["unit"], "fraction_of_peak": None, "source": None, "schedule": None,
               "est_low": None, "est_high": None}
        if len(best):
            b = best.iloc[0]
            row.update(best=round(float(b["tflops"]), 2), fraction_of_peak=round(float(b["fraction_of_peak"]), 3),
                       source=b["source"], trial=int(b["trial"]), schedule=ad.schedule_text(b))
            band = [b.get(c) for c in ("est_low", "est_high")]   # the calibration band of a model row (ladder.py)
            if all(v is not None and v == v for v in band):
                row.update(est_low=round(float(band[0]), 2), est_high=round(float(band[1]), 2))
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    w = max([20] + [len(r["shape"]) for r in rows])
    head = (f"{'dtype':5} {'problem':>{w}} {'done':>4} {'pruned':>6} {'fail':>4} {'best':>9} {'band (model)':>15} "
            f"{'unit':7} {'%peak':>6} {'source':6}  schedule")
    lines = [head, "-" * len(head)]
    for r in rows:
        best = f"{r['best']:9.2f}" if r["best"] is not None else f"{'-':>9}"
        frac = f"{100 * r['fraction_of_peak']:5.1f}%" if r["fraction_of_peak"] is not None else f"{'-':>6}"
        band = (f"{r['est_low']:.1f}-{r['est_high']:.1f}" if r.get("est_low") is not None else "-")
        lines.append(f"{r['dtype']:5} {r['shape']:>{w}} {r['complete']:>4} {r['pruned']:>6} {r['fail']:>4} {best} "
                     f"{band:>15} {r['unit']:7} {frac} {r['source'] or '-':6}  {r['schedule'] or 'no valid schedule'}")
    return "\n".join(lines)


def check_op_flags(args, ops: tuple) -> None:
    """Refuse an op-specific flag that none of the ops swept takes (e.g. --head-dims for gemm,
    --shapes for attention), naming the ops and the flags each takes."""
    from ..ops import registry
    takes = {op: [f for ax in registry.sweep_axes_of(op) for f in axis_flags(ax)] for op in ops}
    bad = [f for f in all_axis_flags() if getattr(args, dest(f), None) is not None
           and not any(f in t for t in takes.values())]
    if bad:
        what = "; ".join(f"--op {op} takes {', '.join(t) or 'none of them'}" for op, t in takes.items())
        e = ScheduleError("--op", "/".join(ops), what)
        e.args = (f"{', '.join(bad)} {'does' if len(bad) == 1 else 'do'} not apply to "
                  f"{' or '.join('--op ' + op for op in ops)}: {what}",)
        raise e


def all_axis_flags() -> tuple[str, ...]:
    """Every sweep-axis flag of the registered ops (what add_axis_flags registered)."""
    from ..ops import registry
    return tuple(dict.fromkeys(f for op in registry.NAMES for ax in registry.sweep_axes_of(op)
                               for f in axis_flags(ax)))


def run(args) -> int:
    """Sweep each op asked for (--op, or gemm then attention with --quick); exit 0 when every
    op got a ladder, 1 when one had no validated schedule (its ladder is not written). Every
    op's flags and config are checked before the first study starts."""
    if getattr(args, "problems", None):
        configs = problem_configs(args)
    else:
        from ..ops.registry import tunable
        ops = (args.op,) if args.op else (tunable() if args.quick else (DEFAULT_OP,))
        check_op_flags(args, ops)
        configs = [config_from(args, op) for op in ops]
    if args.op is None and args.quick and not args.json and not getattr(args, "problems", None):
        print(f"--quick sweeps {' and '.join(ops)} (pass --op to choose one)")
    status = 0
    for cfg in configs:
        status = max(status, _run_op(args, cfg))
    return status


def problem_configs(args) -> list:
    """One SweepConfig per op of the --problems file (file order; --op keeps one op). The
    flags that choose problems are refused beside it, naming the flag."""
    from autotune.problems import load
    given = [f for f in ("--dtypes",) + all_axis_flags() if getattr(args, dest(f), None) is not None]
    if given:
        raise ScheduleError(given[0], getattr(args, given[0][2:].replace("-", "_")),
                            "not given with --problems: the problems file names every problem's op, dtype and sizes")
    problems = load(args.problems, args.arch)
    ops = tuple(dict.fromkeys(p.op for p in problems))
    if args.op is not None:
        if args.op not in ops:
            raise ScheduleError("--op", args.op, f"an op of the problems in {args.problems}: {', '.join(ops)}")
        ops = (args.op,)
    return [config_from(args, op, tuple(p for p in problems if p.op == op)) for op in ops]


def _run_op(args, cfg) -> int:
    from autotune import ladder
    from autotune.study import run_sweep
    op = cfg.op
    t0 = time.time()
    result = run_sweep(cfg)
    df = ladder.build(result.studies, top_k=cfg.top_k, op=op)
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
            f"next: wmma-gen export --arch {cfg.arch}{_from(cfg.results)}" if paths else
            "no study has a validated schedule (see the pruned/failed counts; --timeout too short?): "
            "no ladder written")
    emit(args, info, f"{cfg.op}:\n{table(rows)}{note}\n"
                     f"sweep of {len(rows)} studies took {info['seconds']} s; storage {cfg.storage_url}\n"
                     f"reconciled: {result.recovered} stale RUNNING trials (owner gone or heartbeat expired) "
                     f"failed and re-queued\n{tail}")
    return 0 if paths else 1


def _from(results: str) -> str:
    """The --from the export needs: none when the ladders are in its default results dir."""
    import os

    from ..userdirs import results_dir
    return "" if os.path.realpath(results) == os.path.realpath(results_dir()) else f" --from {results}"
