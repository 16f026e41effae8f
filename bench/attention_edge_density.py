"""Attention forward main-loop density with its edge-mask block counted (issue 38 item 4).

The forward's steady-state loop (model/isa_loop.find_main_loop) has a second path: after the body's
back-edge comes a block of v_cmp / s_and / v_cndmask that masks the S tile and branches back to the
loop head itself (LoopStats.edge). Key tiles that cross seq_k (a length not a multiple of BLOCK_N) or
the causal diagonal run it on top of the body. The density figures the docs quote (v_wmma per issued
instruction) count the body only; this prints, for our default forward on the calibration and peers
problems, the body's density, the edge block's length, an edge trip's density and the density over
all trips of the problem (trip-weighted: edge trips are the key tiles the mask band cuts, counted
from the problem exactly as ops/attention/model.key_tile_trips counts trips; assumption: the kernel
takes the edge path on exactly those tiles). Source: compiler output, static (no GPU).

    python bench/attention_edge_density.py [--arch gfx1100 ...]  ->  results/attention_edge_density.{md,csv}
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))       # this checkout's wmma_gen

from wmma_gen.model.attention_band import key_span  # noqa: E402
from wmma_gen.model.isa_loop import find_main_loop  # noqa: E402
from wmma_gen.ops import registry  # noqa: E402
from wmma_gen.ops.compile_op import compile_op  # noqa: E402

import results_header  # noqa: E402  (bench/: the provenance line)

ARCHS = ("gfx1100", "gfx1151", "gfx1201")
# (head_dim, causal, batch, heads, seq): the calibration points' forward problems (tutorial 06: d64
# S16384 H8; AITER prefill: d128 S4096 H16) and a length that is no multiple of any tile
PROBLEMS = ((64, False, 1, 8, 16384), (64, True, 1, 8, 16384), (128, False, 1, 16, 4096), (128, True, 1, 16, 4096),
            (64, True, 1, 8, 1000))


def trips(s, seq: int, causal: bool) -> tuple[int, int]:
    """(key-tile trips, of which edge trips) per head: tiles crossing seq_k or the causal diagonal."""
    total = edge = 0
    for i0 in range(0, seq, s.block_m):
        i1 = min(seq, i0 + s.block_m)
        lo, hi = key_span(i0, i1, seq, seq, causal, -1, -1)
        for k0 in range((lo // s.block_n) * s.block_n, hi, s.block_n):
            total += 1
            edge += (k0 + s.block_n > seq) or (causal and k0 + s.block_n - 1 > i0)
    return total, edge


def rows(arch: str) -> list[dict]:
    from wmma_gen.compiler import mlir_api
    spec = registry.get("attention")
    out = []
    for dim, causal, batch, heads, seq in PROBLEMS:
        d = spec.directive("bf16" if arch == "gfx1201" and dim == 128 else "f16", dim, causal=causal)
        p = spec.problem_from(dict(batch=batch, heads=heads, kv_heads=heads, seq_q=seq, seq_k=seq))
        s = spec.default_schedule(d, arch, p)
        cs = compile_op(spec, d, s, spec.key_of(d, s, p), arch)
        L = find_main_loop(cs.compiled[0][1].isa)
        t, e = trips(s, seq, causal)
        out.append({"arch": arch, "dtype": d.dtype, "head_dim": dim, "causal": causal, "seq": seq,
                    "schedule": f"{s.block_m}x{s.block_n} w{s.waves}", "loop_wmma": L.wmma, "loop_issued": L.issued,
                    "edge_issued": L.edge_issued, "density_body": round(L.density(), 3),
                    "density_edge_trip": round(L.density(1.0), 3), "trips": t, "edge_trips": e,
                    "density_all_trips": round(L.density(e / t if t else 0.0), 3), "provider": mlir_api.NAME,
                    "versions": mlir_api.provider().identity})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=list(ARCHS), choices=ARCHS)
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    a = ap.parse_args(argv)
    df = pd.DataFrame([r for arch in a.arch for r in rows(arch)])
    a.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out / "attention_edge_density.csv", index=False)
    cols = ["arch", "dtype", "head_dim", "causal", "seq", "schedule", "loop_wmma", "loop_issued", "edge_issued",
            "density_body", "density_edge_trip", "trips", "edge_trips", "density_all_trips"]
    table = "\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
                      + ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in df.to_dict("records")])
    text = ("# Attention forward density with the edge-mask block\n\n"
            + results_header.line("compiler output", df.versions.iloc[0]) + "\n\n"
            f"Provider {df.provider.iloc[0]}, the default; static analysis (no GPU). Our default forward (registry default_schedule) per problem, "
            "trips per head. density_body = v_wmma / issued instructions of the loop body (the figure quoted before); "
            "density_edge_trip = a trip that also runs the edge-mask block; density_all_trips = over every trip, "
            "edge trips being the key tiles that cross seq_k or the causal diagonal (bench docstring).\n\n"
            + table + "\n")
    (a.out / "attention_edge_density.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
