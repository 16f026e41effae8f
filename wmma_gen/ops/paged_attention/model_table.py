"""Prints the GPU-less model's decode figures (source = "model", never measured) for a few
serving shapes, 16-bit vs fp8 caches:

    python -m wmma_gen.ops.paged_attention.model_table
"""
from __future__ import annotations

from .api import compile_paged
from .defaults import default_schedule
from .directive import PagedAttentionDirective
from .model import estimate_paged, trips_and_keys

SHAPES = [  # (batch, heads, kv_heads, head_dim, seq_len)
    (16, 32, 8, 128, 2048), (16, 32, 8, 128, 8192), (64, 32, 8, 128, 4096), (8, 64, 8, 128, 16384)]


def main() -> None:
    print("| arch | B | H/Hkv | D | L | KV | schedule | model us | model GB/s of K/V | limiter |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for arch in ("gfx1100", "gfx1201"):
        for B, H, Hkv, D, L in SHAPES:
            for kv in ("f16", "fp8e4m3"):
                d = PagedAttentionDirective("f16", D, 16, kv, True)
                p = dict(batch=B, heads=H, kv_heads=Hkv, seq_q=1)
                s = default_schedule(d, arch, H // Hkv, L, batch=B, kv_heads=Hkv)
                (_, ck), _ = compile_paged(d, s, arch)
                e = estimate_paged(ck, d, s, p, [L] * B, arch)
                _, _, keys = trips_and_keys(d, s, p, [L] * B)
                gbs = 2 * keys * Hkv * D * (1 if d.fp8 else 2) / e.seconds / 1e9
                print(f"| {arch} | {B} | {H}/{Hkv} | {D} | {L} | {kv} | w{s.waves} split{s.split_kv} "
                      f"{s.q_in} | {e.seconds * 1e6:.0f} | {gbs:.0f} | {e.limiter} |")


if __name__ == "__main__":
    main()
