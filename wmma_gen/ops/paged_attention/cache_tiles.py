"""Reading one BLOCK_N-key tile of K or V from the paged cache into registers, on the dense
forward's cooperative copy plans (kernels/staging/kv_tiles.py) -- the same thread layout, LDS layout
and `kv_tiles.store`, only the addresses differ:

    block  = block_table[b, n0 // block_size]                    (uniform: BLOCK_N | block_size)
    row r  = K_cache[block, n0 % block_size + min(r, L - 1 - n0), kv_head, :]

Rows past the sequence end L (only in its last tile) re-read row L - 1: finite data whose
scores the key mask turns into P = 0 (unwritten cache slots may hold NaN, and 0 * NaN = NaN).
The tile's block offset (block id x block stride x element bytes) is computed in signed 64 bits
and added to the cache's base pointer (uniform, SGPRs: `block_tensor`), so no block id can wrap
modulo 2**32 back into the cache -- an id outside [0, num_blocks) addresses memory outside the
buffer (the emulator faults naming the address; the numpy API refuses such ids first,
inputs.check_block_ids). The rows are kv_tiles.lane_offsets (one 32-bit unsigned byte offset per
row inside one block).

FP8 caches (OCP E4M3 / E5M2, one byte per element) are read `w` bytes per load and widened in
registers to 16-bit values before the LDS store by kernels/fp8_widen.py (byte permutes and packed 16-bit
shifts, exact for every byte): E5M2 is the high byte of an IEEE half; E4M3 becomes the half of x * 2**-8
(normals and subnormals alike, NaN to NaN), the 2**8 folded into the per-head scale (kernel.py).
bf16 queries: the half is widened to f32 and rounded to bf16 (exact: bf16 has more range and
E4M3/E5M2 have at most 3 mantissa bits).
"""
from __future__ import annotations

from dataclasses import replace

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import arith, memref, vector

from ...kernels import fp8_widen, irb, saddr
from ...kernels.attention_blocks import i32_type, iadd, imul
from ...kernels.attention import operands
from ...kernels.staging import kv_tiles



def plan(s, d, transpose: bool) -> kv_tiles.TileCopy:
    """The copy plan of one tile; fp8 rows are read load_bits / 8 bytes per load."""
    if d.fp8:
        return kv_tiles.plan(s.block_n, d.head_dim, 2 * s.load_bits, s.threads, transpose, "fp8")
    return kv_tiles.plan(s.block_n, d.head_dim, s.load_bits, s.threads, transpose, d.kv_dtype)


def block_of(c, n0):
    """Physical cache block of the tile at key n0 (one table read, uniform)."""
    i = iadd(imul(c.b, c.sc["bt_sb"]), irb.div(n0, c.d.block_size))
    return arith.index_cast(irb.index(), memref.load(c.ptr["block_table"], [i]))


def block_tensor(ptr, blk):
    """The cache tensor rebased at block `blk` (index, sign-extended): base + blk * sblk * bytes
    in i64 (module docstring: no wrap for any id)."""
    i64 = ir.IntegerType.get_signless(64)
    off = arith.muli(arith.index_cast(i64, blk), arith.index_cast(i64, ptr.strides[0]))
    off = arith.muli(off, arith.ConstantOp(i64, ptr.elem_bytes).result)
    return replace(ptr, ptr=saddr.offset_by_signed(ptr.ptr, off))


def load_tile(c, p: kv_tiles.TileCopy, which: str, n0) -> list:
    """This thread's registers of the K or V tile at key n0 as loaded (fp8: raw bytes, widened
    by `lds_values` only when stored, so the loads stay in flight across the tile's math)."""
    ptr = c.ptr[f"{which}_cache"]     # GlobalTensor (block, slot, head, dim): strides (sblk, ss, sh)
    blk = block_of(c, n0)
    base = iadd(imul(c.kvh, ptr.strides[2]), imul(irb.rem(n0, c.d.block_size), ptr.row_stride))
    offs = kv_tiles.lane_offsets(p, ptr, c.tid, base, irb.sub(irb.sub(c.seq_k, 1), n0))
    ptr, tile_off = block_tensor(ptr, blk), irb.ci(0, 32)
    if not c.d.fp8:
        return kv_tiles.load(p, ptr, offs, tile_off)
    out = []
    for off in offs:
        o = arith.addi(off, tile_off)
        out += [ptr.read_at(o, p.w, k * p.lpr * p.w) for k in range(p.cpt)]
    return out


def lds_values(d, regs: list) -> list:
    """Loaded registers -> f16-declared vectors for the LDS tile (bf16 bits reinterpreted, fp8
    widened)."""
    if d.fp8:
        return [widen(d, x) for x in regs]
    return operands.lds_half(d.dtype, regs)


def widen(d, raw):
    """vector<w x i8> of fp8 bits -> vector<w x f16> (LDS tiles are declared f16; bf16 bits
    for bf16 queries), per the module docstring."""
    n = ir.VectorType(raw.type).shape[0]
    words = vector.bitcast(irb.vec(n // 4, i32_type()), raw)
    halves = [h for j in range(n // 4) for h in fp8_widen.widen_words(d.kv_dtype, vector.extract(words, [], [j]))]
    f16 = vector.bitcast(irb.vec(n, ir.F16Type.get()), vector.from_elements(irb.vec(n // 2, i32_type()), halves))
    if d.dtype == "f16":
        return f16
    bf = arith.truncf(irb.vec(n, ir.BF16Type.get()), arith.extf(irb.vec(n, ir.F32Type.get()), f16))
    return vector.bitcast(irb.vec(n, ir.F16Type.get()), bf)
