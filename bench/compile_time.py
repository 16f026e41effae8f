"""In-process compile time per GEMM kernel: cold (no cache) to ISA, cold to ISA + hsaco,
and a cache hit; medians of N runs, next to a reference compiled in the same process (a
one-WMMA kernel written as MLIR text, the smallest thing the same pipeline can compile).
Issue 2 target: < 50 ms cold for the default GEMM schedule. Writes results/compile_time.csv.

    python bench/compile_time.py [N]
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.compiler import KernelCache, compile_mlir
from wmma_gen.defaults import LARGE, fitted_default
from wmma_gen.directive import GemmDirective
from wmma_gen.schedule import Schedule
from wmma_gen.targets import get_target

REFERENCE = """
module attributes {gpu.container_module} {
gpu.module @m [#rocdl.target<chip = "gfx1100">] {
  gpu.func @one_wmma(%A: memref<16x16xf16>, %B: memref<16x16xf16>, %C: memref<16x16xf32>) kernel
      attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %row = arith.remui %tid, %c16 : index
    %a = vector.load %A[%row, %c0] : memref<16x16xf16>, vector<16xf16>
    %b = vector.load %B[%row, %c0] : memref<16x16xf16>, vector<16xf16>
    %z = arith.constant dense<0.0> : vector<8xf32>
    %d = amdgpu.wmma 16x16x16 %a * %b + %z : vector<16xf16>, vector<16xf16>, vector<8xf32>
    %e = vector.extract %d[0] : f32 from vector<8xf32>
    memref.store %e, %C[%row, %c0] : memref<16x16xf32>
    gpu.return
  }
}
}
"""


def _median(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(n: int = 5) -> None:
    d = GemmDirective("f16", 4096, 4096, 4096)
    cases = {
        "default (LARGE 128x256x32, f16 NN 4096^3)": (d, LARGE),
        "64x64x32 LDS single-buffer (f16 NN 4096^3)": (d, Schedule(block_m=64, block_n=64, block_k=32, lds="ab")),
        "default fitted to 64^3": (d.with_shape(64, 64, 64), fitted_default(d.with_shape(64, 64, 64), get_target("gfx1100"))),
    }
    rows = [{"kernel": "reference: one-WMMA MLIR text",
             "cold_isa_ms": 1e3 * _median(lambda: compile_mlir(REFERENCE, "gfx1100", cache=False), n),
             "cold_isa_hsaco_ms": 1e3 * _median(lambda: compile_mlir(REFERENCE, "gfx1100", cache=False, eager_hsaco=True), n)}]
    for name, (dd, s) in cases.items():
        row = {"kernel": name,
               "cold_isa_ms": 1e3 * _median(lambda: compile_gemm(dd, s, "gfx1100", cache=False), n),
               "cold_isa_hsaco_ms": 1e3 * _median(lambda: compile_gemm(dd, s, "gfx1100", cache=False, eager_hsaco=True), n)}
        with tempfile.TemporaryDirectory() as tmp:
            cache = KernelCache(tmp)
            compile_gemm(dd, s, "gfx1100", cache=cache, eager_hsaco=True)
            row["cached_ms"] = 1e3 * _median(lambda: compile_gemm(dd, s, "gfx1100", cache=cache), n)
        rows.append(row)
    df = pd.DataFrame(rows).round(1)
    out = Path("results") / "compile_time.csv"
    out.parent.mkdir(exist_ok=True)
    df.to_csv(out, index=False)
    print(df.to_string(index=False))
    print(f"\nmedian of {n} runs each, this machine, gfx1100; cold = no cache (build + lower + codegen); "
          f"cached includes building the MLIR (the cache key); wrote {out}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
