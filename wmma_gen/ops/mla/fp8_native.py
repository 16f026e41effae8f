"""MLA decode on gfx12's 8-bit float WMMA (schedule knob fp8_wmma; fp8 latent caches): the
cache's bytes go to LDS as they are and both products run on v_wmma_f32_16x16x16_{fp8,bf8}_fp8
(RDNA4 ISA guide, "V_WMMA_F32_16X16X16_FP8_FP8" / "_BF8_FP8"; GPUOpen, "Using the Matrix Cores
of AMD RDNA 4"), with kernels/fp8_wmma.py's operand layouts and quantisation:

  Q  per query row to E4M3 with s_q = amax |q| / 448. The row's 576 values are spread over the
     W waves (wave w holds columns [w D/W, (w+1) D/W), lanes l and l ^ 16 the two halves of
     each run), so the row max is the lane's and its half-wave partner's (row_amax) and then
     the W waves' through LDS_S (the partial-score buffer, free before the key loop): every
     wave quantises with the same s_q, so the W partial scores share one scale and sum as they
     are; s_q multiplies the lane's exp2 factor (its S^T column is its query row).
  P  E4M3 of P * 2**8 in place (the S^T accumulator is the P^T B run); the 2**-8 rides in the
     epilogue's v_scale with the cache's scale. E4M3 caches need no 2**8 shift (no widening).
  V^T  [Dv][16 + pad] bytes, built from the byte K tile in LDS as the 16-bit path does
     (kv_tiles.load_lds), transposed by byte permutes (fp8_wmma.store_transposed).

Per-wave VGPRs at D = 576, W = 4: Q^T 9 fragments x 2 (was x 4 as bf16/f16 on gfx12).
"""
from __future__ import annotations

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import amdgpu_ops as amdgpu
from ...compiler.mlir_api import memref

from ...kernels import attention_blocks as ab
from ...kernels import fp8_wmma, irb
from ...kernels.attention_blocks import iadd, imul
from ...kernels.staging import kv_tiles


def quantize_q(c, q: list):
    """This wave's Q^T B operands (16-bit) -> (E4M3 operands, s_q of the lane's row): the row
    max over every wave's columns (module doc). Runs with every lane on, before the key loop;
    the loop's first barrier orders these LDS_S reads before its partial scores overwrite them."""
    vals = [fp8_wmma.f32s(x) for x in q]
    amax = fp8_wmma.row_amax(c.fam, vals)
    memref.store(amax, c.lds_s, [iadd(imul(c.wave, 32), c.lane), irb.c(0)])
    amdgpu.LDSBarrierOp()
    for w in range(c.s.waves):
        amax = ab.fmax(c.fam, amax, memref.load(c.lds_s, [iadd(irb.c(32 * w), c.lane), irb.c(0)]))
    return fp8_wmma.quantize_row(vals, amax)


def v_from_lds(c) -> None:
    """LDS_V^T [Dv][16] bytes from the first Dv columns of the byte tile LDS_K."""
    vals = kv_tiles.load_lds(c.copy_v, c.lds_k, c.tid, ir.IntegerType.get_signless(8))
    fp8_wmma.store_transposed(c.copy_v, c.lds_v, c.tid, vals)


def partial_scores(c, q8: list):
    """This wave's S^T partial over its D/W latent columns: K8 [16 keys][its columns] @ Q8^T."""
    fam, t = c.fam, fp8_wmma.cache_type(c.d.kv_dtype)
    row = ab.a_row(fam, c.lane)
    col = iadd(imul(c.wave, 16 * len(q8)), ab.run_offset(fam, c.lane))
    acc = irb.zeros(irb.vec(8, ab.f32_type()))
    for j, b in enumerate(q8):
        acc = ab.wmma(fp8_wmma.a_run(c.lds_k, row, iadd(col, 16 * j), t), b, acc)
    return acc


def pv(c, p, o: list) -> list:
    """O^T[dt] += V8^T[this wave's rows dt] @ P8^T (P: the lane's 8 f32 probabilities)."""
    fam, t = c.fam, fp8_wmma.cache_type(c.d.kv_dtype)
    p8 = fp8_wmma.p_operand(p)
    row = iadd(ab.a_row(fam, c.lane), imul(c.wave, 16 * len(o)))
    col = ab.run_offset(fam, c.lane)
    return [ab.wmma(fp8_wmma.a_run(c.lds_v, iadd(row, 16 * dt), col, t), p8, acc) for dt, acc in enumerate(o)]
