"""Emulator speed: wave-instructions per second of GEMMs run from their code objects, batched
(waves sharing a PC run together) next to the per-wave reference path, and a profile of
where the batched time goes, per instruction (mnemonic) and per class. The large batched runs
are made twice, side by side: with the compiled WMMA kernel (emu/native) and with its numpy
path ("numpy-wmma"), which is what runs where no C compiler is found; and the i8 GEMM
(v_wmma_i32_16x16x16_iu8) the same way.

    python bench/emu_speed.py [--size 256] [--reference-size 128] [--archs gfx1100,gfx1201]

Wall time is host time of the emulation (source: emulator), not GPU time; it includes binding
the decoded program (once per Program). The rates come from unprofiled runs; the profile
(time shares per instruction and class) from a separate run of the same kernel.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import time
from collections import defaultdict

import numpy as np

from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.problem import GemmProblem
from wmma_gen.emu import GlobalMemory, Program, native, run_kernel
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.schedule import Schedule


def gemm_run(arch: str, size: int, schedule: Schedule, mode: str, profile: dict | None = None, dtype: str = "f16"):
    k = compile_gemm(GemmDirective(dtype), schedule, arch, GemmProblem(size, size, size))
    kernel = k.compiled
    prog = Program.from_code_object(kernel.hsaco, kernel.name)
    rng = np.random.default_rng(0)
    if dtype == "i8":
        a, b = (rng.integers(-128, 128, (size, size)).astype(np.int8) for _ in range(2))
    else:
        a, b = (rng.standard_normal((size, size)).astype(np.float16) for _ in range(2))
    mem = GlobalMemory()
    pa, pb, pc = mem.alloc(a.nbytes), mem.alloc(b.nbytes), mem.alloc(size * size * 4)
    mem.write(pa, a)
    mem.write(pb, b)
    grid, block = k.grid, k.block
    gc.collect()        # as timeit does: a full collection (20-35 ms here) landing inside one
    gc.disable()        # instruction would show up as that instruction's share of the profile
    try:
        t0 = time.perf_counter()
        stats = run_kernel(prog, mem, grid, block, prog.pack_kernarg([pa, pb, pc] + k.scalars(), grid, block),
                           mode=mode, profile=profile)
        wall = time.perf_counter() - t0
    finally:
        gc.enable()
    c = np.frombuffer(mem.read(pc, size * size * 4), np.int32 if dtype == "i8" else np.float32).reshape(size, size)
    err = float(np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max())
    return stats, wall, err


def matmul_floor(waves: int, repeats: int = 50) -> float:
    """Seconds per wave of the float64 arithmetic alone of one batched 16x16x16 WMMA over
    `waves` waves: np.matmul (BLAS) of (waves, 16, 16) operands, median of `repeats` -- what
    any exact f32-accumulate WMMA emulation must at least spend (no gather, decode or write)."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, waves, 16, 16))
    d = np.empty((waves, 16, 16))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.matmul(a.transpose(0, 2, 1), b, out=d)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / waves


def _class(mnemonic: str) -> str:
    m = mnemonic.split("::")[0]
    for prefix, cls in (("v_wmma", "wmma"), ("v_dual", "vopd"), ("ds_", "ds"), ("global_", "global"),
                        ("scratch_", "scratch"), ("s_load", "smem"), ("s_", "salu/control"),
                        ("v_perm", "v_perm"), ("v_cmp", "vopc"), ("v_pk_", "vop3p"), ("v_fma_mix", "vop3p"),
                        ("v_", "valu")):
        if m.startswith(prefix):
            return cls
    return "other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--reference-size", type=int, default=128)
    ap.add_argument("--archs", default="gfx1100,gfx1201")
    args = ap.parse_args()
    rows, profiles = [], {}
    print(f"v_wmma path (f16/bf16 with f32, iu8/iu4 with i32 accumulators): {native.status()}")
    for arch in args.archs.split(","):
        for lds in ("none", "ab"):
            s = Schedule(lds=lds)
            for size, mode, wmma in ((args.size, "batched", "native"), (args.size, "batched", "numpy-wmma"),
                                     (args.reference_size, "batched", "native"),
                                     (args.reference_size, "per_wave", "native")):
                if wmma == "native" and native.library() is None:
                    continue
                with native.disabled() if wmma != "native" else contextlib.nullcontext():
                    st, wall, err = gemm_run(arch, size, s, mode)
                rows.append((f"{arch} f16 {size}^3 lds={lds}", mode if wmma == "native" else f"{mode}/{wmma}",
                             st.waves, st.wave_instructions, wall, st.wave_instructions / wall, err))
            for wmma in ("native", "numpy-wmma"):   # separate runs: the timers slow them down
                if wmma == "native" and native.library() is None:
                    continue
                prof: dict = {}
                with native.disabled() if wmma != "native" else contextlib.nullcontext():
                    st, _, _ = gemm_run(arch, args.size, s, "batched", prof)
                profiles[f"{arch} f16 {args.size}^3 lds={lds} ({wmma})"] = prof, st.waves
        for wmma in ("native", "numpy-wmma"):     # the i8 GEMM: v_wmma_i32_16x16x16_iu8
            if wmma == "native" and native.library() is None:
                continue
            with native.disabled() if wmma != "native" else contextlib.nullcontext():
                st, wall, err = gemm_run(arch, args.size, Schedule(), "batched", dtype="i8")
            rows.append((f"{arch} i8 {args.size}^3 lds=none", "batched" if wmma == "native" else "batched/numpy-wmma",
                         st.waves, st.wave_instructions, wall, st.wave_instructions / wall, err))
    print(f"{'kernel':32s} {'mode':20s} {'waves':>6s} {'wave-instr':>11s} {'seconds':>8s} "
          f"{'wave-instr/s':>13s} {'max|err|':>9s}")
    for name, mode, waves, wi, sec, rate, err in rows:
        print(f"{name:32s} {mode:20s} {waves:6d} {wi:11d} {sec:8.3f} {rate:13,.0f} {err:9.2e}")
    by = {(r[0], r[1]): r for r in rows}
    for name in dict.fromkeys(r[0] for r in rows):
        if (name, "per_wave") in by:
            print(f"speed-up of batched over per-wave ({name}): {by[(name, 'per_wave')][4] / by[(name, 'batched')][4]:.1f}x")
        if (name, "batched/numpy-wmma") in by and (name, "batched") in by:
            print(f"speed-up of the compiled WMMA kernel over its numpy path ({name}, whole run): "
                  f"{by[(name, 'batched/numpy-wmma')][4] / by[(name, 'batched')][4]:.2f}x")
    for name, (prof, waves) in profiles.items():   # profiled runs carry the timer overhead: shares only
        total = sum(t for t, _ in prof.values()) or 1.0
        count = sum(n for _, n in prof.values()) or 1
        classes, counts = defaultdict(float), defaultdict(int)
        for key, (t, n) in prof.items():
            classes[_class(key)] += t
            counts[_class(key)] += n
        top = sorted(prof.items(), key=lambda kv: -kv[1][0])[:5]
        print(f"profile {name}: " + ", ".join(f"{c} {100 * t / total:.0f}%" for c, t in
                                              sorted(classes.items(), key=lambda kv: -kv[1])))
        # what the kernel is made of: a class that is most of the instructions is most of the time
        print("   share of the wave-instructions: " + ", ".join(
            f"{c} {100 * n / count:.0f}% ({1e6 * classes[c] / n:.2f} us each)"
            for c, n in sorted(counts.items(), key=lambda kv: -kv[1])))
        print("   top instructions: " + ", ".join(f"{k} {100 * t / total:.0f}%" for k, (t, _) in top))
        wmma_t = sum(t for k, (t, _) in prof.items() if _class(k) == "wmma")
        wmma_n = sum(n for k, (_, n) in prof.items() if _class(k) == "wmma")
        if wmma_n:
            per_wave = matmul_floor(waves)
            floor = per_wave * wmma_n
            print(f"   v_wmma {1e6 * wmma_t / wmma_n:.2f} us per wave-instruction; its float64 arithmetic alone "
                  f"(np.matmul of {waves} waves) {1e6 * per_wave:.2f} us -> at that floor v_wmma would be "
                  f"{100 * floor / (floor + total - wmma_t):.0f}% of this run")


if __name__ == "__main__":
    main()
