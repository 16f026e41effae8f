"""Main-loop quality of the attention default kernels under every installed MLIR provider, side
by side, read from the compiled ISA (no GPU).

Rows: forward (ops/attention/defaults.py) and backward pre-pass, dK/dV and dQ
(ops/attention_bwd/defaults.py) default kernels, head dim 64 and 128, f16 and bf16, causal or
not, on gfx1100, gfx1151 and gfx1201. Per row and variant: VGPRs, spills, main-loop issued
instructions (s_delay_alu/s_wait_alu hints not counted), v_wmma and density (v_wmma per issued
main-loop instruction, model/isa_loop.find_main_loop). A variant is a provider, optionally
with #rocdl.target features for that run (`flydsl:-real-true16`; kernels/module.FEATURES_BY_LLVM
is what the builders use otherwise). Two MLIR native libraries cannot share a process, so each
variant compiles in its own interpreter (this file with --worker); the parent joins the rows.
Source of every figure: compiler output, static analysis. Writes
results/attention_provider_quality.{csv,md}.

    python bench/attention_provider_quality.py [--arch gfx1201 ...] [--dtype f16 ...] [--variants mlir flydsl]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from provider_workers import PROVIDERS, installed, run_workers  # noqa: E402
import results_header  # noqa: E402
from md_table import markdown_table  # noqa: E402
ARCHS = ("gfx1100", "gfx1151", "gfx1201")
HEAD_DIMS = (64, 128)
KEY = ["arch", "dtype", "head_dim", "causal", "kernel"]
FIGURES = ["vgprs", "spills", "loop_issued", "v_wmma", "density"]


def _figures(ck) -> dict:
    from wmma_gen.model.isa_loop import find_main_loop
    loop = find_main_loop(ck.isa)
    return {"vgprs": ck.metadata.vgpr_count, "spills": ck.metadata.spills, "loop_issued": loop.issued,
            "v_wmma": loop.wmma, "density": round(loop.wmma / loop.issued, 3) if loop.wmma else 0.0}


def measure(arch: str, dtype: str, hd: int, causal: bool) -> list[dict]:
    """Forward and backward default kernels of one case, compiled by the loaded provider (the
    content cache is keyed by the MLIR text, so target features never reuse another's object)."""
    from wmma_gen.compiler import compile_mlir
    from wmma_gen.ops import registry
    from wmma_gen.ops.attention.defaults import default_schedule
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.attention.kernel import build_attention
    from wmma_gen.ops.attention_bwd.build import build_backward, make_spec
    from wmma_gen.targets import get_target
    t = get_target(arch)
    case = dict(arch=arch, dtype=dtype, head_dim=hd, causal=causal)
    d = AttentionDirective(dtype, hd, causal=causal)
    fwd = compile_mlir(build_attention(d, default_schedule(t, d), t).mlir, arch)
    rows = [{**case, "kernel": "forward", **_figures(fwd)}]
    db = AttentionDirective(dtype, hd, causal=causal, op="attention_bwd")
    s = registry.get("attention_bwd").default_schedule(db, arch)
    for name, src in build_backward(make_spec(arch, dtype, hd, causal=causal), s).items():
        rows.append({**case, "kernel": name, **_figures(compile_mlir(src.mlir, arch))})
    return rows


def worker(archs, dtypes, features: str | None) -> None:
    from wmma_gen.compiler import mlir_api
    from wmma_gen.kernels import module
    if features is not None:
        module.FEATURES_BY_LLVM[module.llvm_major()] = features
    ident = mlir_api.provider().identity
    for arch in archs:
        for dt in dtypes:
            for hd in HEAD_DIMS:
                for causal in (False, True):
                    for r in measure(arch, dt, hd, causal):
                        print(json.dumps({**r, "identity": ident}), flush=True)


def run_variants(variants, archs, dtypes) -> pd.DataFrame:
    """One worker per variant (in parallel, bench/provider_workers.py); their rows, labelled by variant."""
    jobs = {}
    for v in variants:
        prov, _, feats = v.partition(":")
        args = ["--arch", *archs, "--dtype", *dtypes]
        jobs[v] = (prov, args + ([f"--target-features={feats}"] if ":" in v else []))  # "=": value starts with "-"
    rows = run_workers(__file__, jobs)
    return pd.DataFrame([{**r, "variant": v} for v in variants for r in rows[v]])


def side_by_side(df: pd.DataFrame, variants) -> pd.DataFrame:
    wide = None
    for v in variants:
        part = df[df.variant == v].set_index(KEY)[FIGURES].rename(columns={c: f"{c} {v}" for c in FIGURES})
        wide = part if wide is None else wide.join(part, how="outer")
    for v in variants[1:]:
        wide[f"density {v}/{variants[0]}"] = (wide[f"density {v}"] / wide[f"density {variants[0]}"]).round(3)
    return wide.reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=list(ARCHS))
    ap.add_argument("--dtype", nargs="+", default=["f16", "bf16"])
    ap.add_argument("--variants", nargs="+", default=None,
                    help="provider or provider:features (default: every installed provider, as built)")
    ap.add_argument("--out", default=str(ROOT / "results"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--target-features", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.arch, a.dtype, a.target_features)
    variants = a.variants or installed()
    for v in variants:
        if v.partition(":")[0] not in PROVIDERS:
            raise SystemExit(f"--variants {v!r}: the provider must be one of {', '.join(PROVIDERS)}")
    df = run_variants(variants, a.arch, a.dtype)
    wide = side_by_side(df, variants)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "attention_provider_quality.csv", index=False)
    idents = ", ".join(f"`{v}` = {df[df.variant == v].identity.iloc[0]}" for v in variants)
    md = ("# Attention main-loop quality, providers side by side\n\n"
          + results_header.line("compiler output", idents) + "\n\n"
          "Static analysis (no GPU).\n\n" + markdown_table(wide))
    (out / "attention_provider_quality.md").write_text(md)
    pd.set_option("display.width", 250)
    print(wide.to_string(index=False))
    for v in variants:
        x = df[df.variant == v]
        print(f"{v}: kernels {len(x)}, max spills {x.spills.max()}, rows with spills {(x.spills > 0).sum()}")
    for v in variants[1:]:
        r = wide[f"density {v}/{variants[0]}"].dropna()
        print(f"density {v}/{variants[0]} (WMMA kernels): min {r.min()}, max {r.max()}, rows below 1: {(r < 1).sum()}")
    print(f"wrote {out / 'attention_provider_quality.csv'} and .md")


if __name__ == "__main__":
    main()
