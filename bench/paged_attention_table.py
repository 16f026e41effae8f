"""Paged decode attention table: our GPU-less model estimate beside published figures.

Ours (source "model", never a measurement): the schedule a call would run (an exported file's
nearest bucket, else the default table: ops/paged_attention/lookup.choose_schedule), compiled
here, estimated by ops/paged_attention/model.py (the split-KV combine kernel is not modelled).
Decode steps users run: Sq = 1, causal, block size 16, every sequence at the full context L,
for Llama-3-8B (32 q / 8 kv heads, hd 128) and Qwen2.5-7B (28 q / 4 kv heads, hd 128),
batch 1 / 8 / 32, L = 1k / 8k / 32k, f16 and fp8 (E4M3) caches, on gfx1100 and gfx1201.
"K/V GB/s" = the cache bytes the step must read divided by the model time.

Default split before / after (source "model" both): the default table's schedule with the
capacity-only split (one per 512 positions: defaults.default_schedule without batch / kv heads,
what every call ran before the split read them) beside the GPU-filling split the default now
picks from the call's batch x kv heads, on the decode steps above.

Shipped schedules vs the default table (source "model" both): every bucket of the shipped
files (schedules/<arch>-paged_attention-<dtype>.json, results/paged_sweeps.md) at head dim 128 on
its own step (32 q / 8 kv heads, batch, context, Sq 1 decode or 16 chunked prefill), the entry's
schedule beside defaults.default_schedule's.

Published (others, real GPUs, kernel-level figures only; "published by <who>"), each with its
link; the peers' shapes are modelled here too where the source states them. RDNA3 fp8 vs f16 caches (gfx1100, gfx1151):
model times and main-loop instructions per key. Writes
results/paged_attention_table.md.

    python bench/paged_attention_table.py
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from wmma_gen.ops.paged_attention import lookup
from wmma_gen.ops.paged_attention.api import compile_paged
from wmma_gen.ops.paged_attention.defaults import default_schedule
from wmma_gen.ops.paged_attention.directive import PagedAttentionDirective
from wmma_gen.ops.paged_attention.lookup import choose_schedule
from wmma_gen.model.isa_loop import find_main_loop
from wmma_gen.ops.paged_attention.model import estimate_paged, trips_and_keys
from wmma_gen.targets import get_target

OUT = Path("results/paged_attention_table.md")
ARCHS = ("gfx1100", "gfx1201")
MODELS = (("Llama-3-8B", 32, 8, 128), ("Qwen2.5-7B", 28, 4, 128))
BATCHES = (1, 8, 32)
CONTEXTS = (1024, 8192, 32768)
KVS = ("f16", "fp8e4m3")

# Kernel-level decode figures published for RDNA (real GPUs). Each: (arch, label, shape, figure, link).
PUBLISHED = (
    ("gfx1100", "published by the vLLM PR #58156 author: Triton split-KV decode, kernel only, CUDA-graph timed",
     "batch 1, 2 KV heads, 'Qwen3.8 27B TP2 shape' (q heads and head dim not stated)",
     "ctx 1024: 0.008 ms; 4096: 0.012 ms; 16384: 0.031 ms (unsplit 2D kernel: 0.038 / 0.141 / 0.599 ms)",
     "https://github.com/vllm-project/vllm/pull/58156"),
    ("gfx1100 (RX 7900 XT)", "published by a vLLM PR #45916 commenter: kernel_paged_attention_2d_splitkv, "
     "torch profile",
     "Qwen3.6-27B-AWQ, head_size 256, 4 KV heads, TP=2, 32K context, batch 1",
     "635.779 us per call + 4.117 us reduce (before: kernel_paged_attention_2d 10095.188 us)",
     "https://github.com/vllm-project/vllm/pull/45916"),
)
NO_KERNEL_FIGURE = (
    "gfx1201: no kernel-level decode-attention time found. Published gfx1201 (R9700) figures are end to end "
    "only -- vLLM #45916 (30K-context decode 10.4 -> 48 tok/s, Qwen3-Coder-Next-FP8, TP=2 PP=2; "
    "https://github.com/vllm-project/vllm/pull/45916) and vLLM #34579 (Qwen3.5-9B on R9700 falling back to "
    "kernel_paged_attention_2d; https://github.com/vllm-project/vllm/issues/34579) -- which include every "
    "other layer, so they are not compared with a kernel estimate here.",
    "llama.cpp HIP flash attention (RX 7900 XTX / RX 9070): published figures are llama-bench tokens/s of "
    "whole models (e.g. https://github.com/ggml-org/llama.cpp/pull/28102, gfx1201 FA tuning, pp/tg at depth), "
    "not attention-kernel times: not comparable with this table.",
)


def estimate(arch: str, H: int, Hkv: int, D: int, B: int, L: int, kv: str, dtype: str = "f16",
             fp8_wmma: bool = False):
    """(schedule, model seconds, K/V GB/s, limiter) of one decode step (every sequence at L)."""
    d = PagedAttentionDirective(dtype, D, 16, kv, True, fp8_wmma=fp8_wmma)
    p = dict(batch=B, heads=H, kv_heads=Hkv, seq_q=1, max_blocks=-(-L // 16))
    s = choose_schedule(d, p, arch)
    (_, ck), _ = compile_paged(d, s, arch)
    e = estimate_paged(ck, d, s, p, [L] * B, arch)
    _, _, keys = trips_and_keys(d, s, p, [L] * B)
    return s, e.seconds, 2 * keys * Hkv * D * (1 if d.fp8 else 2) / e.seconds / 1e9, e.limiter


def model_us(arch: str, d, s, B: int, H: int, Hkv: int, Sq: int, L: int) -> float:
    """Model microseconds of schedule s for one step (every sequence at context L, Sq queries)."""
    (_, ck), _ = compile_paged(d, s, arch)
    p = dict(batch=B, heads=H, kv_heads=Hkv, seq_q=Sq)
    return estimate_paged(ck, d, s, p, [L] * B, arch).seconds * 1e6


def _knobs(s) -> str:
    return f"w{s.waves} fq{s.frags_q} ld{s.load_bits} split{s.split_kv} q={s.q_in}{' pf' if s.prefetch else ''}"


def shipped(head_dim: int = 128, H: int = 32, Hkv: int = 8) -> list[str]:
    """Every shipped bucket at head_dim: the entry's schedule vs the default's, both modelled."""
    lines = ["| arch | dtype | KV cache | Sq | context | batch | shipped schedule | shipped model us "
             "| default schedule | default model us | default / shipped |", "|---" * 11 + "|"]
    for arch, dtype in ((a, dt) for a in ARCHS for dt in ("f16", "bf16")):
        path = lookup.DEFAULT_DIR / lookup.file_name(arch, dtype)
        if not path.exists():
            continue
        for e in sorted(lookup.load_file(path), key=lambda e: (e["kv_dtype"], e["seq_q"], e["seq"], e["batch"])):
            if e["head_dim"] != head_dim or e["window"] or e["softcap"]:
                continue
            d = PagedAttentionDirective(dtype, head_dim, e["block_size"], e["kv_dtype"], e["causal"])
            ds = default_schedule(d, arch, H // Hkv * e["seq_q"], e["seq"], batch=e["batch"], kv_heads=Hkv)
            ship = model_us(arch, d, e["schedule"], e["batch"], H, Hkv, e["seq_q"], e["seq"])
            base = model_us(arch, d, ds, e["batch"], H, Hkv, e["seq_q"], e["seq"])
            lines.append(f"| {arch} | {dtype} | {e['kv_dtype']} | {e['seq_q']} | {e['seq']} | {e['batch']} | "
                         f"{_knobs(e['schedule'])} | {ship:.1f} | {_knobs(ds)} | {base:.1f} | {base / ship:.2f} |")
    return lines


def default_split() -> list[str]:
    """The default's capacity-only split vs its GPU-filling split, both modelled (module doc)."""
    lines = ["| arch | model (H/Hkv, D) | batch | context | KV cache | capacity-only split | model us "
             "| GPU-filling split | model us | before / after |", "|---|---|---|---|---|---|---|---|---|---|"]
    for arch in ARCHS:
        for name, H, Hkv, D in MODELS:
            for B in BATCHES:
                for L in CONTEXTS:
                    for kv in KVS:
                        d = PagedAttentionDirective("f16", D, 16, kv, True)
                        old = default_schedule(d, arch, H // Hkv, L)
                        new = default_schedule(d, arch, H // Hkv, L, batch=B, kv_heads=Hkv)
                        before, after = (model_us(arch, d, s, B, H, Hkv, 1, L) for s in (old, new))
                        lines.append(f"| {arch} | {name} ({H}/{Hkv}, {D}) | {B} | {L} | {kv} | {old.split_kv} "
                                     f"| {before:.1f} | {new.split_kv} | {after:.1f} | {before / after:.2f} |")
    return lines


def ours() -> list[str]:
    lines = ["| arch | model (H/Hkv, D) | batch | context | KV cache | schedule | model us | model K/V GB/s "
             "| DRAM peak GB/s [SPEC] | limiter |", "|---|---|---|---|---|---|---|---|---|---|"]
    for arch in ARCHS:
        bw = get_target(arch).mem_bw_gbs
        for name, H, Hkv, D in MODELS:
            for B in BATCHES:
                for L in CONTEXTS:
                    for kv in KVS:
                        s, sec, gbs, lim = estimate(arch, H, Hkv, D, B, L, kv)
                        lines.append(f"| {arch} | {name} ({H}/{Hkv}, {D}) | {B} | {L} | {kv} | w{s.waves} "
                                     f"fq{s.frags_q} split{s.split_kv} q={s.q_in} | {sec * 1e6:.1f} | {gbs:.0f} "
                                     f"| {bw:.0f} | {lim} |")
    return lines


def fp8_native() -> list[str]:
    """gfx1201, E4M3 cache: fp8_wmma (Q and P quantised, both products on fp8 WMMA) beside the
    dequantising path (cache widened to f16 in registers) -- model estimates of both."""
    lines = ["| model (H/Hkv, D) | batch | context | dequant: model us (limiter) | fp8_wmma: model us (limiter) "
             "| dequant / fp8_wmma |", "|---|---|---|---|---|---|"]
    for name, H, Hkv, D in MODELS:
        for B in BATCHES:
            for L in CONTEXTS:
                _, deq, _, dl = estimate("gfx1201", H, Hkv, D, B, L, "fp8e4m3")
                _, nat, _, nl = estimate("gfx1201", H, Hkv, D, B, L, "fp8e4m3", fp8_wmma=True)
                lines.append(f"| {name} ({H}/{Hkv}, {D}) | {B} | {L} | {deq * 1e6:.1f} ({dl}) | {nat * 1e6:.1f} ({nl}) "
                             f"| {deq / nat:.2f} |")
    return lines


FP8_ARCHS = ("gfx1100", "gfx1151")      # RDNA3 / RDNA3.5: no fp8 WMMA, the cache is widened to f16 in registers


def per_key(arch: str, d, s) -> tuple[float, float]:
    """(issued instructions, VALU instructions) of the compiled main loop per key of one kv head's
    tile (one wave's trip covers block_n keys; compiler output, static)."""
    (_, ck), _ = compile_paged(d, s, arch)
    loop = find_main_loop(ck.isa)
    waves = s.waves
    return loop.issued * waves / s.block_n, loop.count("valu") * waves / s.block_n


_VLLM: dict = {}


def vllm_per_key(kernel, arch: str, kv: str, H: int, Hkv: int, D: int) -> tuple[float, float, int]:
    """(issued, VALU, VGPR spills) of vLLM's decode kernel (bench/peers_vllm_paged.py) per key of one kv
    head's tile: its main loop's instructions x num_warps / TILE_SIZE (compiler output, static)."""
    import peers_vllm_paged
    key = (arch, kv, H, Hkv, D)
    if key not in _VLLM:
        ck = peers_vllm_paged.compile_decode(kernel, arch, kv, heads=H, kv_heads=Hkv, head_dim=D)
        isa = ck.asm["amdgcn"]
        loop = find_main_loop(isa)
        spills = int(re.search(r"\.vgpr_spill_count:\s*(\d+)", isa).group(1))
        w = ck.metadata.num_warps
        _VLLM[key] = (loop.issued * w / peers_vllm_paged.TILE_SIZE, loop.count("valu") * w / peers_vllm_paged.TILE_SIZE,
                      spills)
    return _VLLM[key]


def fp8_vs_f16(vllm=None) -> list[str]:
    """RDNA3 decode with an fp8 cache (widened by kernels/fp8_widen.py) beside the f16 cache: model times,
    ratio, and the main loop's instructions per key (compiler output), ours and (when `vllm` is vLLM's
    kernel_unified_attention, bench/peers_vllm_paged.py) vLLM's Triton kernel's for the same cache."""
    lines = ["| arch | model (H/Hkv, D) | batch | context | KV cache | schedule | model us (limiter) | f16 / this "
             "| main-loop issued / key | VALU / key | vLLM Triton issued / key | vLLM VALU / key | ours / vLLM issued |",
             "|---" * 13 + "|"]
    for arch in FP8_ARCHS:
        for name, H, Hkv, D in MODELS[:1]:
            for B, L in ((16, 8192), (1, 32768), (32, 1024)):
                base = None
                for kv in ("f16", "fp8e4m3", "fp8e5m2"):
                    s, sec, _, lim = estimate(arch, H, Hkv, D, B, L, kv)
                    base = base or sec
                    issued, valu = per_key(arch, PagedAttentionDirective("f16", D, 16, kv, True), s)
                    peer = "not compiled (no vLLM distribution named) | - | -"
                    if vllm is not None:
                        vi, vv, spills = vllm_per_key(vllm, arch, kv, H, Hkv, D)
                        peer = f"{vi:.1f}{f' ({spills} VGPR spills)' if spills else ''} | {vv:.1f} | {issued / vi:.2f}"
                    lines.append(f"| {arch} | {name} ({H}/{Hkv}, {D}) | {B} | {L} | {kv} | {_knobs(s)} "
                                 f"| {sec * 1e6:.1f} ({lim}) | {base / sec:.2f} | {issued:.1f} | {valu:.1f} | {peer} |")
    return lines


def peers() -> list[str]:
    lines = ["| arch | source (published, measured by others) | shape | published figure | our model for the "
             "stated shape | link |", "|---|---|---|---|---|---|"]
    for arch, what, shape, fig, link in PUBLISHED:
        mine = "not modelled: the source does not state the query heads"
        if "head_size 256" in shape:
            rows = []
            for G in (4, 6):     # the query heads per KV head are not stated: two groups bracket it
                _, sec, _, _ = estimate("gfx1100", 2 * G, 2, 256, 1, 32768, "f16")
                rows.append(f"group {G}: {sec * 1e6:.0f} us")
            mine = ("model, gfx1100 = RX 7900 XTX figures, per GPU 2 KV heads (4 / TP 2), bf16 cache run as f16: "
                    + ", ".join(rows))
        lines.append(f"| {arch} | {what} | {shape} | {fig} | {mine} | {link} |")
    return lines


def peer_note(vllm) -> str:
    if vllm is None:
        return (f"vLLM's Triton kernel is not compiled in this run: name a vLLM wheel or sdist in "
                f"{_peer_env()} (`pip download vllm --no-deps --only-binary :all:`; bench/peers_vllm_paged.py).")
    return (f"vLLM columns: vLLM {_dist_name()}'s own `kernel_unified_attention` (the split-KV '3D' decode launch "
            "of its `unified_attention()`: BLOCK_M 16, TILE_SIZE 16, per-tensor fp8 scales, Triton's default "
            "4 warps and 2 stages), loaded at bench time from the named distribution (not part of this "
            "repository; bench/peers_vllm_paged.py) and compiled here for the same arch by Triton "
            f"{_triton_version()}; per key = its main loop's issued (VALU) instructions x num_warps / TILE_SIZE, "
            "the same count as ours. Its fp8 path widens with Triton's generic fp8 -> f32 -> f16 conversion.")


def _peer_env() -> str:
    import peers_vllm_paged
    return peers_vllm_paged.ENV


def _dist_name() -> str:
    import os
    import peers_vllm_paged
    return Path(os.environ.get(peers_vllm_paged.ENV, "")).name


def _triton_version() -> str:
    import triton
    return triton.__version__


def main() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    import peers_vllm_paged
    vllm = peers_vllm_paged.load()
    import results_header
    text = [
        "# Paged decode attention: model estimates and published figures",
        "",
        results_header.line("model, compiler output, published"),
        "",
        "No GPU was used: **every figure of ours is a model estimate (source = model), never a measurement**; "
        "the split-KV combine kernel is not in it. Published figures are others' measurements on real GPUs, "
        "quoted with their links and conditions.",
        "",
        "## Ours (source = model)",
        "",
        "Decode step: Sq = 1, causal, block size 16, every sequence at the full context, f16 queries. Schedule: "
        "the one `paged_attention()` would run (exported file for the nearest bucket, else the default table). "
        "K/V GB/s = cache bytes the step must read / model time.",
        "",
        *ours(),
        "",
        "## Default split: capacity-only vs GPU-filling (source = model)",
        "",
        "The default table's schedule (no file entry) on the decode steps above, with the split the default "
        "took from the context alone (one per 512 positions, at most 16) and the one it takes now from the "
        "call's batch x kv heads against the target's CUs (defaults.py: the fewest splits that put 4 waves on "
        "every SIMD, at least 64 positions per split, at most 16). The split-KV combine kernel, whose work "
        "grows with the split, is not modelled.",
        "",
        *default_split(),
        "",
        "## Shipped schedules vs the default table (source = model)",
        "",
        "Each bucket of the shipped files (`schedules/<arch>-paged_attention-<dtype>.json`, swept model-ranked: "
        "results/paged_sweeps.md) at head dim 128 on its own step: 32 query / 8 KV heads, the bucket's batch "
        "and context, Sq 1 (decode) or 16 (a chunked-prefill step against context - 16 cached tokens). Both "
        "columns are the model's, on the same compiled objects the lookup and the default table pick.",
        "",
        *shipped(),
        "",
        "## gfx1201 E4M3 cache: native fp8 WMMA (fp8_wmma=True) vs dequantised in registers (source = model)",
        "",
        "Same decode step; each column runs the schedule a call would (dequant: the shipped E4M3 entry of the "
        "nearest bucket; fp8_wmma: the default table, as lookup.py never hands it a dequant-tuned entry), so a "
        "ratio below 1 at batch 1 / short contexts is the shipped split, not the arithmetic. fp8_wmma quantises Q (per row) and P to E4M3 and runs both products on "
        "v_wmma_f32_16x16x16_fp8_fp8 -- a different numerical contract (about 2^-4 relative in scores and weights), "
        "chosen by the caller, never by the tuner.",
        "",
        *fp8_native(),
        "",
        "## RDNA3 fp8 KV cache vs f16 KV cache (source = model; instructions: compiler output)",
        "",
        "gfx11 has no fp8 WMMA: the cache's bytes are widened to f16 in registers (kernels/fp8_widen.py: E5M2 one "
        "v_perm_b32 per two halves; E4M3 exact incl. subnormals and NaN in 8 VALU per four bytes, the 2^8 rebias "
        "folded into the scale). Each row runs the schedule a call would; 'f16 / this' is the f16 cache's model "
        "time over this row's. Instructions per key: the compiled main loop's issued (and VALU) instructions "
        "x waves / keys per trip, i.e. per key of one kv head's tile. The split rule may take up to 64 splits "
        "(issue 38): at batch 1 and 32k, 16 splits are 128 one-wave workgroups for gfx1100's 192 SIMDs and "
        "the fp8 loops were 'latency' limited (E4M3 1.18x, E5M2 1.35x the f16 cache); 64 fill them. "
        + peer_note(vllm),
        "",
        *fp8_vs_f16(vllm),
        "",
        "## Published kernel-level figures (measured by others; labelled published by <who>)",
        "",
        *peers(),
        "",
        *[f"- {n}" for n in NO_KERNEL_FIGURE],
        "",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(text))
    print(OUT.read_text())


if __name__ == "__main__":
    main()
