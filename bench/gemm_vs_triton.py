"""gfx1100 16-bit GEMM at 4096^3 against Triton's best mask-free config, all four layouts (issue 28
item 2), by main-loop density: v_wmma per issued instruction (model/isa_loop.find_main_loop).

    Triton   bench/peers_triton.gemm_kernel compiled for the arch (no GPU) over CONFIGS, every
             tile dividing 4096 (no masks); "best" = the highest density without spills.
    ours     the built-in default (defaults.fitted_default) and what users get at 4096^3: the
             shipped tuned schedule (ops/gemm/lookup, wmma_gen/schedules/<arch>-gemm-<dtype>.json)
             or, where none is shipped, the default. Under every installed MLIR provider, each
             in its own interpreter (two MLIR native libraries cannot share a process).

Source of every figure: compiler output, static analysis (no GPU). Writes
results/gemm_vs_triton.{csv,md}.

    python bench/gemm_vs_triton.py [--arch gfx1100] [--dtype f16 bf16] [--layout NN ...] [--quick]
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from provider_workers import installed, run_workers  # noqa: E402
from peers_common import static  # noqa: E402
from md_table import markdown_table  # noqa: E402
import results_header  # noqa: E402

SIZE = 4096
LAYOUTS = ("NN", "NT", "TN", "TT")
# Triton tiles dividing 4096 (mask-free): (BM, BN) x BK x num_warps, num_stages 2 (Triton's AMD
# stream pipeliner: global loads of the next K tile overlap the current tile's dots)
TILES = ((64, 64), (64, 128), (128, 64), (128, 128), (128, 256), (256, 128))
CONFIGS = [dict(bm=bm, bn=bn, bk=bk, num_warps=w, num_stages=2, group_m=8)
           for (bm, bn), bk, w in itertools.product(TILES, (32, 64), (4, 8))]
QUICK = [c for c in CONFIGS if c["bk"] == 32 and c["num_warps"] == 8]


# --- ours (worker: one provider per interpreter) --------------------------------------------
def ours_rows(arch: str, dtypes, layouts) -> list[dict]:
    from wmma_gen.compiler import mlir_api
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.defaults import fitted_default
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.lookup import lookup_entry
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.targets import get_target
    rows = []
    p = GemmProblem(SIZE, SIZE, SIZE)
    for dtype, layout in itertools.product(dtypes, layouts):
        d = GemmDirective(dtype, acc="f32", layout=layout)
        entry = lookup_entry(arch, d, p)
        kinds = [("default", fitted_default(d, get_target(arch), p), "defaults.fitted_default")]
        if entry is not None:
            b, lay = entry.problem, entry.directive.layout
            kinds.append(("shipped", entry.schedule,
                          f"{Path(entry.path).name} bucket {b.m}x{b.n}x{b.k} {lay} ({entry.source})"))
        for kind, s, origin in kinds:
            k = compile_gemm(d, s, arch, p).compiled
            rows.append({"arch": arch, "dtype": dtype, "layout": layout, "kernel": f"ours {kind}",
                         "config": f"{s.block_m}x{s.block_n}x{s.block_k} w{s.waves_m}x{s.waves_n} u{s.k_unroll} "
                                   f"lb{s.load_bits}", "origin": origin,
                         **static(k.isa, k.metadata.vgpr_count, k.metadata.spills, 0.0),
                         "provider": mlir_api.NAME, "versions": mlir_api.provider().identity})
    return rows


def run_ours(providers, arch, dtypes, layouts) -> list[dict]:
    args = ["--arch", arch, "--dtype", *dtypes, "--layout", *layouts]
    rows = run_workers(__file__, {p: (p, args) for p in providers})
    return [r for p in providers for r in rows[p]]


# --- Triton -----------------------------------------------------------------------------------
def triton_rows(arch: str, dtypes, layouts, configs) -> list[dict]:
    import peers_triton as T
    from peers_common import as_compiled
    rows = []
    for dtype, layout, cfg in itertools.product(dtypes, layouts, configs):
        ck, sec = T.compile_gemm(arch, dtype, layout=layout, **cfg)
        md = as_compiled(ck).metadata
        rows.append({"arch": arch, "dtype": dtype, "layout": layout, "kernel": "triton",
                     "config": f"{cfg['bm']}x{cfg['bn']}x{cfg['bk']} w{cfg['num_warps']} s{cfg['num_stages']}",
                     "origin": "bench/peers_triton.gemm_kernel",
                     **static(ck.asm["amdgcn"], md.vgpr_count, md.vgpr_spill_count, sec),
                     "provider": "triton", "versions": f"triton=={T.version()}"})
    return rows


def reused_triton(path: Path, arch: str, dtypes, layouts) -> pd.DataFrame:
    """The Triton rows of an earlier run's csv, refused unless the installed Triton compiled them and
    they cover every requested (dtype, layout)."""
    import peers_triton as T
    old = pd.read_csv(path)
    tri = old[(old.kernel == "triton") & (old.arch == arch) & old.dtype.isin(dtypes) & old.layout.isin(layouts)]
    want = f"triton=={T.version()}"
    if not len(tri) or set(tri.versions) != {want}:
        raise SystemExit(f"--triton-from {path}: its Triton rows were compiled by {sorted(set(tri.versions))}, "
                         f"not the installed {want}; run without --triton-from")
    missing = sorted(set(itertools.product(dtypes, layouts)) - set(zip(tri.dtype, tri.layout)))
    if missing:
        raise SystemExit(f"--triton-from {path}: no Triton rows for {missing}; run without --triton-from")
    return tri.reset_index(drop=True)


def best_triton(tri: pd.DataFrame) -> pd.DataFrame:
    ok = tri[tri.spills == 0]
    return ok.loc[ok.groupby(["dtype", "layout"]).density.idxmax()]


def comparison(best: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """One row per (dtype, layout, our kernel, provider): our density over Triton's best."""
    b = best.set_index(["dtype", "layout"])
    out = []
    for r in ours.itertuples(index=False):
        t = b.loc[(r.dtype, r.layout)]
        out.append({"dtype": r.dtype, "layout": r.layout, "ours": r.kernel, "provider": r.provider,
                    "our config": r.config, "our density": r.density, "our spills": r.spills,
                    "triton best config": t.config, "triton density": t.density,
                    "ours / triton": round(r.density / t.density, 3)})
    return pd.DataFrame(out).sort_values(["dtype", "layout", "ours", "provider"])


def shipped_note(ours: pd.DataFrame, dtypes) -> str:
    """Where each 'ours shipped' row comes from; dtypes without a shipped schedule run the default."""
    shipped = ours[ours.kernel == "ours shipped"]
    lines = [f"- {dt} {lay}: {origin}" for (dt, lay), origin in
             shipped.groupby(["dtype", "layout"]).origin.first().items()]
    have = set(zip(shipped.dtype, shipped.layout))
    lines += [f"- {dt} {lay}: no shipped entry for this layout, users get the default"
              for dt, lay in sorted(set(zip(ours.dtype, ours.layout)) - have) if dt in set(shipped.dtype)]
    lines += [f"- {dt}: no shipped schedule, users get the default" for dt in dtypes if dt not in set(shipped.dtype)]
    return "\nShipped tuned schedules (ops/gemm/lookup at 4096^3):\n\n" + "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="gfx1100")
    ap.add_argument("--dtype", nargs="+", default=["f16", "bf16"])
    ap.add_argument("--layout", nargs="+", default=list(LAYOUTS))
    ap.add_argument("--providers", nargs="+", default=None, help="default: every installed one")
    ap.add_argument("--quick", action="store_true", help=f"Triton configs with BK 32, 8 warps only ({len(QUICK)})")
    ap.add_argument("--out", default=str(ROOT / "results"))
    ap.add_argument("--triton-from", type=Path, default=None,
                    help="reuse the Triton rows of an earlier gemm_vs_triton.csv compiled by the installed Triton "
                         "(they do not depend on wmma_gen); ours are always recompiled")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    for lay in a.layout:
        if lay not in LAYOUTS:
            raise SystemExit(f"--layout {lay}: one of {', '.join(LAYOUTS)}")
    if a.worker:
        for row in ours_rows(a.arch, a.dtype, a.layout):
            print(json.dumps(row), flush=True)
        return
    providers = a.providers or installed()
    ours = pd.DataFrame(run_ours(providers, a.arch, a.dtype, a.layout))
    tri = (reused_triton(a.triton_from, a.arch, a.dtype, a.layout) if a.triton_from
           else pd.DataFrame(triton_rows(a.arch, a.dtype, a.layout, QUICK if a.quick else CONFIGS)))
    best = best_triton(tri)
    table = comparison(best, ours)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.concat([ours, tri]).to_csv(out / "gemm_vs_triton.csv", index=False)
    idents = ", ".join(f"`{p}` = {ours[ours.provider == p].versions.iloc[0]}" for p in providers)
    md = (f"# {a.arch} GEMM at {SIZE}^3 vs Triton's best mask-free config\n\n"
          + results_header.line("compiler output", idents) + "\n\n"
          f"{tri.versions.iloc[0]} ({len(tri) // len(best)} configs per "
          f"dtype and layout, best = highest density without spills). Density: main-loop "
          f"v_wmma per issued instruction; static analysis (no GPU).\n\n"
          + markdown_table(table) + shipped_note(ours, a.dtype) + "\n## Triton, every config\n\n"
          + markdown_table(tri[["dtype", "layout", "config", "vgprs", "spills", "loop_wmma", "loop_issued", "density"]]
                     .sort_values(["dtype", "layout", "density"], ascending=[True, True, False])))
    (out / "gemm_vs_triton.md").write_text(md)
    pd.set_option("display.width", 250)
    print(table.to_string(index=False))
    print(f"wrote {out / 'gemm_vs_triton.csv'} and {out / 'gemm_vs_triton.md'}")


if __name__ == "__main__":
    main()
