"""Compile pool: sweep trials per second compiling in-process vs in a pool, side by side.

    python bench/sweep_pool.py [--trials 12] [--shapes 256,512] [--pools 0,1,2] [--repeats 1] [--op gemm]

Each row is one fresh process (its own empty kernel cache and results directory, so no row
reuses another's compiles) running the same small sweep -- gemm f16 on gfx1100, the
emulator gate and model timing (source=model), seed 0 -- with `compile_workers` 0
(in-process, one trial at a time) or N (autotune/pipeline.py: the next N candidates compile
in worker processes while this one gates and models). trials/s is the counted trials over the
sweep's wall time including the pool's start-up; "compile s/trial" is the compile time per
trial wherever it ran; "waited s/trial" is how long the sweep waited for a pooled compile;
"same as seq" counts trials whose schedule and value equal the sequential row's trial of the
same number (enqueued baselines and start-up trials are proposed identically; later TPE
proposals see the trials compiling ahead as running). Host wall time on a shared machine:
compare the rows of one run. With --repeats R the modes run interleaved R times (0,1,2,0,1,2,
...); each row then shows the median run (by trials/s) and "runs" lists every run's trials/s.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))   # run from a clone


def one(pool: int, trials: int, shapes: list[int], op: str) -> dict:
    from autotune.runner import counted
    from autotune.study import SweepConfig, run_sweep
    work = Path(tempfile.mkdtemp(prefix="wmma_pool_bench_"))
    os.environ["WMMA_GEN_CACHE_DIR"] = str(work / "cache")
    cfg = SweepConfig(arch="gfx1100", op=op, dtypes=("f16",), shapes=tuple((n, n, n) for n in shapes), trials=trials,
                      device="emu", results=str(work / "results"), progress=False, compile_workers=pool, seed=0)
    t0 = time.perf_counter()
    res = run_sweep(cfg)
    wall = time.perf_counter() - t0
    rows = []
    for st in res.studies:
        for t in st.get_trials():
            if counted(t):
                ua = t.user_attrs
                rows.append({"study": st.study_name, "number": t.number, "state": t.state.name, "value": t.value,
                             "schedule": ua.get("schedule_key"),
                             "compile": ua.get("compile_worker_seconds", ua.get("compile_seconds", 0.0)) or 0.0,
                             "waited": ua.get("compile_wait_seconds", 0.0)})
    return {"pool": pool, "wall": wall, "trials": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=12, help="trials per study (default 12)")
    ap.add_argument("--shapes", default="256,512", help="square GEMM sizes, one study each (default 256,512)")
    ap.add_argument("--pools", default="0,1,2", help="compile_workers values to compare (default 0,1,2)")
    ap.add_argument("--op", default="gemm", help="op (gemm; shapes apply to gemm only)")
    ap.add_argument("--repeats", type=int, default=1, help="interleaved runs per mode; the median is shown")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    shapes = [int(x) for x in a.shapes.split(",")]
    if a.one is not None:
        print(json.dumps(one(a.one, a.trials, shapes, a.op)))
        return 0
    pools = [int(x) for x in a.pools.split(",")]
    runs: dict[int, list] = {p: [] for p in pools}
    for _ in range(a.repeats):
        for pool in pools:
            out = subprocess.run([sys.executable, __file__, "--one", str(pool), "--trials", str(a.trials),
                                  "--shapes", a.shapes, "--op", a.op], capture_output=True, text=True, check=True)
            runs[pool].append(json.loads(out.stdout.strip().splitlines()[-1]))
    results = []
    for pool in pools:
        ranked = sorted(runs[pool], key=lambda r: len(r["trials"]) / r["wall"])
        results.append({**ranked[len(ranked) // 2], "rates": [len(r["trials"]) / r["wall"] for r in runs[pool]]})
    seq = {(r["study"], r["number"]): r for r in results[0]["trials"]}
    print(f"sweep: {a.op} f16 gfx1100, shapes {a.shapes}, {a.trials} trials each, emulator gate + model timing, "
          f"seed 0; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end; one fresh process and "
          f"empty kernel cache per run; {a.repeats} interleaved run(s) per mode, median shown")
    print(f"{'compile_workers':>15} {'trials':>6} {'wall s':>7} {'trials/s':>8} {'x seq':>6} {'compile s/trial':>15} "
          f"{'waited s/trial':>14} {'same as seq':>11}  runs (trials/s)")
    base = None
    for r in results:
        n = len(r["trials"])
        rate = n / r["wall"]
        base = base or rate
        same = sum(1 for t in r["trials"] if (s := seq.get((t["study"], t["number"])))
                   and s["schedule"] == t["schedule"] and s["value"] == t["value"])
        comp = sum(t["compile"] for t in r["trials"]) / max(n, 1)
        waited = sum(t["waited"] for t in r["trials"]) / max(n, 1)
        print(f"{r['pool']:>15} {n:>6} {r['wall']:>7.1f} {rate:>8.3f} {rate / base:>6.2f} {comp:>15.3f} "
              f"{waited:>14.3f} {f'{same}/{n}':>11}  {' '.join(f'{x:.3f}' for x in r['rates'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
