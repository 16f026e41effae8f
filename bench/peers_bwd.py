"""Peers, backward half (issue #17 item 4): the Triton FA-2 backward of bench/peers_triton.py
(preprocess delta = rowsum(dO*O), a dK/dV kernel and a dQ kernel; our own Triton code) compiled
offline for each arch, estimated by our model and run on the emulator. bench/peers.py calls
`problems`, `compile_bwd`, `estimate` and `row` for its attention_bwd rows; bench/calibrate.py
calls `compile_bwd` and `estimate` for the backward points' Triton cross-check column.

    estimate (source=model)  the three kernels one by one through model/loop_kernel.py ("loop"
                             family efficiency and band) and added, as our own backward's model
                             does (ops/attention_bwd/model.py): trips = visible (query tile,
                             key tile) pairs; each dK/dV trip reads Q and dO twice (as [BM, D] and
                             as [D, BM]), each dQ trip reads K twice and V once
    emulator                 B1 H1 S128 d64: O and LSE from a float64 forward (O stored as f16),
                             dQ, dK, dV against the registry's float64 attention_backward
"""
from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np

from peers_common import as_compiled, label, operand, static

TILE = dict(bm=32, bn=64, num_warps=8)   # BM queries x BN keys; 64x64 with 4 or 8 warps spills on gfx11
EMU = dict(batch=1, heads=1, seq=128)
UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
TOLERANCE = "8u*max|ref| + 1e-3 per output (the registry's attention_bwd tolerance)"


def problems(archs) -> list[dict]:
    """The backward calibration points' problems on every arch (origin: the point, or its problem)."""
    from wmma_gen.ops.calibration_points import load_points
    out = []
    for p in load_points():
        if p.op != "attention_bwd":
            continue
        c = p.config
        out += [dict(op="attention_bwd", arch=a, dtype=p.dtype, batch=c["batch"], heads=c["heads"], seq=c["seq"],
                     head_dim=c["head_dim"], causal=bool(c["causal"]),
                     origin=f"point {p.id}" if a == p.arch else f"point {p.id}'s problem") for a in archs]
    return out


def compile_bwd(q: dict):
    """({"pre", "dkdv", "dq"}: CompiledKernel, compile seconds, tile config)."""
    from peers_triton import compile_attention_bwd
    cks, sec = compile_attention_bwd(q["arch"], q["dtype"], q["head_dim"], causal=q["causal"], **TILE, num_stages=1)
    return cks, sec, dict(TILE)


def estimate(cks: dict, cfg: dict, q: dict):
    """Our model on the three Triton objects under the active calibration (source=model)."""
    from wmma_gen.model.loop_kernel import estimate_loop_kernel
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.attention_common.reference import attention_flops
    from wmma_gen.ops.attention_bwd.model import visible_tile_pairs
    from wmma_gen.targets import get_target
    t, esize, bm, bn = get_target(q["arch"]), 2, cfg["bm"], cfg["bn"]
    b, h, s, d, causal = q["batch"], q["heads"], q["seq"], q["head_dim"], q["causal"]
    p = dict(batch=b, heads=h, kv_heads=h, seq_q=s, seq_k=s)
    pairs = visible_tile_pairs(AttentionDirective(q["dtype"], d, causal=causal, op="attention_bwd"), p, bm, bn) * b * h
    fwd, flops = attention_flops(b, h, s, s, d, causal), attention_flops(b, h, s, s, d, causal, backward=True)
    rows = b * h * s * d * esize
    kw = dict(t=t, dtype=q["dtype"])
    parts = {
        "pre": estimate_loop_kernel(as_compiled(cks["pre"]), **kw, total_trips=0, workgroups=-(-b * h * s // bm),
                                    l2_bytes=2 * rows, compulsory_bytes=2 * rows + 4 * b * h * s, flops=0.0),
        "dkdv": estimate_loop_kernel(as_compiled(cks["dkdv"]), **kw, total_trips=pairs, workgroups=b * h * -(-s // bn),
                                     l2_bytes=pairs * 4 * bm * d * esize + 2 * rows,
                                     compulsory_bytes=4 * rows + 8 * b * h * s, flops=fwd * 1.5),
        "dq": estimate_loop_kernel(as_compiled(cks["dq"]), **kw, total_trips=pairs, workgroups=b * h * -(-s // bm),
                                   l2_bytes=pairs * 3 * bn * d * esize + 2 * rows,
                                   compulsory_bytes=5 * rows + 8 * b * h * s, flops=fwd * 1.0)}
    seconds = sum(e.seconds for e in parts.values())
    tflops = flops / seconds / 1e12
    worst = max(parts, key=lambda n: parts[n].seconds)
    band = parts["dkdv"].est_low / parts["dkdv"].tflops, parts["dkdv"].est_high / parts["dkdv"].tflops
    return SimpleNamespace(tflops=tflops, est_low=tflops * band[0], est_high=tflops * band[1], seconds=seconds,
                           limiter=f"{worst}:{parts[worst].limiter}", source="model", parts=parts)


def _run(ck, grid, args):
    from wmma_gen.emu.api import load_program, run_code_object
    explicit = [a for a in load_program(ck.asm["hsaco"]).args if not a.kind.startswith("hidden_")]
    args = args + [np.zeros(256, np.uint8)] * (len(explicit) - len(args))     # Triton's scratch pointers
    return run_code_object(ck.asm["hsaco"], grid=grid, block=(32 * ck.metadata.num_warps, 1, 1), args=args,
                           dynamic_lds=ck.metadata.shared)


def emulate(cks: dict, cfg: dict, q: dict, seed: int = 0) -> dict:
    """The three objects on the emulator at EMU (B*H rows, S, D) vs the float64 reference backward."""
    from peers_triton import qk_scale
    from wmma_gen.attention_common.reference import attention_backward
    bh, s, d, dt, causal = EMU["batch"] * EMU["heads"], EMU["seq"], q["head_dim"], q["dtype"], q["causal"]
    if dt != "f16":
        raise ValueError(f"dtype={dt!r} is not allowed here: f16 (O is stored as float16 for the backward's input)")
    rng = np.random.default_rng(seed)
    (qq, q64), (kk, k64), (vv, v64), (do, do64) = (operand(rng, (bh, s, d), dt) for _ in range(4))
    sc = q64 @ k64.transpose(0, 2, 1) / math.sqrt(d)
    if causal:
        sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
    m = sc.max(-1, keepdims=True)
    p = np.exp(sc - m)
    o = ((p / p.sum(-1, keepdims=True)) @ v64).astype(np.float16)        # the forward's stored O (f16)
    lse = (m[..., 0] + np.log(p.sum(-1))).astype(np.float32)
    t0, wave_instr = time.perf_counter(), 0
    r = _run(cks["pre"], (bh * s // cfg["bm"], 1, 1), [o, do, np.zeros((bh, s), np.float32)])
    delta, wave_instr = r.buffers[2], wave_instr + r.stats.wave_instructions
    sq = float(np.float32(qk_scale(d)))
    z = [np.zeros((bh, s, d), np.float16) for _ in range(3)]
    r = _run(cks["dkdv"], (s // cfg["bn"], bh, 1), [qq, kk, vv, do, lse, delta, z[0], z[1], s, sq])
    dk, dv, wave_instr = r.buffers[6], r.buffers[7], wave_instr + r.stats.wave_instructions
    r = _run(cks["dq"], (s // cfg["bm"], bh, 1), [qq, kk, vv, do, lse, delta, z[2], s, sq])
    dq, wave_instr = r.buffers[6], wave_instr + r.stats.wave_instructions
    refs = attention_backward(*(x[None] for x in (q64, k64, v64, o.astype(np.float64), do64, lse)),
                              causal=causal, layout="bhsd")
    errs = {}
    for name, got, ref in zip(("dq", "dk", "dv"), (dq, dk, dv), refs):
        ref = ref.reshape(got.shape)
        errs[name] = (float(np.abs(got.astype(np.float64) - ref).max()), 8 * UNIT[dt] * float(np.abs(ref).max()) + 1e-3)
    worst = max(errs, key=lambda n: errs[n][0] / errs[n][1])
    return {"emu_problem": f"B{EMU['batch']} H{EMU['heads']} S{s}", "emu_max_err": errs[worst][0],
            "emu_tol": errs[worst][1], "emu_worst": worst, "emu_tolerance": TOLERANCE,
            "emu_detail": ", ".join(f"{n} {e:.2g}<={t:.2g}" for n, (e, t) in errs.items()),
            "emu_ok": all(e <= t for e, t in errs.values()), "emu_wave_instr": wave_instr,
            "emu_s": round(time.perf_counter() - t0, 1)}


def ours(q: dict) -> dict:
    """Our default backward: static figures of its dK/dV kernel (cold compile) and the registry estimate."""
    from wmma_gen.compiler import compile_mlir
    from wmma_gen.model.calibration import band_bounds
    from wmma_gen.ops import registry
    from wmma_gen.ops.attention_bwd.build import build_backward, make_spec
    spec, arch = registry.get("attention_bwd"), q["arch"]
    d = spec.directive(q["dtype"], q["head_dim"], causal=q["causal"], op="attention_bwd")
    s = spec.default_schedule(d, arch)
    t0 = time.perf_counter()
    srcs = build_backward(make_spec(arch, q["dtype"], q["head_dim"], causal=q["causal"]), s)
    c = {n: compile_mlir(src.mlir, arch, cache=False) for n, src in srcs.items()}
    sec = time.perf_counter() - t0
    p = dict(batch=q["batch"], heads=q["heads"], kv_heads=q["heads"], seq_q=q["seq"], seq_k=q["seq"])
    e = spec.estimate_of(d, s, p, arch)
    lo, hi = band_bounds(arch, spec.family, q["dtype"], e.tflops)
    md = c["dkdv"].metadata
    return {**static(c["dkdv"].isa, md.vgpr_count, md.vgpr_spill_count, sec),
            "config": f"dkdv {s.block_m}x{s.block_n} dq {s.dq_block_m}x{s.dq_block_n} (static: dK/dV)",
            "model_tflops": round(e.tflops, 1), "model_low": round(lo, 1), "model_high": round(hi, 1),
            "limiter": e.limiter}


def row(peers, q: dict, run_emu: bool, emu_done: dict) -> dict:
    """One bench/peers.py row for an attention_bwd problem (Triton static figures: its dK/dV kernel)."""
    cks, sec, cfg = peers.get(q)
    e = estimate(cks, cfg, q)
    md = as_compiled(cks["dkdv"]).metadata
    tri = {**static(cks["dkdv"].asm["amdgcn"], md.vgpr_count, md.vgpr_spill_count, sec),
           "config": " ".join(f"{k}={v}" for k, v in cfg.items()) + " (static: dK/dV)",
           "model_tflops": round(e.tflops, 1), "model_low": round(e.est_low, 1), "model_high": round(e.est_high, 1),
           "limiter": e.limiter}
    out = {"problem": label(q), "arch": q["arch"], "origin": q["origin"], **{f"triton_{k}": v for k, v in tri.items()},
           **{f"ours_{k}": v for k, v in ours(q).items()}, "estimate_source": "model"}
    ekey = (q["arch"], q["op"], q["dtype"], q["head_dim"], q["causal"])
    if run_emu and ekey not in emu_done:
        emu_done[ekey] = emulate(cks, cfg, q)
    out.update(emu_done.get(ekey, {}))
    return out
