"""MLA decode table: our GPU-less model estimate beside the DRAM limit (what the step must read
at the target's peak memory bandwidth), for the decode steps DeepSeek-V2/V3-class models run.

Ours (source "model", never a measurement): the schedule a call would run (an exported file's
nearest bucket, else ops/mla/defaults.py: ops/mla/lookup.choose_schedule), compiled here and
estimated by ops/mla/model.py (the combine kernel is not modelled). Steps: latent 576 / V 512,
block size 64, every sequence at the full context L, heads 16 (DeepSeek-V2-Lite) and 128
(DeepSeek-V3 / Kimi K2 with no tensor parallelism), Sq 1 and 2 (one speculative token), batch
1 / 16 / 64, L = 1k / 8k / 32k, bf16 and fp8 (E4M3) latent caches, on gfx1100 and gfx1201.

"DRAM limit" = compulsory bytes (Q, O, LSE and each sequence's latent rows once: model.dram_bytes)
/ targets' mem_bw_gbs ([SPEC] peak); "WMMA peak" = FLOPs (2 (576 + 512) per query row and key)
/ the dtype's dense WMMA peak (fp8's for fp8_wmma schedules). MLA decode with many heads is
compute-bound (128 heads: ~240 FLOP per latent byte, above every RDNA ridge point), so "of
bound" = max(DRAM limit, WMMA peak) / model time (1.0: at the roofline). Also, for fp8 caches
on gfx1201, the default native fp8 WMMA path beside the widening one (same schedule otherwise,
one run), and the compiler facts of the default kernels (VGPRs, spills, LDS: code-object
metadata). Writes results/mla_table.md.

    python bench/mla_table.py
"""
from __future__ import annotations

from pathlib import Path

from wmma_gen.ops.mla.api import compile_mla
from wmma_gen.ops.mla.directive import MLADirective
from wmma_gen.ops.mla.lookup import choose_schedule
from wmma_gen.ops.mla.model import dram_bytes, estimate_mla
from wmma_gen.ops.mla.reference import mla_decode_flops
from wmma_gen.targets import get_target

import results_header  # bench/: the provenance line

OUT = Path("results/mla_table.md")
ARCHS = ("gfx1100", "gfx1201")
HEADS = (16, 128)
SEQ_QS = (1, 2)
BATCHES = (1, 16, 64)
CONTEXTS = (1024, 8192, 32768)
KVS = ("", "fp8e4m3")


def row(arch: str, dtype: str, kv: str, H: int, Sq: int, B: int, L: int) -> str:
    d = MLADirective(dtype, 576, 512, 64, kv)
    p = dict(batch=B, heads=H, seq_q=Sq, max_blocks=-(-L // 64))
    s = choose_schedule(d, p, arch)
    ck = compile_mla(d, s, arch)["mla"][1]
    e = estimate_mla(ck, d, s, dict(heads=H, seq_q=Sq), [L] * B, arch)
    t = get_target(arch)
    limit = dram_bytes(d, dict(heads=H, seq_q=Sq), [L] * B) / (t.mem_bw_gbs * 1e9)
    peak = mla_decode_flops([L] * B, Sq, H, 576, 512) / (t.peak_tflops("fp8" if s.fp8_wmma else dtype) * 1e12)
    f8 = " fp8wmma" if s.fp8_wmma else ""
    return (f"| {arch} | {d.kv_dtype} | {H} | {Sq} | {B} | {L} | w{s.waves} ld{s.load_bits} split{s.split_kv}{f8} | "
            f"{e.seconds * 1e6:.1f} | {limit * 1e6:.1f} | {peak * 1e6:.1f} | {max(limit, peak) / e.seconds:.2f} | "
            f"{e.tflops:.1f} | {e.limiter} |")


def native_vs_widened() -> list[str]:
    """gfx1201, fp8 latent caches: the default (fp8_wmma, native 8-bit WMMA) beside the same
    schedule widening the cache to bf16, both model estimates from one run."""
    lines = ["| latent cache | heads | batch | context | native fp8 WMMA us | widened to bf16 us | widened / native |",
             "|---" * 7 + "|"]
    for kv in ("fp8e4m3", "fp8e5m2"):
        d = MLADirective("bf16", 576, 512, 64, kv)
        for H in HEADS:
            for B in BATCHES:
                L = 8192
                s = choose_schedule(d, dict(batch=B, heads=H, seq_q=1, max_blocks=L // 64), "gfx1201")
                us = []
                for f8 in (True, False):
                    sx = s.replace(fp8_wmma=f8)
                    e = estimate_mla(compile_mla(d, sx, "gfx1201")["mla"][1], d, sx, dict(heads=H, seq_q=1), [L] * B,
                                     "gfx1201")
                    us.append(e.seconds * 1e6)
                lines.append(f"| {kv} | {H} | {B} | {L} | {us[0]:.1f} | {us[1]:.1f} | {us[1] / us[0]:.2f} |")
    return lines


def compiler_facts() -> list[str]:
    lines = ["| arch | dtype | latent cache | VGPRs | VGPR spills | SGPR spills | LDS bytes |", "|---" * 7 + "|"]
    for arch in ARCHS:
        for dtype, kv in (("f16", ""), ("bf16", ""), ("bf16", "fp8e4m3"), ("bf16", "fp8e5m2")):
            d = MLADirective(dtype, kv_dtype=kv)
            s = choose_schedule(d, dict(batch=16, heads=128, seq_q=1, max_blocks=128), arch)
            md = compile_mla(d, s, arch)["mla"][1].metadata
            lines.append(f"| {arch} | {dtype} | {d.kv_dtype} | {md.vgpr_count} | {md.vgpr_spill_count} | "
                         f"{md.sgpr_spill_count} | {md.lds_bytes} |")
    return lines


def main() -> None:
    lines = ["# MLA decode: model estimate beside the DRAM limit", "",
             results_header.line("model, compiler output"), "",
             "Every time is a model estimate (source `model`, "
             "ops/mla/model.py), never a measurement; the DRAM limit uses the targets' [SPEC] peak bandwidth.", "",
             "| arch | latent cache | heads | Sq | batch | context | schedule | model us | DRAM-limit us "
             "| WMMA-peak us | of bound | TFLOP/s | limiter |", "|---" * 13 + "|"]
    for arch in ARCHS:
        for kv in KVS:
            for H in HEADS:
                for Sq in SEQ_QS:
                    for B in BATCHES:
                        for L in CONTEXTS:
                            lines.append(row(arch, "bf16", kv, H, Sq, B, L))
    lines += ["", "## fp8 latent caches on gfx1201: native fp8 WMMA (the default) vs widening (model)", ""]
    lines += native_vs_widened()
    lines += ["", "## Compiler facts of the default kernels (code-object metadata)", ""] + compiler_facts()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
