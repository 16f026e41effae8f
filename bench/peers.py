"""Peers side by side (issue #17 item 4): Triton GEMM, FA-2 forward and backward kernels (bench/peers_triton.py,
our own Triton code; backward rows in bench/peers_bwd.py) compiled OFFLINE for gfx1100, gfx1151 and
gfx1201 -- no GPU -- beside our default kernel for the same problem.

    python bench/peers.py [--arch gfx1100 ...] [--out results] [--no-emu]

Per problem and arch, for the Triton kernel and ours (next column):
  static (compiler output)  VGPRs, spills, main-loop WMMA density (v_wmma per issued instruction of
                            the steady-state loop, model/isa_loop.find_main_loop), global / LDS load
                            widths in that loop, cold compile seconds (Triton: fresh TRITON_CACHE_DIR;
                            ours: compile_mlir without cache, hsaco linked)
  estimate (source=model)   our model applied to the ISA: Triton's kernels through model/loop_kernel.py
                            (trips, bytes and FLOPs from the tile sizes; GEMM under the "gemm" family's
                            calibration, attention under "loop"), ours through the registry's estimate;
                            both with the calibration band (results/model_calibration.md)
  emulator                  each compiled Triton object (f16, bf16 as uint16 bits, i8) runs on wmma_gen's
                            emulator at a small problem (GEMM 256^3, attention B1 H2 S256) against a float64
                            (i8: exact) reference from the exact input values; the output is read back in
                            the dtype the kernel's signature writes (GEMM f32 / i32, attention O = input)
Problems: the gfx1100 ladders (results/gfx1100/*_ladder.csv) on every arch, and the GEMM and
attention-forward points of docs/calibration/points.csv on their arch, the backward points' problem on
every arch (GEMM as NN: the Triton kernel here is row-major only; the point's own layout is listed). Writes results/peers.{md,csv}.
Exits 0 with a message when Triton is not installed (pip install -e .[peers]).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

import peers_bwd
import results_header
from peers_common import as_compiled, label, operand, static  # noqa: F401  (peers.label etc. for callers)

ROOT = Path(__file__).resolve().parents[1]
ARCHS = ("gfx1100", "gfx1151", "gfx1201")
GEMM_TILE = {"f16": dict(bm=128, bn=128, bk=32), "bf16": dict(bm=128, bn=128, bk=32), "i8": dict(bm=128, bn=128, bk=64)}
ATTN_TILE = {64: dict(bm=128, bn=64, num_warps=4), 128: dict(bm=64, bn=64, num_warps=4)}
EMU_GEMM, EMU_ATTN = 256, dict(batch=1, heads=2, seq=256)
STORED = {"*fp16": "f16", "*bf16": "bf16", "*fp32": "f32", "*i32": "i32"}      # Triton pointer -> dtype
HOST = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "i32": np.int32}   # its host buffer
UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}      # unit roundoff u of a 16-bit float (RNE)


def problems(archs) -> list[dict]:
    """Ladder problems on every arch, calibration points on theirs; deduplicated."""
    out = []
    lad = ROOT / "results" / "gfx1100"
    if (lad / "gemm_ladder.csv").exists():
        for r in pd.read_csv(lad / "gemm_ladder.csv")[["dtype", "m", "n", "k"]].drop_duplicates().itertuples():
            out += [dict(op="gemm", arch=a, dtype=r.dtype, m=r.m, n=r.n, k=r.k, origin="gfx1100 ladder") for a in archs]
    if (lad / "attention_ladder.csv").exists():
        cols = ["dtype", "batch", "heads", "seq_q", "head_dim", "causal"]
        for r in pd.read_csv(lad / "attention_ladder.csv")[cols].drop_duplicates().itertuples():
            out += [dict(op="attention", arch=a, dtype=r.dtype, batch=r.batch, heads=r.heads, seq=r.seq_q,
                         head_dim=r.head_dim, causal=bool(r.causal), origin="gfx1100 ladder") for a in archs]
    from wmma_gen.ops.calibration_points import load_points
    for p in load_points():
        if p.arch not in archs or p.op not in ("gemm", "attention"):
            continue
        c = p.config
        if p.op == "gemm":
            out.append(dict(op="gemm", arch=p.arch, dtype=p.dtype, m=c["m"], n=c["n"], k=c["k"],
                            origin=f"point {p.id} ({c['layout']})"))
        else:
            out.append(dict(op="attention", arch=p.arch, dtype=p.dtype, batch=c["batch"], heads=c["heads"],
                            seq=c["seq"], head_dim=c["head_dim"], causal=c["causal"], origin=f"point {p.id}"))
    out += peers_bwd.problems(archs)
    seen, uniq = {}, []
    for q in out:
        key = tuple((k, v) for k, v in q.items() if k != "origin")
        if key in seen:
            seen[key]["origin"] += "; " + q["origin"]
        else:
            seen[key] = q
            uniq.append(q)
    return uniq


# --- Triton -----------------------------------------------------------------------------------
class Peers:
    """Compiled Triton objects per (arch, op, dtype, head_dim, causal), compiled once (cold)."""

    def __init__(self):
        import peers_triton as T
        self.T, self.cache = T, {}

    def get(self, q: dict):
        key = (q["arch"], q["op"], q["dtype"], q.get("head_dim"), q.get("causal"))
        if key not in self.cache:
            if q["op"] == "gemm":
                cfg = dict(GEMM_TILE[q["dtype"]], group_m=8, num_warps=8, num_stages=2)
                ck, sec = self.T.compile_gemm(q["arch"], q["dtype"], **cfg)
            elif q["op"] == "attention_bwd":
                ck, sec, cfg = peers_bwd.compile_bwd(q)
            else:
                cfg = dict(ATTN_TILE[q["head_dim"]], num_stages=1)
                ck, sec = self.T.compile_attention(q["arch"], q["dtype"], q["head_dim"], causal=q["causal"], **cfg)
            self.cache[key] = (ck, sec, cfg)
        return self.cache[key]


def peer_estimate(ck, cfg: dict, q: dict):
    """Our model on the Triton object (source=model): trips, bytes and FLOPs from its tiles."""
    from wmma_gen.model import calibration as C
    from wmma_gen.model.loop_kernel import estimate_loop_kernel
    from wmma_gen.ops import registry
    from wmma_gen.targets import get_target
    if q["op"] == "attention_bwd":
        return peers_bwd.estimate(ck, cfg, q)
    t, esize = get_target(q["arch"]), (1 if q["dtype"] == "i8" else 2)
    if q["op"] == "gemm":
        m, n, k, bm, bn, bk = q["m"], q["n"], q["k"], cfg["bm"], cfg["bn"], cfg["bk"]
        wgs = -(-m // bm) * -(-n // bn)
        trips = wgs * -(-k // bk)
        kw = dict(total_trips=trips, workgroups=wgs, l2_bytes=trips * (bm + bn) * bk * esize,
                  compulsory_bytes=(m * k + k * n) * esize + m * n * 4, flops=2 * m * n * k)
    else:
        s, d, bh, bm, bn = q["seq"], q["head_dim"], q["batch"] * q["heads"], cfg["bm"], cfg["bn"]
        per_head = sum(-(-(min(s, i + bm) if q["causal"] else s) // bn) for i in range(0, s, bm))
        spec = registry.get("attention")
        flops = spec.flops(spec.directive(q["dtype"], d, causal=q["causal"]),
                           dict(batch=q["batch"], heads=q["heads"], kv_heads=q["heads"], seq_q=s, seq_k=s))
        kw = dict(total_trips=bh * per_head, workgroups=bh * -(-s // bm), l2_bytes=bh * per_head * 2 * bn * d * esize,
                  compulsory_bytes=4 * bh * s * d * esize + bh * s * 4, flops=flops)
    fam = "gemm" if q["op"] == "gemm" else "loop"
    cal = C.active()
    as_fam = replace(cal, efficiency={**cal.efficiency, "loop": cal.efficiency.get(fam, 1.0)},
                     band={**cal.band, "loop": cal.band.get(fam, (math.nan, math.nan))})
    with C.use(as_fam):
        return estimate_loop_kernel(as_compiled(ck), t, q["dtype"], lds_exposed=fam == "gemm", **kw)


def emulate(ck, cfg: dict, q: dict) -> dict:
    """Run the Triton object on the emulator at a small problem; compare with a float64 (i8: exact) reference
    from the exact input values. The output buffer has the dtype the kernel's signature writes."""
    from wmma_gen import hostdata
    from wmma_gen.emu.api import load_program, run_code_object
    rng = np.random.default_rng(0)
    hsaco, warps = ck.asm["hsaco"], ck.metadata.num_warps
    t0 = time.perf_counter()
    if q["op"] == "gemm":
        n, out = EMU_GEMM, STORED[ck.src.signature["c_ptr"]]
        if q["dtype"] == "i8":
            a, b = (rng.integers(-128, 128, (n, n)).astype(np.int8) for _ in range(2))
            av, bv = a.astype(np.int64), b.astype(np.int64)
        else:
            (a, av), (b, bv) = (operand(rng, (n, n), q["dtype"]) for _ in range(2))
        ref = av @ bv
        args = [a, b, np.zeros((n, n), HOST[out]), n, n, n, n, n, n]
        grid = ((n // cfg["bm"]) * (n // cfg["bn"]), 1, 1)
        idx = 2
    else:
        bh, s, d = EMU_ATTN["batch"] * EMU_ATTN["heads"], EMU_ATTN["seq"], q["head_dim"]
        out = STORED[ck.src.signature["o_ptr"]]
        (qq, q64), (kk, k64), (vv, v64) = (operand(rng, (bh, s, d), q["dtype"]) for _ in range(3))
        o, lse = np.zeros((bh, s, d), HOST[out]), np.zeros((bh, s), np.float32)
        args = [qq, kk, vv, o, lse, s, float(np.float32(__import__("peers_triton").qk_scale(d)))]
        grid = (s // cfg["bm"], bh, 1)
        sc = q64 @ k64.transpose(0, 2, 1) / math.sqrt(d)
        if q["causal"]:
            sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
        mx = sc.max(-1, keepdims=True)
        p = np.exp(sc - mx)
        ref = (p / p.sum(-1, keepdims=True)) @ v64
        idx = 3
    prog_args = len([a for a in load_program(hsaco).args if not a.kind.startswith("hidden_")])
    args += [np.zeros(256, np.uint8)] * (prog_args - len(args))    # Triton's scratch pointers (unused)
    res = run_code_object(hsaco, grid=grid, block=(32 * warps, 1, 1), args=args, dynamic_lds=ck.metadata.shared)
    got = hostdata.decode(res.buffers[idx], out)
    err = float(np.abs(got - ref).max())
    if q["op"] == "gemm" and q["dtype"] == "i8":
        tol, what = 0.0, "exact"
    elif q["op"] == "gemm":   # f16 / bf16 products are exact in f32: only the f32 accumulation rounds,
        tol = n * 2.0 ** -23 * float(np.abs(av).max() * np.abs(bv).max())   # plus a 16-bit output's cast
        tol += UNIT.get(out, 0.0) * float(np.abs(ref).max())
        what = "K*2^-23*max|A|max|B| (f32 accumulation)" + (f" + u*max|ref| ({out} output)" if out in UNIT else "")
    else:   # P rounded to the input dtype before P V, O stored as `out`: each costs <= u*max|V|; 2x margin
        u = max(UNIT[q["dtype"]], UNIT[out])
        tol, what = 4 * u * float(np.abs(v64).max()), f"4u*max|V| (u = 2^-{-int(math.log2(u))}, {q['dtype']})"
    return {"emu_problem": emu_label(q), "emu_max_err": err, "emu_tol": tol,
            "emu_tolerance": what, "emu_ok": bool(err <= tol), "emu_wave_instr": res.stats.wave_instructions,
            "emu_s": round(time.perf_counter() - t0, 1)}


# --- ours -------------------------------------------------------------------------------------
def ours(q: dict) -> dict:
    """Our default kernel for q: static figures (cold compile) and the registry's estimate."""
    from wmma_gen.compiler import compile_mlir
    from wmma_gen.model.calibration import band_bounds
    from wmma_gen.ops import registry
    from wmma_gen.targets import get_target
    spec, arch = registry.get(q["op"]), q["arch"]
    t0 = time.perf_counter()
    if q["op"] == "gemm":
        from wmma_gen.ops.gemm.build import compile_gemm
        d = spec.directive(q["dtype"], layout="NN")
        p = spec.problem(q["m"], q["n"], q["k"], 1)
        s = spec.default_schedule(d, arch, p)
        c = compile_gemm(d, s, arch, p, cache=False).compiled
        sched = f"{s.block_m}x{s.block_n}x{s.block_k} w{s.waves_m}x{s.waves_n} ld{s.load_bits}"
    else:
        d = spec.directive(q["dtype"], q["head_dim"], causal=q["causal"])
        p = dict(batch=q["batch"], heads=q["heads"], kv_heads=q["heads"], seq_q=q["seq"], seq_k=q["seq"])
        s = spec.default_schedule(d, arch)
        c = compile_mlir(spec.build(d, s, get_target(arch))["attention"].mlir, arch, cache=False)
        sched = f"{s.block_m}x{s.block_n} w{s.waves} ld{s.load_bits}"
    sec = time.perf_counter() - t0
    e = spec.estimate_of(d, s, p, arch)
    lo, hi = band_bounds(arch, spec.family, q["dtype"], e.tflops)
    md = c.metadata
    return {**static(c.isa, md.vgpr_count, md.vgpr_spill_count, sec), "config": sched,
            "model_tflops": round(e.tflops, 1), "model_low": round(lo, 1), "model_high": round(hi, 1),
            "limiter": e.limiter}, (d, s)


def ours_emulate(q: dict, d, s) -> dict:
    """Our kernel with the same schedule at the emulator problem, through the op's own check
    (registry tolerance) on the emulator."""
    from wmma_gen.attention_common.check import check_attention
    from wmma_gen.ops.gemm.check import check_gemm
    from wmma_gen.ops.gemm.problem import GemmProblem
    if q["op"] == "gemm":
        r = check_gemm(d, s, q["arch"], GemmProblem(EMU_GEMM, EMU_GEMM, EMU_GEMM), device="emu")
    else:
        p = dict(batch=EMU_ATTN["batch"], heads=EMU_ATTN["heads"], kv_heads=EMU_ATTN["heads"],
                 seq_q=EMU_ATTN["seq"], seq_k=EMU_ATTN["seq"], head_dim=q["head_dim"])
        r = check_attention(p, dtype=q["dtype"], causal=q["causal"], arch=q["arch"], device="emu", schedule=s)
    return {"ours_emu_ok": bool(r.passed), "ours_emu_max_err": float(r.max_abs), "ours_emu_tol": float(r.tol),
            "ours_emu_source": r.source, "ours_emu_problem": emu_label(q)}


def emu_label(q: dict) -> str:
    return f"{EMU_GEMM}^3" if q["op"] == "gemm" else f"B{EMU_ATTN['batch']} H{EMU_ATTN['heads']} S{EMU_ATTN['seq']}"


def row(peers: Peers, q: dict, run_emu: bool, emu_done: dict) -> dict:
    if q["op"] == "attention_bwd":
        return peers_bwd.row(peers, q, run_emu, emu_done)
    ck, sec, cfg = peers.get(q)
    e = peer_estimate(ck, cfg, q)
    md = as_compiled(ck).metadata
    tri = {**static(ck.asm["amdgcn"], md.vgpr_count, md.vgpr_spill_count, sec),
           "config": " ".join(f"{k}={v}" for k, v in cfg.items()), "model_tflops": round(e.tflops, 1),
           "model_low": round(e.est_low, 1), "model_high": round(e.est_high, 1), "limiter": e.limiter}
    mine, (d, s) = ours(q)
    out = {"problem": label(q), "arch": q["arch"], "origin": q["origin"], **{f"triton_{k}": v for k, v in tri.items()},
           **{f"ours_{k}": v for k, v in mine.items()}, "estimate_source": "model"}
    okey = (q["arch"], q["op"], q["dtype"], q.get("head_dim"), q.get("causal"), mine["config"])
    if run_emu and okey not in emu_done:
        emu_done[okey] = ours_emulate(q, d, s)
    out.update(emu_done.get(okey, {}))
    ekey = (q["arch"], q["op"], q["dtype"], q.get("head_dim"), q.get("causal"))
    if run_emu and ekey not in emu_done:
        from wmma_gen.errors import EmulatorFault
        try:
            emu_done[ekey] = emulate(ck, cfg, q)
        except EmulatorFault as e:   # e.g. an instruction the emulator lacks: reported, not a mismatch
            emu_done[ekey] = {"emu_fault": str(e).split(" [")[0]}
    out.update(emu_done.get(ekey, {}))
    return out


def report(df: pd.DataFrame, version: str) -> str:
    L = ["# Peers side by side: Triton kernels compiled here vs ours", "",
         results_header.line("compiler output, model, emulator"), "",
         f"Triton {version} (wmma_gen state `{_state()}`), no GPU. Static columns are compiler output "
         "(VGPRs, spills, main-loop WMMA density = v_wmma per issued instruction of the steady-state loop, load "
         "widths in that loop as b<bits>x<count>, cold compile seconds on this machine, 2 shared cores). **Estimates are "
         "source=model** (our GPU-less model, calibrated; [low..high] is the calibration band): Triton's objects "
         "through model/loop_kernel.py with trips and bytes from their tiles (GEMM under the gemm family's "
         "efficiency and band), ours through the registry estimate -- the two GEMM estimates come from different "
         "model structures. Nothing here was timed on a GPU. The Triton kernels are our own Triton code "
         "(bench/peers_triton.py: tiled tl.dot GEMM, FA-2 forward and backward), not Triton's tutorial files. Backward "
         "rows: static columns are the dK/dV kernel's; the estimate adds the preprocess, dK/dV and dQ kernels.", "",
         "Emulator: each Triton object (f16, bf16, i8) ran on wmma_gen's emulator at a small problem and was "
         "compared with numpy: a float64 reference (exact integers for i8) from the exact input values -- bf16 "
         "inputs are float32 normals rounded to bf16 (RNE) and passed as uint16 bits -- and the output read back in "
         "the dtype the kernel writes (GEMM f32 / i32; attention O in the input dtype, so bf16 O carries bf16 "
         "rounding, u = 2^-8, in its tolerance). Ours: the same schedule at the same small problem through the op's "
         "own check (its stated tolerance) on the emulator. Triton backward: B1 H1 S128, O and LSE from a float64 "
         "forward, dQ/dK/dV vs the registry's float64 backward within 8u*max|ref| + 1e-3; our backward is not emulated here.", "",
         "| problem | arch | kernel | config | VGPRs | spills | loop density | global loads | LDS loads "
         "| compile s | model TFLOP/s [band] | emulator vs numpy |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.to_dict("records"):
        emu = "-"
        if isinstance(r.get("emu_fault"), str):
            emu = f"not run: emulator fault ({r['emu_fault']})"
        elif isinstance(r.get("emu_ok"), (bool, np.bool_)):
            detail = r["emu_detail"] if isinstance(r.get("emu_detail"), str) else (   # backward: per output
                f"max err {r['emu_max_err']:.2g} <= {r['emu_tol']:.2g}")
            emu = f"{'ok' if r['emu_ok'] else 'FAIL'} ({r['emu_problem']}, {detail})"
        ours_emu = "-"
        if isinstance(r.get("ours_emu_ok"), (bool, np.bool_)):
            ours_emu = (f"{'ok' if r['ours_emu_ok'] else 'FAIL'} (same schedule, {r['ours_emu_problem']}, "
                        f"max err {r['ours_emu_max_err']:.2g} <= {r['ours_emu_tol']:.2g}, the op's check)")
        for who in ("triton", "ours"):
            g = {k[len(who) + 1:]: v for k, v in r.items() if k.startswith(who + "_")}
            L.append(f"| {r['problem'] if who == 'triton' else ''} | {r['arch'] if who == 'triton' else ''} "
                     f"| {'Triton' if who == 'triton' else 'ours'} | {g['config']} | {g['vgprs']} | {g['spills']} "
                     f"| {g['density']:.3f} | {g['global_loads']} | {g['lds_loads']} | {g['compile_s']} "
                     f"| {g['model_tflops']} [{g['model_low']}..{g['model_high']}] {g['limiter']} "
                     f"| {emu if who == 'triton' else ours_emu} |")
    L += ["", "Problem origins: " + "; ".join(sorted({f"{r['problem']} on {r['arch']}: {r['origin']}"
                                                       for r in df.to_dict('records')})), ""]
    return "\n".join(L)


def _state() -> str:
    import subprocess
    try:
        return subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", choices=ARCHS, help="arch (repeatable; default all three)")
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    ap.add_argument("--no-emu", action="store_true", help="skip the emulator runs")
    ap.add_argument("--limit", type=int, default=0, help="only the first N problems (smoke runs)")
    args = ap.parse_args(argv)
    try:
        import triton
    except ImportError:
        print("bench/peers.py: Triton is not installed (pip install -e .[peers]); nothing to compare, skipped")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="wmma_gen_peers_triton_")   # cold compiles
    qs = problems(tuple(args.arch or ARCHS))
    qs = qs[:args.limit] if args.limit else qs
    peers, emu_done, rows = Peers(), {}, []
    peers.T.compile_gemm("gfx1100", "f16", bm=16, bn=16, bk=16, num_warps=1)   # Triton's one-time setup, untimed
    for i, q in enumerate(qs, 1):
        t0 = time.perf_counter()
        rows.append(row(peers, q, not args.no_emu, emu_done))
        r = rows[-1]
        print(f"[{i}/{len(qs)}] {r['problem']} {r['arch']}: Triton {r['triton_model_tflops']} / ours "
              f"{r['ours_model_tflops']} TFLOP/s (model); density {r['triton_density']} / {r['ours_density']}; "
              f"spills {r['triton_spills']} / {r['ours_spills']}; emulator {r.get('emu_ok', r.get('emu_fault', '-'))} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    df = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out / "peers.csv", index=False)
    (args.out / "peers.md").write_text(report(df, triton.__version__))
    bad = [r["problem"] + " " + r["arch"] for r in rows if r.get("emu_ok") is False or r.get("ours_emu_ok") is False]
    faults = sorted({f"{r['arch']} {r['problem'].split()[0]}: {r['emu_fault']}" for r in rows if r.get("emu_fault")})
    print(f"wrote {args.out / 'peers.md'}, .csv; emulator mismatches: {bad or 'none'}; "
          f"not run (emulator faults): {faults or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
