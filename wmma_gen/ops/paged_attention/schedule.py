"""PagedSchedule: *how* paged decode attention is computed (STYLE rule 6).

A workgroup owns one (sequence, kv head) and BLOCK_M = 16 * waves * frags_q *packed query
rows*: the GQA group's query heads times the Sq query tokens (row r = head-in-group * Sq + i),
so one K/V tile read from the cache serves every query head that shares it. It walks its
share (split_kv) of the sequence's key tiles of BLOCK_N keys; BLOCK_N divides the cache's
block_size, so a tile lies inside one cache block and its address is one table entry.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...kernels.attention import LDS_PAD
from ...attention_common.paged_schedule import dtype_supported, split_kv
from ...knobs import Knob, KnobSchedule
from ...targets import Target

SPACE: tuple[Knob, ...] = (
    Knob("block_n", (16, 32, 64), "keys per main-loop tile (BLOCK_N); must divide the directive's block_size"),
    Knob("waves", (1, 2, 4), "waves per workgroup; each owns frags_q blocks of 16 packed query rows"),
    Knob("frags_q", (1, 2), "16-row query blocks per wave (FQ)"),
    Knob("load_bits", (32, 64, 128), "width of each global load per lane, in bits"),
    # up to 64: a batch-1 decode has few (sequence, kv head) pairs, and 16 splits of them leave SIMDs idle
    # (Llama-3-8B, 8 kv heads: 128 one-wave workgroups for gfx1100's 192 SIMDs; defaults.split_for)
    split_kv("(sequence, kv head)", "the dense forward's deterministic combine kernel", (1, 2, 4, 8, 16, 32, 64)),
    Knob("prefetch", (True, False), "issue the next tile's K/V loads before this tile's math (its registers\n"
         "stay live across it) or load each tile right before storing it to LDS"),
    Knob("q_in", ("regs", "lds"), "Q^T fragments kept in registers for the whole loop, or staged once in LDS\n"
         "and re-read per tile (D/2 fewer VGPRs on gfx11, D/4 on gfx12)"),
)


@dataclass(frozen=True)
class PagedSchedule(KnobSchedule):
    block_n: int = 16
    waves: int = 1
    frags_q: int = 1
    load_bits: int = 128
    split_kv: int = 1
    prefetch: bool = True
    q_in: str = "regs"

    @property
    def threads(self) -> int:
        return 32 * self.waves

    @property
    def block_m(self) -> int:
        """packed query rows per workgroup"""
        return 16 * self.waves * self.frags_q

    def lds_bytes(self, d) -> int:
        """K tile [BLOCK_N][D+pad] + V^T tile [D][BLOCK_N+pad] (+ Q [BLOCK_M][D+pad]), f16
        (fp8_wmma: the K and V^T tiles hold the cache's bytes)."""
        q = self.block_m * (d.head_dim + LDS_PAD) if self.q_in == "lds" else 0
        kv = self.block_n * (d.head_dim + LDS_PAD) + d.head_dim * (self.block_n + LDS_PAD)
        return (kv if d.fp8_wmma else 2 * kv) + 2 * q


def fp8_wmma_supported(s: PagedSchedule, d, t: Target) -> str | None:
    """fp8_wmma needs the 8-bit float WMMA (RDNA4 ISA guide, "V_WMMA_F32_16X16X16_FP8_FP8" and
    its FP8_BF8 / BF8_FP8 / BF8_BF8 forms; not on RDNA3) and keeps Q^T in registers (its E4M3
    fragments are D/8 VGPRs: nothing to save by staging it)."""
    if not d.fp8_wmma:
        return None
    if ("fp8", "f32") not in t.wmma or ("bf8", "f32") not in t.wmma:
        return f"fp8_wmma needs fp8/bf8 WMMA, which {t.arch} lacks (use the dequantising path: fp8_wmma=False)"
    if s.q_in != "regs":
        return f"q_in={s.q_in!r} with fp8_wmma: fp8 Q^T stays in registers (q_in='regs')"
    return None


def tile_in_block(s: PagedSchedule, d, t: Target) -> str | None:
    if d.block_size % s.block_n:
        return f"block_n={s.block_n} must divide block_size={d.block_size} (a key tile lies in one cache block)"
    return None


def workgroup_size(s: PagedSchedule, d, t: Target) -> str | None:
    if s.threads > t.max_workgroup_threads:
        return f"waves*32={s.threads} threads exceeds {t.max_workgroup_threads}"
    return None


def lds_budget(s: PagedSchedule, d, t: Target) -> str | None:
    if s.lds_bytes(d) > t.lds_bytes:
        return f"LDS {s.lds_bytes(d)} bytes (block_n={s.block_n}, head_dim={d.head_dim}) exceeds {t.lds_bytes}"
    return None


def row_bytes(d) -> int:
    return d.head_dim * (1 if d.fp8 else 2)


def vgpr_estimate(s: PagedSchedule, d, t: Target) -> int:
    """VGPRs per lane at least: O^T (8 per 16x16 tile) and Q^T fragments (q_in="regs") all
    along; during the math S^T, one A fragment and the next K and V tiles' staging registers
    (prefetch; fp8 bytes stay raw until stored); during the copy the staging registers (fp8
    widened to 16 bits); ~24 for addresses and state."""
    fq, dts = s.frags_q, d.head_dim // 16
    frag = 8 if t.family == "gfx11" else (2 if d.fp8_wmma else 4)
    staging = 2 * -(-s.block_n * d.head_dim * (1 if d.fp8_wmma else 2) // (4 * s.threads))
    loaded = 2 * -(-s.block_n * row_bytes(d) // (4 * s.threads))
    held = fq * dts * 8 + (fq * dts * frag if s.q_in == "regs" else 0) + 24
    math = fq * (s.block_n // 16) * 8 + frag + (loaded if s.prefetch else 0)
    return held + max(math, staging + loaded)


def vgpr_budget(s: PagedSchedule, d, t: Target) -> str | None:
    need = vgpr_estimate(s, d, t)
    if need > t.max_vgprs_per_wave:
        return f"needs about {need} VGPRs per lane; max {t.max_vgprs_per_wave}: lower block_n or frags_q, or add waves"
    return None


def staging_divides(s: PagedSchedule, d, t: Target) -> str | None:
    w = s.load_bits // 8
    if row_bytes(d) % w:
        return f"load_bits={s.load_bits} ({w} bytes) must divide a cache row of {row_bytes(d)} bytes"
    return None


CONSTRAINTS = (dtype_supported, fp8_wmma_supported, tile_in_block, workgroup_size, lds_budget, vgpr_budget,
               staging_divides)
PagedSchedule.bind(SPACE, CONSTRAINTS)
