"""Main-loop quality of the GEMM schedules under every installed MLIR provider, side by side,
read from the compiled ISA (no GPU).

Rows: the fitted default schedule (defaults.fitted_default) for every WMMA dtype/accumulator
of gfx1100, gfx1151 and gfx1201 in the four layouts NN, NT, TN, TT at 4096^3, plus two fixed
f16 reference schedules. Per row and provider: VGPRs, spills, LDS bytes, main-loop
instructions, v_wmma, v_wmma per loop instruction and per issued instruction (without
s_delay_alu/s_wait_alu hints), the loop's instruction mix. Two MLIR native libraries cannot
share a process, so each provider compiles in its own interpreter (this file with --worker,
WMMA_GEN_MLIR_PROVIDER set); the parent joins the rows. Source of every figure: compiler
output, static analysis. Writes results/gemm_static_quality.{csv,md}.

    python bench/gemm_static_quality.py [--arch gfx1201 ...] [--dtype f16 ...] [--providers mlir flydsl]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from provider_workers import installed, run_workers  # noqa: E402
import results_header  # noqa: E402
from md_table import markdown_table  # noqa: E402
ARCHS = ("gfx1100", "gfx1151", "gfx1201")
LAYOUTS = ("NN", "NT", "TN", "TT")
DEFAULT = "default"
FIXED = ("128x128x32 2x2 double-buffered", "256x128x32 4x2 k_unroll2")
KEY = ["schedule", "arch", "dtype", "acc", "layout"]


def _fixed(name: str):
    from wmma_gen.ops.gemm.defaults import LARGE
    from wmma_gen.ops.gemm.schedule import Schedule
    if name == FIXED[0]:
        return Schedule(block_m=128, block_n=128, block_k=32, lds="ab", buffers=2, lds_pad=8)
    return LARGE.replace(block_m=256, block_n=128, waves_m=4, waves_n=2)


def cases(archs, dtypes) -> list[dict]:
    from wmma_gen.targets import get_target
    out = []
    for arch in archs:
        for dt, acc in get_target(arch).wmma:
            if dtypes and dt not in dtypes:
                continue
            out += [dict(schedule=DEFAULT, arch=arch, dtype=dt, acc=acc, layout=lay) for lay in LAYOUTS]
        if not dtypes or "f16" in dtypes:
            out += [dict(schedule=f, arch=arch, dtype="f16", acc="f32", layout=lay) for f in FIXED for lay in ("NN", "NT")]
    return out


def measure(case: dict) -> dict:
    """Compile one case with the loaded provider; its figures from the code object."""
    from wmma_gen.model.isa_loop import find_main_loop
    from wmma_gen.ops.gemm.build import compile_gemm
    from wmma_gen.ops.gemm.defaults import fitted_default
    from wmma_gen.ops.gemm.directive import GemmDirective
    from wmma_gen.ops.gemm.problem import GemmProblem
    from wmma_gen.targets import get_target
    d, p = GemmDirective(case["dtype"], acc=case["acc"], layout=case["layout"]), GemmProblem(4096, 4096, 4096)
    s = fitted_default(d, get_target(case["arch"]), p) if case["schedule"] == DEFAULT else _fixed(case["schedule"])
    k = compile_gemm(d, s, case["arch"], p).compiled
    loop = find_main_loop(k.isa)
    return {**case, "tile": f"{s.block_m}x{s.block_n}x{s.block_k} w{s.waves_m}x{s.waves_n} u{s.k_unroll}",
            "vgprs": k.metadata.vgpr_count, "spills": k.metadata.spills, "lds_bytes": k.metadata.lds_bytes,
            "loop_instructions": len(loop.ops), "loop_issued": loop.issued, "v_wmma": loop.wmma,
            "wmma_per_instruction": round(loop.wmma / max(1, len(loop.ops)), 3),
            "wmma_per_issued": round(loop.wmma / max(1, loop.issued), 3),
            "valu": loop.count("valu"), "salu": loop.count("salu"), "waitcnt": loop.count("waitcnt"),
            "global_loads": loop.count("vmem_load"), "ds_reads": loop.count("ds_read"),
            "ds_writes": loop.count("ds_write"), "global_load_widths": str(loop.widths("vmem_load")),
            "ds_read_widths": str(loop.widths("ds_read"))}


def worker(archs, dtypes) -> None:
    from wmma_gen.compiler import mlir_api
    ident = mlir_api.provider().identity
    for c in cases(archs, dtypes):
        print(json.dumps({**measure(c), "provider": mlir_api.NAME, "identity": ident}), flush=True)


def run_providers(providers, archs, dtypes) -> pd.DataFrame:
    """One worker per provider (in parallel, bench/provider_workers.py); their rows."""
    args = ["--arch", *archs] + (["--dtype", *dtypes] if dtypes else [])
    rows = run_workers(__file__, {p: (p, args) for p in providers})
    return pd.DataFrame([r for p in providers for r in rows[p]])


def side_by_side(df: pd.DataFrame, providers) -> pd.DataFrame:
    cols = ["vgprs", "spills", "loop_instructions", "loop_issued", "valu", "waitcnt", "wmma_per_issued"]
    wide = None
    for p in providers:
        part = df[df.provider == p].set_index(KEY)[["tile"] + cols]
        part = part.rename(columns={c: f"{c} {p}" for c in cols})
        wide = part if wide is None else wide.join(part.drop(columns="tile"), how="outer")
    if len(providers) == 2:
        a, b = providers
        wide[f"density {b}/{a}"] = (wide[f"wmma_per_issued {b}"] / wide[f"wmma_per_issued {a}"]).round(3)
    return wide.reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=list(ARCHS))
    ap.add_argument("--dtype", nargs="+", default=[])
    ap.add_argument("--providers", nargs="+", default=None, help="default: every installed one")
    ap.add_argument("--out", default=str(ROOT / "results"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.arch, a.dtype)
    providers = a.providers or installed()
    df = run_providers(providers, a.arch, a.dtype)
    wide = side_by_side(df, providers)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "gemm_static_quality.csv", index=False)
    idents = ", ".join(f"`{p}` = {df[df.provider == p].identity.iloc[0]}" for p in providers)
    md = ("# GEMM main-loop quality, providers side by side\n\n"
          + results_header.line("compiler output", idents) + "\n\n"
          "Static analysis (no GPU).\n\n" + markdown_table(wide))
    (out / "gemm_static_quality.md").write_text(md)
    pd.set_option("display.width", 250)
    print(wide.to_string(index=False))
    dflt = df[df.schedule == DEFAULT]
    for p in providers:
        x = dflt[dflt.provider == p]
        print(f"{p}: default schedules {len(x)}, max spills {x.spills.max()}, "
              f"min v_wmma/issued {x.wmma_per_issued.min()}")
    if len(providers) == 2:
        r = wide[wide.schedule == DEFAULT][f"density {providers[1]}/{providers[0]}"]
        print(f"default density {providers[1]}/{providers[0]}: min {r.min()}, max {r.max()}")
    print(f"wrote {out / 'gemm_static_quality.csv'} and {out / 'gemm_static_quality.md'}")


if __name__ == "__main__":
    main()
