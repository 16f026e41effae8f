"""A WMMA-only loop kernel: the generated stand-in for a published WMMA microbenchmark.

    per lane:  a, b  = one A and one B fragment, loaded once from global memory
               acc[0..chains) = 0
               for t in range(trips):                 # the main loop: v_wmma and loop overhead only
                   acc[i] = a @ b + acc[i]   for every chain i (independent, so they pipeline)
               out[wave, i, lane, :] = acc[i]         # stored, so nothing is dead code

bench/calibrate.py compiles it (MLIR text through compiler.compile_mlir, like every kernel) and
has the model (model/loop_kernel.py, family "peak": efficiency 1) estimate its ISA; the published
microbenchmark rows of docs/calibration/points.csv are compared with that estimate. The emulator
runs it in tests/emu/test_wmma_loop.py: out = trips * (A @ B) per chain.

The loop carries `llvm.loop.unroll.disable` (as irb.keep_unroll marks the GEMM K loop): LLVM 24
runtime-unrolls short loops with a remainder loop, which would change the v_wmma per loop
iteration the model and the microbenchmark rows count on.

Operand layouts: gfx11 A/B are 16 elements per lane (lanes 16-31 repeat lanes 0-15), gfx12 8
per lane (RDNA3 ISA guide 7.9 "WMMA"; GPUOpen "Using the Matrix Cores of AMD RDNA 4"); the
kernel loads lane l's elements from a[l*n : l*n+n] and b[l*n : l*n+n] as they come, so the host
decides what matrices they form (the test builds the fragments with wmma_gen.layouts).
"""
from __future__ import annotations

from ..targets import get_target

_MLIR_TYPE = {"f16": "f16", "bf16": "bf16", "i8": "i8"}
_ACC = {"f16": "f32", "bf16": "f32", "i8": "i32"}
NAME = "wmma_loop"


def operand_elems(arch: str) -> int:
    """A/B elements per lane of a 16x16x16 WMMA: 16 on gfx11 (half-waves replicated), 8 on gfx12."""
    return 16 if get_target(arch).family == "gfx11" else 8


def wmma_loop_mlir(arch: str, dtype: str, *, chains: int = 8, waves: int = 4) -> str:
    """GPU-dialect module of the WMMA-only loop kernel; arguments (a, b, out, trips)."""
    if dtype not in _MLIR_TYPE:
        raise ValueError(f"dtype={dtype!r} is not allowed for the WMMA-only loop: one of {', '.join(_MLIR_TYPE)}")
    if dtype not in get_target(arch).dtypes:
        raise ValueError(f"dtype={dtype!r} is not a WMMA dtype of {arch}")
    if not (1 <= chains <= 16 and 1 <= waves <= 16):
        raise ValueError(f"chains={chains}, waves={waves}: each must be in 1..16")
    n, t, acc = operand_elems(arch), _MLIR_TYPE[dtype], _ACC[dtype]
    threads, nout = 32 * waves, out_elems(chains, waves)
    ops = "vector<{n}x{t}>, vector<{n}x{t}>, vector<8x{acc}>".format(n=n, t=t, acc=acc)
    zero = "0.0" if acc == "f32" else "0"
    iters = ", ".join(f"%acc{i} = %zero" for i in range(chains))
    accs = ", ".join(f"vector<8x{acc}>" for _ in range(chains))
    body = "\n".join(f"          %n{i} = amdgpu.wmma 16x16x16 %a * %b + %acc{i} : {ops}" for i in range(chains))
    yields = ", ".join(f"%n{i}" for i in range(chains))
    stores = "\n".join(
        f"        %o{i} = arith.addi %obase, %c{i * 256} : index\n"
        f"        vector.store %res#{i}, %out[%o{i}] : memref<{nout}x{acc}>, vector<8x{acc}>" for i in range(chains))
    consts = "\n".join(f"        %c{i * 256} = arith.constant {i * 256} : index" for i in range(chains) if i)
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @{NAME}_module [#rocdl.target<chip = "{arch}">] {{
    gpu.func @{NAME}(%pa: memref<{32 * n}x{t}>, %pb: memref<{32 * n}x{t}>, %out: memref<{nout}x{acc}>, %trips: i32) kernel attributes {{known_block_size = array<i32: {threads}, 1, 1>}} {{
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %cn = arith.constant {n} : index
        %c8 = arith.constant 8 : index
        %cwave = arith.constant {chains * 256} : index
        %c32 = arith.constant 32 : index
{consts}
        %zero = arith.constant dense<{zero}> : vector<8x{acc}>
        %tid = gpu.thread_id x
        %lane = arith.remui %tid, %c32 : index
        %wave = arith.divui %tid, %c32 : index
        %abase = arith.muli %lane, %cn : index
        %a = vector.load %pa[%abase] : memref<{32 * n}x{t}>, vector<{n}x{t}>
        %b = vector.load %pb[%abase] : memref<{32 * n}x{t}>, vector<{n}x{t}>
        %ntrips = arith.index_cast %trips : i32 to index
        %res:{chains} = scf.for %it = %c0 to %ntrips step %c1 iter_args({iters}) -> ({accs}) {{
{body}
          scf.yield {yields} : {accs}
        }} {{loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}}
        %wbase = arith.muli %wave, %cwave : index
        %lbase = arith.muli %lane, %c8 : index
        %obase = arith.addi %wbase, %lbase : index
{stores}
        gpu.return
    }}
  }}
}}
"""


def out_elems(chains: int = 8, waves: int = 4) -> int:
    """Elements of `out`: per wave, per chain, a 16x16 accumulator (32 lanes x 8)."""
    return waves * chains * 256
