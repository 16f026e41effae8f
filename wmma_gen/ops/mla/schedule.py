"""MLASchedule: *how* MLA decode is computed (STYLE rule 6).

A workgroup owns one sequence, 16 packed query rows (row r = i * heads + h: the Sq tokens'
heads, token-major) and one split of the sequence's keys, in tiles of BLOCK_N = 16 keys. Its
`waves` waves share the work of every tile (kernel.py): the score reduction over head_dim is
split across them (wave w holds Q^T for head_dim / waves of the latent's columns and computes a
partial S^T, summed through LDS), and O's head_dim_v columns are split across them (wave w
accumulates O^T for head_dim_v / waves columns) -- the rows x 512 f32 accumulator of one wave
alone would need 256 VGPRs.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...attention_common.paged_schedule import dtype_supported, split_kv
from ...knobs import Knob, KnobSchedule
from ...targets import Target

BLOCK_N = 16   # keys per tile: the K [16][D+pad] and V^T [Dv][16+pad] tiles fit 64 KB at D = 576
LDS_PAD = 8    # halves of padding per LDS row (16 bytes: aligned b128 reads, banks spread)

SPACE: tuple[Knob, ...] = (
    Knob("waves", (2, 4), "waves per workgroup: each holds head_dim/waves of Q^T and head_dim_v/waves of O^T"),
    Knob("load_bits", (64, 128), "width of each global load per lane, in bits"),
    split_kv("(sequence, row tile)", "the op's deterministic combine kernel"),
    Knob("fp8_wmma", (False, True), "fp8 latent caches on gfx12: both products on 8-bit float WMMA (Q and P\n"
         "quantised to E4M3, ops/mla/fp8_native.py) instead of widening the cache to the query dtype"),
)


@dataclass(frozen=True)
class MLASchedule(KnobSchedule):
    waves: int = 4
    load_bits: int = 128
    split_kv: int = 1
    fp8_wmma: bool = False

    @property
    def threads(self) -> int:
        return 32 * self.waves

    block_n = BLOCK_N
    block_m = 16

    def lds_bytes(self, d) -> int:
        """K tile [16][D+pad] + V^T tile [Dv][16+pad] (f16) + the waves' partial S^T (f32)."""
        kv = BLOCK_N * (d.head_dim + LDS_PAD) + d.head_dim_v * (BLOCK_N + LDS_PAD)
        return (1 if self.fp8_wmma else 2) * kv + 4 * self.waves * 32 * 8   # fp8_wmma: byte tiles


def fp8_wmma_supported(s: MLASchedule, d, t: Target) -> str | None:
    """fp8_wmma needs an fp8 cache and the 8-bit float WMMA (RDNA4 ISA guide,
    "V_WMMA_F32_16X16X16_FP8_FP8" / "_BF8_FP8"; gfx11 has none)."""
    if s.fp8_wmma and not d.fp8:
        return f"fp8_wmma=True needs an fp8 latent cache (kv_dtype={d.kv_dtype})"
    if s.fp8_wmma and (("fp8", "f32") not in t.wmma or ("bf8", "f32") not in t.wmma):
        return f"fp8_wmma=True needs fp8/bf8 WMMA, which {t.arch} lacks (fp8_wmma=False widens the cache)"
    return None


def waves_divide(s: MLASchedule, d, t: Target) -> str | None:
    if (d.head_dim // 16) % s.waves or (d.head_dim_v // 16) % s.waves:
        return (f"waves={s.waves} must divide head_dim/16={d.head_dim // 16} and head_dim_v/16={d.head_dim_v // 16} "
                "(each wave takes an equal share of both)")
    return None


def tile_in_block(s: MLASchedule, d, t: Target) -> str | None:
    if d.block_size % BLOCK_N:
        return f"block_size={d.block_size} must be a multiple of {BLOCK_N} (a key tile lies in one cache block)"
    return None


def lds_budget(s: MLASchedule, d, t: Target) -> str | None:
    if s.lds_bytes(d) > t.lds_bytes:
        return f"LDS {s.lds_bytes(d)} bytes (head_dim={d.head_dim}, head_dim_v={d.head_dim_v}) exceeds {t.lds_bytes}"
    return None


def vgpr_estimate(s: MLASchedule, d, t: Target) -> int:
    """VGPRs per lane at least: the wave's O^T tiles (8 each) and Q^T fragments (8 per 16 columns
    on gfx11, 4 on gfx12) all along, the latent tile's staging registers twice (the tile being
    stored and the next one in flight), ~32 for S, P and addresses."""
    frag = 8 if t.family == "gfx11" else (2 if s.fp8_wmma else 4)
    q = d.head_dim // 16 // s.waves * frag
    o = d.head_dim_v // 16 // s.waves * 8
    staging = 2 * -(-BLOCK_N * d.head_dim * 2 // (4 * s.threads))
    return q + o + staging + 32


def vgpr_budget(s: MLASchedule, d, t: Target) -> str | None:
    need = vgpr_estimate(s, d, t)
    if need > t.max_vgprs_per_wave:
        return f"needs about {need} VGPRs per lane; max {t.max_vgprs_per_wave}: add waves"
    return None


def staging_divides(s: MLASchedule, d, t: Target) -> str | None:
    w = s.load_bits // 8
    if (2 * d.head_dim) % w or (2 * d.head_dim_v) % w:
        return f"load_bits={s.load_bits} ({w} bytes) must divide a latent row of {2 * d.head_dim} bytes"
    return None


CONSTRAINTS = (dtype_supported, fp8_wmma_supported, waves_divide, tile_in_block, lds_budget, vgpr_budget,
               staging_divides)
MLASchedule.bind(SPACE, CONSTRAINTS)
