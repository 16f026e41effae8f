"""Model ladder: for each target and dtype, the best built-in default GEMM schedule's
*estimate* at 1024^3, 2048^3 and 4096^3 (source=model; no GPU involved).

"Best default" = the candidate in DEFAULTS with the shortest estimated time for that
(target, dtype, shape); candidates that do not compile or fit are recorded as skipped.
Writes results/model_estimates.csv and prints a markdown table.

    python bench/model_table.py [--arch gfx1100 ...] [--dtype f16 ...] [--layout NN]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from wmma_gen.errors import WmmaGenError
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.model import estimate
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import TARGETS

SHAPES = (1024, 2048, 4096)
DEFAULTS: dict[str, Schedule] = {
    "direct_64x64x32": Schedule(),
    "lds_64x64x32_db": Schedule(lds="ab", buffers=2, lds_pad=8),
    "lds_128x64x32_db": Schedule(block_m=128, lds="ab", buffers=2, lds_pad=8),
    "lds_128x128x32_db": Schedule(block_m=128, block_n=128, lds="ab", buffers=2, lds_pad=8),
    "lds_128x128x16_4w": Schedule(block_m=128, block_n=128, block_k=16, lds="ab", buffers=1, lds_pad=8),
}


def rows_for(arch: str, dtype: str, layout: str) -> list[dict]:
    t = TARGETS[arch]
    out = []
    for n in SHAPES:
        d, p = GemmDirective(dtype, layout=layout), GemmProblem(n, n, n)
        best, skipped = None, []
        for name, s in DEFAULTS.items():
            if s.problems(d, t, p):
                skipped.append(f"{name}: {s.problems(d, t, p)[0]}")
                continue
            try:
                k = compile_gemm(d, s, arch, p)
                e = estimate(k, d, s, t, p)
            except WmmaGenError as err:
                skipped.append(f"{name}: {str(err).splitlines()[0][:120]}")
                continue
            if best is None or e.seconds < best[2].seconds:
                best = (name, s, e, k)
        row = {"arch": arch, "dtype": dtype, "acc": d.acc, "layout": layout, "m": n, "n": n, "k": n, "source": "model"}
        if best is None:
            row.update(schedule="", tflops=float("nan"), seconds=float("nan"), skipped="; ".join(skipped))
        else:
            name, s, e, k = best
            f = e.figures
            row.update(schedule=name, schedule_json=s.to_json(), seconds=e.seconds, tflops=round(e.tflops, 2),
                       fraction_of_peak=round(e.fraction_of_peak, 3), peak_tflops=round(f["peak_tflops"], 1),
                       limiter=e.limiter, vgprs=f["occupancy"]["vgprs"], waves_per_simd=f["occupancy"]["waves_per_simd"],
                       loop_wmma=f["loop"]["wmma"], unroll=f["unroll"], skipped="; ".join(skipped))
        out.append(row)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="*", default=list(TARGETS))
    ap.add_argument("--dtype", nargs="*", default=None, help="default: every dtype of each target")
    ap.add_argument("--layout", default="NN")
    ap.add_argument("--out", default="results/model_estimates.csv")
    args = ap.parse_args(argv)
    t0, rows = time.time(), []
    for arch in args.arch:
        for dt in (args.dtype or TARGETS[arch].dtypes):
            if dt not in TARGETS[arch].dtypes:
                continue
            rows += rows_for(arch, dt, args.layout)
            print(f"{arch} {dt} done ({time.time() - t0:.0f} s)", file=sys.stderr)
    df = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    cols = ["arch", "dtype", "m", "schedule", "tflops", "fraction_of_peak", "limiter", "source"]
    print("Estimates (source = model, not measured):\n")
    print(df[[c for c in cols if c in df]].to_markdown(index=False) if _has_tabulate() else df[cols].to_string(index=False))
    return 0


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
        return True
    except ImportError:
        return False


if __name__ == "__main__":
    sys.exit(main())
