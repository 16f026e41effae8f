"""Per-candidate compile time, before and after "compile once" (issue 15 item 3), side by side
in one run, medians of N runs, gfx1100 (plus one gfx1201 GEMM), from the kernel's MLIR text:

  two_codegens_ms  what every candidate that ran, was timed or exported cost before: lower ->
                   codegen to ISA text (format=isa) -> parse its metadata, then lower again ->
                   codegen + assemble + link (format=bin) -> read the note (2 LLVM codegens)
  isa_only_ms      what a GPU-less, model-only candidate cost before (the first half alone)
  compile_once_ms  now, on every path: lower -> codegen + assemble + link (format=bin) -> read
                   the note -> decode the listing from the hsaco (1 LLVM codegen);
                   of_which_listing_ms is the decoding of the listing alone
  cached_ms        a cache hit now, with the listing decoded from the cached bytes
  build_ms         building the MLIR (the same before and after; not in the columns above)

The reference row is a one-WMMA kernel written as MLIR text, the smallest thing the pipeline
compiles. Writes results/compile_time.csv.

    python bench/compile_time.py [N]
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # run from a clone

from wmma_gen.compiler import CODEGENS, KernelCache, compile_mlir, hsaco, listing, llvm_isa, lower  # noqa: E402
from wmma_gen.compiler.metadata import parse_isa_metadata, read_metadata  # noqa: E402
from wmma_gen.ops.attention.defaults import default_schedule as attention_default  # noqa: E402
from wmma_gen.attention_common.directive import AttentionDirective  # noqa: E402
from wmma_gen.ops.attention.kernel import build_attention  # noqa: E402
from wmma_gen.ops.gemm.kernel import build_gemm  # noqa: E402
from wmma_gen.ops.gemm.defaults import LARGE, fitted_default  # noqa: E402
from wmma_gen.ops.gemm.directive import GemmDirective  # noqa: E402
from wmma_gen.ops.gemm.problem import GemmProblem  # noqa: E402
from wmma_gen.ops.gemm.schedule import Schedule  # noqa: E402
from wmma_gen.ops.gemm.signature import spec_key  # noqa: E402
from wmma_gen.targets import get_target  # noqa: E402

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


def _two_codegens(text: str, arch: str) -> None:
    """The pipeline before compile-once, stage by stage (old compile_mlir + CompiledKernel.hsaco)."""
    parse_isa_metadata(llvm_isa(lower(text, arch), arch))
    read_metadata(hsaco(lower(text, arch), arch))


def _isa_only(text: str, arch: str) -> None:
    parse_isa_metadata(llvm_isa(lower(text, arch), arch))


def _compile_once(text: str, arch: str) -> None:
    _ = compile_mlir(text, arch, cache=False).isa


def _medians(fns: dict, n: int) -> dict:
    """Median ms of each function, run interleaved (one of each per round) so drift hits all alike."""
    times = {name: [] for name in fns}
    for _ in range(n):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: 1e3 * statistics.median(ts) for name, ts in times.items()}


def _codegens(fn) -> int:
    before = sum(CODEGENS.values())
    fn()
    return sum(CODEGENS.values()) - before


def _row(name: str, build, arch: str, n: int) -> dict:
    t0 = time.perf_counter()
    text = build()
    row = {"kernel": name, "arch": arch, "build_ms": 1e3 * (time.perf_counter() - t0)}
    fns = {"two_codegens_ms": lambda: _two_codegens(text, arch), "isa_only_ms": lambda: _isa_only(text, arch),
           "compile_once_ms": lambda: _compile_once(text, arch)}
    row.update(_medians(fns, n))
    row["speedup"] = row["two_codegens_ms"] / row["compile_once_ms"]
    obj = compile_mlir(text, arch, cache=False).hsaco
    row["of_which_listing_ms"] = _medians({"listing": lambda: listing(obj)}, n)["listing"]
    row["codegens_before"] = _codegens(lambda: _two_codegens(text, arch))
    row["codegens_now"] = _codegens(lambda: _compile_once(text, arch))
    with tempfile.TemporaryDirectory() as tmp:
        cache = KernelCache(tmp)
        compile_mlir(text, arch, cache=cache)
        row["cached_ms"] = _medians({"hit": lambda: compile_mlir(text, arch, cache=cache).isa}, n)["hit"]
    return row


def _gemm_mlir(d: GemmDirective, p: GemmProblem, s: Schedule, t) -> str:
    return build_gemm(d, s, t, spec_key(d, s, p.as_dict())).mlir


def main(n: int = 5) -> None:
    d, big, small = GemmDirective("f16"), GemmProblem(4096, 4096, 4096), GemmProblem(64, 64, 64)
    t11, t12 = get_target("gfx1100"), get_target("gfx1201")
    attn = AttentionDirective("f16", 128)
    cases = [
        ("reference: one-WMMA MLIR text", lambda: REFERENCE, "gfx1100"),
        ("gemm default (LARGE 128x256x32, f16 NN)", lambda: _gemm_mlir(d, big, LARGE, t11), "gfx1100"),
        ("gemm 64x64x32 LDS single-buffer (f16 NN)",
         lambda: _gemm_mlir(d, big, Schedule(block_m=64, block_n=64, block_k=32, lds="ab"), t11), "gfx1100"),
        ("gemm default fitted to 64^3", lambda: _gemm_mlir(d, small, fitted_default(d, t11, small), t11), "gfx1100"),
        ("gemm default (LARGE, f16 NN)", lambda: _gemm_mlir(d, big, LARGE, t12), "gfx1201"),
        ("attention fwd default (f16 hd128)", lambda: build_attention(attn, attention_default(t11, attn), t11).mlir,
         "gfx1100"),
    ]
    rows = [_row(name, build, arch, n) for name, build, arch in cases]
    df = pd.DataFrame(rows).round(2)
    out = Path("results") / "compile_time.csv"
    out.parent.mkdir(exist_ok=True)
    df.to_csv(out, index=False)
    with pd.option_context("display.width", 200):
        print(df.to_string(index=False))
    print(f"\nmedian of {n} interleaved runs each, this machine (load average {os.getloadavg()[0]:.1f}); times "
          f"from MLIR text, cache off unless cached; speedup = two_codegens_ms / compile_once_ms; wrote {out}")


def repeats(text: str) -> int:
    """N from the command line: a positive integer (argparse names the argument otherwise)."""
    import argparse
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"N={text!r} is not allowed: a positive integer (runs per median)")
    return n


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("n", nargs="?", type=repeats, default=5, metavar="N", help="runs per median (default 5)")
    main(ap.parse_args().n)
