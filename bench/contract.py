"""The kernel contract, measured side by side: static-shape kernels (an older commit) vs
run-time shapes (this tree), in one run.

    python bench/contract.py [--before COMMIT]      (default: a1a7fa5, the last static-shape main)

For each tree, in a fresh subprocess (cold in-process state, on-disk cache disabled):
  compiles   LLVM compilations (compile_mlir calls) to build 4 schedules for 3 sizes (1024^3,
             2048^3, 4096^3, f16 NT on gfx1100) -- what a sweep over those shapes compiles
  build_s    wall time of those builds
  first_call wall time of gemm() on a 64x64x64 problem, then on an unseen 128x128x128 problem
             of the same specialization key, with the compiles each call caused (emulator
             device: includes ~0.1 s of emulation, the same in both trees)
Writes results/contract_bench.csv. Source of every figure: host wall time on this machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

PROBE = r'''
import json, time, numpy as np
import wmma_gen.compiler.compile as cc
calls = [0]
real = cc.compile_mlir
def counting(*a, **k):
    calls[0] += 1
    return real(*a, **k)
cc.compile_mlir = counting
try:
    import wmma_gen.ops.gemm.build as b
except ImportError:
    import wmma_gen.build as b
b.compile_mlir = counting
try:   # the compile path since ops/compile_op.py (it binds compile_mlir at import)
    import wmma_gen.ops.compile_op as co
    co.compile_mlir = counting
except ImportError:
    pass
import wmma_gen
try:   # GEMM's modules moved into ops/gemm after the static-shape baseline
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.schedule import Schedule
except ImportError:
    from wmma_gen.directive import GemmDirective
    from wmma_gen.schedule import Schedule
try:   # sizes left the directive for a GemmProblem (issue 26)
    from wmma_gen.ops.gemm.problem import GemmProblem
    def compile_nt(size, s):
        return b.compile_gemm(GemmDirective("f16", layout="NT"), s, "gfx1100", GemmProblem(size, size, size))
except ImportError:
    def compile_nt(size, s):
        return b.compile_gemm(GemmDirective("f16", size, size, size, layout="NT"), s, "gfx1100")
S = [Schedule(block_m=128, block_n=128, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2),
     Schedule(block_m=128, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab", buffers=2),
     Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab"),
     Schedule(block_m=64, block_n=128, block_k=64, waves_m=2, waves_n=2, lds="ab", buffers=2)]
t0 = time.perf_counter()
for size in (1024, 2048, 4096):
    for s in S:
        compile_nt(size, s)
build_s = time.perf_counter() - t0
sweep_compiles = calls[0]
rng = np.random.default_rng(0)
s = Schedule(block_m=64, block_n=64, block_k=32, waves_m=2, waves_n=2, lds="ab")
out = {"compiles": sweep_compiles, "build_s": round(build_s, 3)}
for label, n in (("first_shape", 64), ("unseen_shape_same_key", 128)):
    a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    c0, t0 = calls[0], time.perf_counter()
    wmma_gen.gemm(a, a, schedule=s, device="emu")
    out[label + "_s"] = round(time.perf_counter() - t0, 3)
    out[label + "_compiles"] = calls[0] - c0
print("RESULT " + json.dumps(out))
'''


def measure(tree: Path) -> dict:
    env = dict(os.environ, WMMA_GEN_CACHE_DIR=tempfile.mkdtemp(prefix="wmma_gen_bench_cache_"))
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=tree, env=env, capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")]
    if r.returncode or not line:
        raise SystemExit(f"probe failed in {tree}:\n{r.stderr[-2000:]}")
    return json.loads(line[0][7:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="a1a7fa5", help="commit with compile-time shapes (default a1a7fa5)")
    args = ap.parse_args()
    here = Path(__file__).resolve().parent.parent
    old = Path(tempfile.mkdtemp(prefix="wmma_gen_before_")) / "tree"
    subprocess.run(["git", "-C", str(here), "worktree", "add", "--detach", str(old), args.before],
                   check=True, capture_output=True)
    try:
        rows = [{"tree": f"before ({args.before}, static shapes)", **measure(old)},
                {"tree": "after (run-time shapes)", **measure(here)}]
    finally:
        subprocess.run(["git", "-C", str(here), "worktree", "remove", "--force", str(old)], capture_output=True)
    df = pd.DataFrame(rows)
    out = here / "results" / "contract_bench.csv"
    df.to_csv(out, index=False)
    print(df.to_string(index=False))
    b, a = rows
    print(f"\ncompiles for 4 schedules x 3 shapes: {b['compiles']} -> {a['compiles']} "
          f"({b['compiles'] / max(a['compiles'], 1):.1f}x fewer); build time {b['build_s']} s -> {a['build_s']} s; "
          f"gemm() on an unseen shape of the same key: {b['unseen_shape_same_key_compiles']} -> "
          f"{a['unseen_shape_same_key_compiles']} compiles, {b['unseen_shape_same_key_s']} s -> "
          f"{a['unseen_shape_same_key_s']} s (host wall time, emulator device); wrote {out}")


if __name__ == "__main__":
    main()
