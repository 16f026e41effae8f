"""Head-dim split across the waves of a workgroup (attention with large head dims, D > 256).

At D = 512 one wave cannot hold a 16-query block's O^T accumulators: 16 x 512 f32 over 32 lanes
is 256 VGPRs, the whole wave32 budget (RDNA3 ISA guide 3.6.4 / RDNA4 ISA guide 3.6.4: at most
256 VGPRs per wave; the 1536-VGPR SIMDs of gfx1100/gfx1201 share them among the resident
waves). So `d_split` waves share one 16-query block and each owns D/d_split head-dim columns:

    wave = q_wave + q_waves * d_wave          (q_waves = waves / d_split)
    S^T partial  = K[:, slice] @ Q^T[slice, :]            (its columns of Q and of the K tile)
    S^T          = sum over d_wave of the partials        (through LDS: `publish`, `gather_sum`)
    O^T[slice]  += V^T[slice, :] @ P^T                   (its rows of the V^T tile)

QK^T is computed once per tile (split, not repeated: no FLOP is duplicated); every wave of a
block then holds the same S^T and runs the same softmax, so m and l agree bit for bit (the sum
is taken in slot order 0..d_split-1 by every wave, its own partial re-read from LDS).

Exchange layout (f32): slot s = d_wave * q_waves + q_wave holds T = FQ * BLOCK_N/16 accumulator
tiles; tile t's 8 values of lane l sit as two 4-value halves at
((s * T + t) * 2 + half) * 128 + 4 * l, so a wave's ds_store_b128 / ds_load_b128 covers 512
contiguous bytes (no bank conflict). Size: waves * FQ * BLOCK_N * 16 * 4 bytes
(`exchange_bytes`). The caller orders it with its barriers: partials are published before a
workgroup barrier and gathered after it, and the next publish must follow a barrier that every
wave reaches only after its gather.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import arith, vector

from . import irb
from .irb import iadd, imul


def exchange_bytes(waves: int, frags_q: int, block_n: int) -> int:
    """LDS bytes of the S^T partial exchange (module docstring)."""
    return waves * frags_q * block_n * 16 * 4


def lds_f32(n: int) -> ir.MemRefType:
    """A workgroup (LDS) buffer of n f32."""
    return ir.MemRefType.get([n], ir.F32Type.get(), memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))


def slice_index(wave, q_waves: int):
    """(q_wave, d_wave) of a wave: which 16-query blocks it serves and which column slice it owns."""
    if q_waves == 1:
        return irb.c(0), wave
    return irb.rem(wave, q_waves), irb.div(wave, q_waves)


def _index(slot, t: int, ntiles: int, half: int, lane):
    return iadd(imul(iadd(imul(slot, ntiles), t), 256), iadd(imul(lane, 4), 128 * half))


def publish(buf, tiles: list, slot, lane) -> None:
    """Store this wave's accumulator tiles (vector<8xf32> each) in exchange slot `slot`."""
    for t, acc in enumerate(tiles):
        for h in range(2):
            part = vector.shuffle(acc, acc, list(range(4 * h, 4 * h + 4)))
            vector.store(part, buf, [_index(slot, t, len(tiles), h, lane)])


def gather_sum(buf, ntiles: int, slots: list, lane) -> list:
    """Per tile, the sum over `slots` (in that order) of the published tiles: vector<8xf32>."""
    f32 = ir.F32Type.get()
    out = []
    for t in range(ntiles):
        acc = None
        for slot in slots:
            halves = [vector.load(irb.vec(4, f32), buf, [_index(slot, t, ntiles, h, lane)]) for h in range(2)]
            v = vector.shuffle(halves[0], halves[1], list(range(8)))
            acc = v if acc is None else arith.addf(acc, v)
        out.append(acc)
    return out
