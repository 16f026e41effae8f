"""Emulator speed: wave-instructions per second and the wall time of a 256x256x256 f16
GEMM, batched (waves sharing a PC run together) next to the per-wave reference path.

    python bench/emu_speed.py [--size 256] [--reference-size 128]

Wall time is host time of the emulation (source: emulator), not GPU time.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.directive import GemmDirective
from wmma_gen.emu import GlobalMemory, Program, run_kernel
from wmma_gen.schedule import Schedule


def gemm_run(size: int, schedule: Schedule, mode: str):
    d = GemmDirective("f16", size, size, size)
    t0 = time.perf_counter()
    k = compile_gemm(d, schedule, "gfx1100", cache=False)
    kernel = k.compiled
    compile_s = time.perf_counter() - t0
    prog = Program.from_isa(kernel.isa, kernel.name)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float16)
    b = rng.standard_normal((size, size)).astype(np.float16)
    mem = GlobalMemory()
    pa, pb, pc = mem.alloc(a.nbytes), mem.alloc(b.nbytes), mem.alloc(size * size * 4)
    mem.write(pa, a)
    mem.write(pb, b)
    grid, block = k.grid, k.block
    stats = run_kernel(prog, mem, grid, block, prog.pack_kernarg([pa, pb, pc] + k.scalars(), grid, block), mode=mode)
    c = np.frombuffer(mem.read(pc, size * size * 4), np.float32).reshape(size, size)
    err = float(np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max())
    return stats, compile_s, err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--reference-size", type=int, default=128)
    args = ap.parse_args()
    rows = []
    for lds in ("none", "ab"):
        s = Schedule(lds=lds)
        for size, mode in ((args.size, "batched"), (args.reference_size, "batched"),
                           (args.reference_size, "per_wave")):
            st, cs, err = gemm_run(size, s, mode)
            rows.append((f"f16 gemm {size}^3 lds={lds}", mode, st.waves, st.wave_instructions, st.seconds,
                         st.wave_instructions_per_second, err))
    print(f"{'kernel':28s} {'mode':9s} {'waves':>6s} {'wave-instr':>11s} {'seconds':>8s} "
          f"{'wave-instr/s':>13s} {'max|err|':>9s}")
    for name, mode, waves, wi, sec, rate, err in rows:
        print(f"{name:28s} {mode:9s} {waves:6d} {wi:11d} {sec:8.3f} {rate:13,.0f} {err:9.2e}")
    by = {(r[0], r[1]): r for r in rows}
    for lds in ("none", "ab"):
        name = f"f16 gemm {args.reference_size}^3 lds={lds}"
        fast, ref = by[(name, "batched")], by[(name, "per_wave")]
        print(f"speed-up of batched over per-wave ({name}): {ref[4] / fast[4]:.1f}x")


if __name__ == "__main__":
    main()
