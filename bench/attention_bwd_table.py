"""Attention backward table: our default backward kernels beside others' published figures.

For hd 64 and 128, S = Sq = Sk 1024 and 4096, causal and not, f16, on gfx1100, gfx1151 and
gfx1201, one row each:
  - ours, from the compiler's ISA (source "compiler ISA"): the default schedule
    (ops/attention_bwd/defaults.py), VGPRs and spills of the dK/dV and dQ kernels and their
    main-loop WMMA density (v_wmma per issued instruction, model/isa_loop.find_main_loop);
  - ours, estimated (source "model", never a measurement): the three kernels' estimates summed
    (ops/attention_bwd/model.py), B=1, H=16, FLOPs = 2.5x the forward's (10*D per visible pair);
  - published (others, real GPU), from issue #12, with their conditions; and Triton 3.9's own
    backward compiled here (issue #12: compiler output only, no GPU).
Companion of bench/attention_table.py (forward). Writes results/attention_bwd_table.{csv,md}.

    python bench/attention_bwd_table.py
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from wmma_gen.compiler import compile_mlir, mlir_api
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops import registry
from wmma_gen.attention_common.directive import AttentionDirective
from wmma_gen.ops.attention_bwd.build import build_backward, make_spec
from wmma_gen.targets import get_target

import results_header  # bench/: the provenance line

ARCHS = ("gfx1100", "gfx1151", "gfx1201")
OUT = Path("results")
PUBLISHED = {   # issue #12 -- measured by others on real GPUs (TFLOP/s, backward)
    ("gfx1100", 64): "Triton ~24.9 (fp16 d64 causal, N=16384)",
    ("gfx1151", 64): "AITER ~20.8 (tuned, fp16 d64); a seed project's compiler-generated backward ~1.1-1.3",
}
TRITON = {"gfx11": "Triton 3.9 backward compiled here: spills 84-2898 VGPRs; loop density 0.033-0.060",
          "gfx12": "Triton 3.9 backward compiled here: spills 10-1517 VGPRs (none: dQ hd64 BLOCK_M 64); "
                   "loop density 0.056-0.107"}


def _density(ck) -> float:
    loop = find_main_loop(ck.isa)
    return round(loop.wmma / max(loop.issued, 1), 3)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT, help="directory for attention_bwd_table.{csv,md} (default results/)")
    out = ap.parse_args(argv).out
    spec_op = registry.get("attention_bwd")
    rows = []
    for arch in ARCHS:
        family = get_target(arch).family   # WMMA family from the table, never the name (gfx1170 is gfx12-style)
        for hd in (64, 128):
            for causal in (False, True):
                d = AttentionDirective("f16", hd, causal=causal, op="attention_bwd")
                s = spec_op.default_schedule(d, arch, None)   # the backward default depends on (arch, head dim)
                ks = {n: compile_mlir(src.mlir, arch)
                      for n, src in build_backward(make_spec(arch, "f16", hd, causal=causal), s).items()}
                for seq in (1024, 4096):
                    p = dict(batch=1, heads=16, kv_heads=16, seq_q=seq, seq_k=seq)
                    e = spec_op.estimate_of(d, s, p, arch)
                    rows.append({"arch": arch, "head_dim": hd, "causal": causal, "seq": seq,
                                 "dkdv_vgprs": ks["dkdv"].metadata.vgpr_count, "dq_vgprs": ks["dq"].metadata.vgpr_count,
                                 "spills": sum(k.metadata.spills for k in ks.values()),
                                 "dkdv_density": _density(ks["dkdv"]), "dq_density": _density(ks["dq"]),
                                 "model_tflops": round(e.tflops, 1), "model_limiter": e.limiter,
                                 "published_real_gpu_others": PUBLISHED.get((arch, hd), "-") if causal else "-",
                                 "triton_compiled_here": TRITON[family], "source": "compiler ISA + model"})
    df = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "attention_bwd_table.csv", index=False)
    head = ("# Attention backward: default kernels (compiler ISA; model estimate, source=model) beside "
            "published real-GPU figures measured by others\n\n"
            + results_header.line("compiler output, model, published", mlir_api.provider().identity)
            + "\n\nFLOPs = 2.5x the forward's (10*D per visible "
            "(query, key) pair); model = calibrated estimate, not a measurement. Model calibration of that day (results/model_calibration.md).\n\n")
    cols = list(df.columns)
    table = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    table += ["| " + " | ".join(str(v) for v in r) + " |" for r in df.itertuples(index=False)]
    (out / "attention_bwd_table.md").write_text(head + "\n".join(table) + "\n")
    print(df.drop(columns=["triton_compiled_here", "source"]).to_string(index=False))
    print(f"\nmax spills {df.spills.max()}; hd128 density dK/dV min {df[df.head_dim == 128].dkdv_density.min()}, "
          f"dQ min {df[df.head_dim == 128].dq_density.min()}; wrote {out}/attention_bwd_table.csv and .md")


if __name__ == "__main__":
    main()
