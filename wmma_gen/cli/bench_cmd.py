"""`wmma-gen bench --vs torch`: PyTorch's own op beside wmma_gen's tuned schedules, on a GPU.

At the problems of a sweep's ladder (--from: a results dir or a ladder file; default the
sweep's results dir) it times the op's OpSpec.torch_baseline (gemm: torch.matmul; attention:
torch's scaled_dot_product_attention) on the GPU with the protocol of wmma_gen/tuner/timing.py -- WARMUP launches discarded,
the median of REPEATS, each between a pair of GPU events (torch.cuda.Event: hipEvents on
ROCm) -- and prints TFLOP/s side by side with the ladder's rank-1 figure and its source (hip =
timed, model = estimate: a ratio against a model row is not a measured speed-up). FLOPs use
the registry's convention for both (attention: 4*D per visible (query, key) pair). Writes
<results>/<arch>/<op>_vs_torch.png: the ladder plot with torch's points (autotune/plot.py).

Without a GPU (or without a ROCm build of torch) there is nothing to time: one line, exit 2.
"""
from __future__ import annotations

import statistics

from .options import add_json, emit, ladder_source

WARMUP, REPEATS = 3, 10          # wmma_gen/tuner/timing.py's protocol


def register(sub) -> None:
    from ..ops.registry import NAMES
    p = sub.add_parser("bench", help="time PyTorch's own op (torch.matmul / SDPA) at a ladder's problems on a GPU")
    p.add_argument("--vs", required=True, choices=["torch"], help="the baseline to time (torch)")
    p.add_argument("--op", default="gemm", choices=list(NAMES),
                   help="whose ladder (default gemm); the op's spec must name a torch baseline")
    p.add_argument("--from", dest="src", default=None, type=ladder_source,
                   help="a results dir (<arch>/<op>_ladder.parquet) or a ladder file "
                        "(default: the sweep's results dir)")
    add_json(p)
    p.set_defaults(func=run)


def gpu_torch():
    """(torch, arch) of the first ROCm GPU torch sees, or (None, why not)."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed (pip install torch from a ROCm index)"
    if not getattr(torch.version, "hip", None):
        return None, f"this torch ({torch.__version__}) is not a ROCm build"
    if not torch.cuda.is_available():
        return None, "no GPU visible to torch (torch.cuda.is_available() is False)"
    return torch, torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]


def median_seconds(torch, fn) -> float:
    times = []
    for i in range(WARMUP + REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if i >= WARMUP:
            times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def torch_call(torch, op: str, r):
    """(callable, FLOPs, label) of torch's op on the ladder row's problem (the op's
    OpSpec.torch_baseline), or None (no torch op for this row)."""
    from ..ops import registry
    return registry.get(op).torch_baseline(torch, r)


def with_baseline() -> list[str]:
    """Ops whose OpSpec names a torch baseline (loads every spec: called on use, not for --help)."""
    from ..ops import registry
    return [n for n in registry.names() if registry.get(n).torch_baseline is not None]


def run(args) -> int:
    import sys
    if args.op not in with_baseline():
        print(f"wmma-gen bench: --op {args.op} is not allowed: one of {', '.join(with_baseline())} "
              f"(ops whose spec names a torch baseline)", file=sys.stderr)
        return 2
    torch, arch = gpu_torch()
    if torch is None:
        print(f"wmma-gen bench: --vs torch needs a GPU: {arch}; nothing was timed", file=sys.stderr)
        return 2
    from autotune import ladder
    from autotune.export import ladder_files
    from ..ops.registry import tuning as adapter
    from autotune.plot import plot

    from ..targets import get_target
    from ..userdirs import results_dir
    src = args.src or str(results_dir())
    files = [f for f in ladder_files(src, arch) if f.stem == f"{args.op}_ladder"]
    if not files:
        print(f"wmma-gen bench: no {args.op} ladder for {arch} in {src} (run `wmma-gen sweep --op {args.op}` first)",
              file=sys.stderr)
        return 2
    df = ladder.read(files[0])
    ad_size = adapter(args.op).size
    rows, base = [], {}
    for _, r in df[(df["rank"] == 1) & (df["arch"] == arch)].iterrows():
        call = torch_call(torch, args.op, r)
        if call is None:
            rows.append({"dtype": r["dtype"], "size": ad_size(r), "torch": None, "why": "no torch op for this dtype"})
            continue
        fn, flops, name = call
        tflops = flops / median_seconds(torch, fn) / 1e12
        rows.append({"dtype": r["dtype"], "size": ad_size(r), "wmma_gen": float(r["tflops"]), "source": r["source"],
                     "torch": tflops, "torch_source": "hip", "ratio": float(r["tflops"]) / tflops})
        base.setdefault(str(r["dtype"]), []).append((ad_size(r), tflops, f"{name} (hip)"))
    t = get_target(arch)
    png = files[0].with_name(f"{args.op}_vs_torch.png")
    plot(df, png, arch, args.op, {dt: t.peak_tflops(dt) for dt in sorted(set(df["dtype"]))}, baselines=base)
    lines = [f"{x['dtype']:5} {x['size']:8.0f}  wmma_gen {x['wmma_gen']:7.1f} ({x['source']})  torch {x['torch']:7.1f} "
             f"(hip)  ratio {x['ratio']:.2f}" if x.get("torch") else f"{x['dtype']:5} {x['size']:8.0f}  {x['why']}"
             for x in rows]
    emit(args, {"arch": arch, "op": args.op, "rows": rows, "plot": str(png)}, "\n".join(lines + [f"plot: {png}"]))
    return 0
