"""Tuner sample efficiency on the model objective (issue 6 benchmark; target >= 0.97).

Over a narrowed search space small enough to enumerate, every schedule is scored exactly as
a GPU-less sweep scores it: validate -> compile at the study's shape -> model estimate
(TFLOP/s, source=model). Then the sweep's own sampler (autotune.study.sampler, seeded, with
the sweep's baselines enqueued) runs `--trials` trials against that table, and we report the
best it found as a fraction of the exhaustive best, per (dtype, shape) and averaged over
seeds, dtypes and shapes. Illegal or unbuildable points are pruned exactly as in a sweep.
(The correctness gate is not part of the model objective and is skipped here.)

    python bench/tuner_efficiency.py                 # 4 dtypes x 2 shapes x 40 seeds, 50 trials
    python bench/tuner_efficiency.py --dtypes f16 --shapes 1024 --seeds 2

Writes results/tuner_efficiency.csv (one row per dtype x shape) and prints the table.
Compiles go through the on-disk kernel cache, so a second run only re-runs the sampler.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

import optuna
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wmma_gen.tuner.space import enumerate_space, params_of, suggest_schedule  # noqa: E402
from wmma_gen.ops.gemm.tuning import baselines  # noqa: E402
from autotune.study import sampler  # noqa: E402
from wmma_gen.errors import ScheduleError, WmmaGenError  # noqa: E402
from wmma_gen.ops.gemm.directive import GemmDirective  # noqa: E402
from wmma_gen.ops.gemm.problem import GemmProblem  # noqa: E402
from wmma_gen.ops.gemm.schedule import SPACE, Schedule  # noqa: E402
from wmma_gen.targets import get_target  # noqa: E402

ARCH = "gfx1100"
# the enumerable sub-space: every macro tile and wave grid, with and without LDS staging
DOMAINS = {"block_m": (32, 64, 128, 256), "block_n": (32, 64, 128, 256), "block_k": (32,),
           "waves_m": (1, 2, 4), "waves_n": (1, 2, 4), "lds": ("none", "ab"), "buffers": (2,),
           "lds_pad": (0,), "load_bits": (128,), "k_unroll": (1,), "raster": ("row",), "split_k": (1,)}


def score(job: tuple[str, int, dict]) -> tuple[dict, float | None]:
    """Model TFLOP/s of one schedule for (dtype, size), or None when a sweep would prune it."""
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.model import estimate
    dtype, size, sd = job
    d, s, t = GemmDirective(dtype), Schedule(**sd), get_target(ARCH)
    p = GemmProblem(size, size, size)
    if s.problems(d, t, p):
        return sd, None
    try:
        k = compile_gemm(d, s, ARCH, p)
        if k.compiled.spilled:
            return sd, None
        return sd, float(estimate(k, d, s, t, p).tflops)
    except (ScheduleError, WmmaGenError):
        return sd, None


def table(dtype: str, size: int, pool) -> dict[Schedule, float | None]:
    jobs = [(dtype, size, s.to_dict()) for s in enumerate_space(DOMAINS, SPACE, Schedule)]
    return {Schedule(**sd): v for sd, v in pool.map(score, jobs, chunksize=4)}


def tpe_best(values: dict[Schedule, float | None], d: GemmDirective, p: GemmProblem, seed: int,
             trials: int) -> float:
    """Best value the sweep's sampler finds in `trials` trials (the sweep's baselines enqueued as in a sweep:
    ops/gemm/tuning.baselines; those outside DOMAINS are skipped, as a sweep skips them outside its domains)."""
    study = optuna.create_study(direction="maximize", sampler=sampler(seed, trials))
    for s in baselines(d, p, ARCH):
        try:
            study.enqueue_trial(params_of(s, DOMAINS, SPACE), skip_if_exists=True)
        except ScheduleError:
            continue

    def objective(trial):
        v = values[suggest_schedule(trial, DOMAINS, SPACE, Schedule)]
        if v is None:
            raise optuna.TrialPruned("illegal or unbuildable")
        return v

    study.optimize(objective, n_trials=trials)
    done = [x.value for x in study.trials if x.value is not None]
    return max(done) if done else 0.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtypes", default="f16,bf16,i8,i4")
    p.add_argument("--shapes", default="1024,4096")
    p.add_argument("--seeds", type=int, default=40,
                   help="sampler seeds per row (5 were too few: gfx1100 i4 1024^3 read 0.955 on seeds 0-4 and "
                        "0.851 over 200 under the model before ops/gemm/l0_lines.py)")
    p.add_argument("--trials", type=int, default=50)
    p.add_argument("--jobs", type=int, default=2, help="compile processes for the exhaustive pass")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "results" / "tuner_efficiency.csv"))
    args = p.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rows = []
    t0 = time.time()
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for dtype in args.dtypes.split(","):
            for size in (int(x) for x in args.shapes.split(",")):
                t1 = time.time()
                values = table(dtype, size, pool)
                legal = {s: v for s, v in values.items() if v is not None}
                best_s = max(legal, key=legal.get)
                d, prob = GemmDirective(dtype), GemmProblem(size, size, size)
                found = [tpe_best(values, d, prob, seed, args.trials) for seed in range(args.seeds)]
                fr = [f / legal[best_s] for f in found]
                rows.append({"arch": ARCH, "dtype": dtype, "shape": f"{size}x{size}x{size}",
                             "space_points": len(values), "scorable_points": len(legal),
                             "exhaustive_best_tflops": round(legal[best_s], 2),
                             "exhaustive_best_schedule": f"{best_s.block_m}x{best_s.block_n} w{best_s.waves_m}x"
                                                         f"{best_s.waves_n} lds={best_s.lds}",
                             "tpe_trials": args.trials, "seeds": args.seeds,
                             "tpe_best_mean_tflops": round(sum(found) / len(found), 2),
                             "fraction_mean": round(sum(fr) / len(fr), 4), "fraction_min": round(min(fr), 4),
                             "source": "model", "seconds": round(time.time() - t1, 1)})
                print(f"{dtype} {size}: {rows[-1]['fraction_mean']:.3f} (min {rows[-1]['fraction_min']:.3f}) "
                      f"of {rows[-1]['exhaustive_best_tflops']} in {rows[-1]['seconds']} s", flush=True)
    df = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df.drop(columns=["arch", "source", "seconds"]).to_string(index=False))
    mean = df["fraction_mean"].mean()
    print(f"\nmean fraction of exhaustive best (model objective, {args.trials} trials): {mean:.4f} "
          f"(target >= 0.97) {'PASS' if mean >= 0.97 else 'BELOW TARGET'}; {time.time() - t0:.0f} s; "
          f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
