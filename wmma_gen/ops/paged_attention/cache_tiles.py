"""Reading one BLOCK_N-key tile of K or V from the paged cache into registers, on the dense
forward's cooperative copy plans (attention/staging.py) -- the same thread layout, LDS layout
and `staging.store`, only the addresses differ:

    block  = block_table[b, n0 // block_size]                    (uniform: BLOCK_N | block_size)
    row r  = K_cache[block, n0 % block_size + min(r, L - 1 - n0), kv_head, :]

Rows past the sequence end L (only in its last tile) re-read row L - 1: finite data whose
scores the key mask turns into P = 0 (unwritten cache slots may hold NaN, and 0 * NaN = NaN).
The tile's block offset (block id x block stride x element bytes) is computed in signed 64 bits
and added to the cache's base pointer (uniform, SGPRs: `block_tensor`), so no block id can wrap
modulo 2**32 back into the cache -- an id outside [0, num_blocks) addresses memory outside the
buffer (the emulator faults naming the address; the numpy API refuses such ids first,
inputs.check_block_ids). The rows are staging.lane_offsets (one 32-bit unsigned byte offset per
row inside one block).

FP8 caches (OCP E4M3 / E5M2, one byte per element) are read `w` bytes per load and widened in
registers to 16-bit values with byte permutes (v_perm_b32, selector byte 12 = 0x00: RDNA3 ISA
guide "V_PERM_B32", same on RDNA4) before the LDS store:
  E5M2 is the high byte of an IEEE half (both have 5 exponent bits, bias 15): h = byte << 8, exact.
  E4M3 (bias 7): h = sign << 15 | (byte & 0x7f) << 7 is an IEEE half of value x * 2**-8 for
  every finite E4M3 x, normals and subnormals alike (the exponent field moves unchanged, so
  the value scales by 2**(7-15)); the 2**8 is folded into the per-head scale (kernel.py).
  E4M3's NaN (S.1111.111) becomes 480 * 2**-8: NaN in an fp8 cache is the caller's concern.
bf16 queries: the half is widened to f32 and rounded to bf16 (exact: bf16 has more range and
E4M3/E5M2 have at most 3 mantissa bits).
"""
from __future__ import annotations

from dataclasses import replace

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import arith, memref, vector

from ...kernels import irb, saddr
from ...kernels.attention_blocks import i32_type, iadd, imul, perm_b32
from ..attention import operands, staging

E5M2_LO = 0x010C000C  # perm_b32(x, x, .) = byte0 << 8 | byte1 << 24
E5M2_HI = 0x030C020C  # byte2 << 8 | byte3 << 24


def plan(s, d, transpose: bool) -> staging.TileCopy:
    """The copy plan of one tile; fp8 rows are read load_bits / 8 bytes per load."""
    if d.fp8:
        return staging.plan(s.block_n, d.head_dim, 2 * s.load_bits, s.threads, transpose, "fp8")
    return staging.plan(s.block_n, d.head_dim, s.load_bits, s.threads, transpose, d.kv_dtype)


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


def load_tile(c, p: staging.TileCopy, which: str, n0) -> list:
    """This thread's registers of the K or V tile at key n0 as loaded (fp8: raw bytes, widened
    by `lds_values` only when stored, so the loads stay in flight across the tile's math)."""
    ptr = c.ptr[f"{which}_cache"]     # GlobalTensor (block, slot, head, dim): strides (sblk, ss, sh)
    blk = block_of(c, n0)
    base = iadd(imul(c.kvh, ptr.strides[2]), imul(irb.rem(n0, c.d.block_size), ptr.row_stride))
    offs = staging.lane_offsets(p, ptr, c.tid, base, irb.sub(irb.sub(c.seq_k, 1), n0))
    ptr, tile_off = block_tensor(ptr, blk), irb.ci(0, 32)
    if not c.d.fp8:
        return staging.load(p, ptr, offs, tile_off)
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
    i32 = i32_type()
    n = ir.VectorType(raw.type).shape[0]
    words = vector.bitcast(irb.vec(n // 4, i32), raw)
    halves = []
    for j in range(n // 4):
        x = vector.extract(words, [], [j])
        for sel in (E5M2_LO, E5M2_HI):
            h = perm_b32(x, x, sel)
            if d.kv_dtype == "fp8e4m3":
                sign = arith.andi(h, irb.ci(0x80008000 - 2 ** 32, 32))
                mag = arith.shrui(arith.andi(h, irb.ci(0x7F007F00, 32)), irb.ci(1, 32))
                h = arith.ori(sign, mag)
            halves.append(h)
    f16 = vector.bitcast(irb.vec(n, ir.F16Type.get()), vector.from_elements(irb.vec(n // 2, i32), halves))
    if d.dtype == "f16":
        return f16
    bf = arith.truncf(irb.vec(n, ir.BF16Type.get()), arith.extf(irb.vec(n, ir.F32Type.get()), f16))
    return vector.bitcast(irb.vec(n, ir.F16Type.get()), bf)
