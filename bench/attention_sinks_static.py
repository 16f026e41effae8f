"""Static cost of attention sinks (compiler output, no GPU): the default forward kernel of each
(arch, dtype, head dim, mask) with and without directive.sinks side by side -- VGPRs, spills and
issued instructions of the whole kernel (the sink work is in the epilogue only).

    PYTHONPATH=. python bench/attention_sinks_static.py [--out results/attention_sinks_static.csv]
"""
from __future__ import annotations

import argparse
import csv
from dataclasses import replace


def _issued(isa: str) -> int:
    return sum(1 for line in isa.splitlines()
               if line.startswith("\t") and line.strip() and not line.lstrip().startswith((".", ";")))


def rows(archs=("gfx1100", "gfx1201"), dtypes=("f16", "bf16"), head_dims=(64, 128, 256)):
    from wmma_gen.ops import registry
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.compile_op import compile_op
    spec = registry.get("attention")
    for arch in archs:
        for dt in dtypes:
            for hd in head_dims:
                for causal in (False, True):
                    d = AttentionDirective(dt, hd, causal=causal, return_lse=True)
                    s = spec.default_schedule(d, arch)
                    figs = []
                    for x in (d, replace(d, sinks=True)):
                        ck = compile_op(spec, x, s, None, arch).pairs()["attention"][1]
                        figs.append((ck.metadata.vgpr_count, ck.metadata.vgpr_spill_count, _issued(ck.isa)))
                    (v0, sp0, n0), (v1, sp1, n1) = figs
                    yield dict(arch=arch, dtype=dt, head_dim=hd, causal=causal, vgprs=v0, vgprs_sinks=v1,
                               spills=sp0, spills_sinks=sp1, instructions=n0, instructions_sinks=n1,
                               source="compiler")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/attention_sinks_static.csv")
    a = ap.parse_args(argv)
    out = list(rows())
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    for r in out:
        print(f"{r['arch']} {r['dtype']} hd{r['head_dim']} {'causal' if r['causal'] else 'plain '}  VGPRs "
              f"{r['vgprs']} -> {r['vgprs_sinks']}  spills {r['spills']} -> {r['spills_sinks']}  instructions "
              f"{r['instructions']} -> {r['instructions_sinks']}")


if __name__ == "__main__":
    main()
