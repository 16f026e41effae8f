"""Main-loop quality of the default GEMM schedules, read from the compiled ISA (no GPU).

For each arch x layout: VGPRs, spills, LDS bytes, main-loop instruction mix and the
ratio v_wmma / loop instructions (all instructions, and issued ones without s_delay_alu
hints). Target (issue 4): >= 0.25 with zero spills for the default large-GEMM schedule.
Writes results/gemm_static_quality.csv. Source of every figure: the compiler's output.

    python bench/gemm_static_quality.py
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.gemm.build import compile_gemm
from wmma_gen.ops.gemm.defaults import LARGE, fitted_default
from wmma_gen.ops.gemm.directive import GemmDirective
from wmma_gen.ops.gemm.schedule import Schedule
from wmma_gen.targets import get_target

SCHEDULES = {
    "default (defaults.fitted_default)": None,
    "128x128x32 2x2 double-buffered": Schedule(block_m=128, block_n=128, block_k=32, lds="ab", buffers=2, lds_pad=8),
    "256x128x32 4x2 k_unroll2": LARGE.replace(block_m=256, block_n=128, waves_m=4, waves_n=2),
}


def main() -> None:
    rows = []
    for name, s in SCHEDULES.items():
        for arch in ("gfx1100", "gfx1151", "gfx1201"):
            for layout in ("NN", "NT", "TN"):
                d = GemmDirective("f16", 4096, 4096, 4096, layout=layout)
                k = compile_gemm(d, s or fitted_default(d, get_target(arch)), arch).compiled
                loop = find_main_loop(k.isa)
                rows.append({
                    "schedule": name, "arch": arch, "layout": layout, "vgprs": k.metadata.vgpr_count,
                    "spills": k.metadata.spills, "lds_bytes": k.metadata.lds_bytes,
                    "loop_instructions": len(loop.ops), "loop_issued": loop.issued, "v_wmma": loop.wmma,
                    "wmma_per_instruction": round(loop.wmma / len(loop.ops), 3),
                    "wmma_per_issued": round(loop.wmma / loop.issued, 3),
                    "global_loads": loop.count("vmem_load"), "global_load_widths": loop.widths("vmem_load"),
                    "ds_reads": loop.count("ds_read"), "ds_read_widths": loop.widths("ds_read"),
                    "ds_writes": loop.count("ds_write"), "ds_write_widths": loop.widths("ds_write"),
                    "valu": loop.count("valu"), "salu": loop.count("salu"), "waitcnt": loop.count("waitcnt"),
                    "source": "compiler ISA",
                })
    df = pd.DataFrame(rows)
    out = Path("results") / "gemm_static_quality.csv"
    out.parent.mkdir(exist_ok=True)
    df.to_csv(out, index=False)
    cols = ["schedule", "arch", "layout", "vgprs", "spills", "lds_bytes", "loop_instructions", "v_wmma",
            "wmma_per_instruction", "wmma_per_issued", "global_load_widths", "ds_read_widths"]
    print(df[cols].to_string(index=False))
    best = df[df.schedule.str.startswith("default")]
    print(f"\ndefault schedule: min wmma/instruction {best.wmma_per_instruction.min()}, "
          f"max spills {best.spills.max()} (target >= 0.25 with 0 spills); wrote {out}")


if __name__ == "__main__":
    main()
