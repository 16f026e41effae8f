"""Attention forward defaults at head dims 256..512 (docs/large_head_dims.md's table): compiler output and model.

    python bench/large_hd_table.py        # -> results/large_head_dims.md

Per arch and head dim, the default schedule (ops/attention/defaults.py, f16, dense, non-causal) compiled by
the default MLIR provider: VGPRs, LDS bytes, main-loop issued instructions and v_wmma (model/isa_loop;
compiler output), and the model's estimate at B=1, H=16, S=4096 (source = model, never a measurement) --
bench/attention_table.py's row, at the head dims that split over waves (`d_split`).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

import results_header  # noqa: E402

ARCHS = ("gfx1100", "gfx1201")
HEAD_DIMS = (256, 272, 384, 512)
SEQ = 4096
OUT = ROOT / "results" / "large_head_dims.md"


def main() -> None:
    import attention_table
    from wmma_gen.attention_common.directive import AttentionDirective
    from wmma_gen.ops.attention.defaults import default_schedule
    from wmma_gen.targets import get_target
    lines = ["# Attention forward defaults at large head dims", "",
             results_header.line("compiler output, model"), "",
             f"f16, dense, non-causal; model at B={attention_table.BATCH}, H={attention_table.HEADS}, S={SEQ} "
             "(source = model, never a measurement). Schedule: block_m x block_n, waves, d_split.", "",
             "| arch | hd | schedule | VGPRs | spills | LDS | loop issued / v_wmma | model TFLOP/s |",
             "|---|---|---|---|---|---|---|---|"]
    for arch in ARCHS:
        for hd in HEAD_DIMS:
            r = attention_table.row(arch, "f16", hd, SEQ, False)
            s = default_schedule(get_target(arch), AttentionDirective("f16", hd))
            sched = f"{s.block_m}x{s.block_n} w{s.waves}" + (f" ds{s.d_split}" if s.d_split > 1 else "")
            lines.append(f"| {arch} | {hd} | {sched} | {r['vgprs']} | {r['spills']} | {r['lds_bytes']} | "
                         f"{r['loop_issued']} / {r['loop_wmma']} | {r['model_tflops']} |")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
