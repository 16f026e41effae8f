"""WMMA fragment helpers: one per hardware object, each owning its lane layout.

Lane layouts come from wmma_gen.layouts (RDNA3 ISA guide 7.9; GPUOpen RDNA4 matrix-core
article). Every helper works on one 16x16 tile of A, B or C for the calling lane.
Operands are stored row-major per batch as memref<batch x rows x cols>; i4 packs two
values per byte along the stored contiguous dimension (low nibble first).
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import _amdgpu_ops_gen as amdgpu
from mlir.dialects import arith, memref, vector

from .. import layouts
from ..schedule import BITS
from . import irb


@dataclass(frozen=True)
class Operand:
    """A stored matrix operand: `ref` is memref<batch x rows x cols> (cols packed for i4).

    `k_contiguous` tells whether the WMMA depth (K) runs along the stored rows (stored
    contiguous dimension) -- true for A in N layout and for B in T layout."""
    ref: ir.Value
    dtype: str
    k_contiguous: bool


def _load_contiguous(op: Operand, b, outer, k0, n: int, load_bits: int) -> ir.Value:
    """n consecutive K elements of row `outer`, in loads of load_bits each."""
    bits = BITS[op.dtype]
    st = irb.storage_type(op.dtype)
    total = n * bits // 8 if bits < 8 else n  # storage elements in the run
    per_load = min(total, max(1, load_bits // 8 if bits < 8 else load_bits // bits))
    start = irb.div(k0, 2) if bits < 8 else k0
    parts = []
    for off in range(0, total, per_load):
        cnt = min(per_load, total - off)
        parts.append((off, vector.load(irb.vec(cnt, st), op.ref, [b, outer, irb.add(start, off)])))
    whole = parts[0][1] if len(parts) == 1 else _concat(parts, total, st)
    return _as_value_vector(whole, op.dtype, n)


def _concat(parts, total, st):
    """Join equal-length loaded pieces with vector.shuffle (pairwise, in order)."""
    vals = [p for _, p in parts]
    while len(vals) > 1:
        n = ir.VectorType(vals[0].type).shape[0]
        vals = [vector.shuffle(vals[i], vals[i + 1], list(range(2 * n))) for i in range(0, len(vals), 2)]
    return vals[0]


def _as_value_vector(v, dtype: str, n: int):
    """Reinterpret storage bytes as the WMMA element type (i4 nibbles, fp8/bf8 bits)."""
    if dtype in ("i4", "fp8", "bf8"):
        return vector.bitcast(irb.vec(n, irb.value_type(dtype)), v)
    return v


def _load_strided(op: Operand, b, outer, k0, n: int) -> ir.Value:
    """n K elements of column `outer` when K runs across stored rows: one load each."""
    if op.dtype == "i4":
        return _load_strided_i4(op, b, outer, k0, n)
    vals = [memref.load(op.ref, [b, irb.add(k0, i), outer]) for i in range(n)]
    return _as_value_vector(vector.from_elements(irb.vec(n, irb.storage_type(op.dtype)), vals), op.dtype, n)


def _load_strided_i4(op: Operand, b, outer, k0, n: int) -> ir.Value:
    """Gather n nibbles into 32-bit words with integer shifts (a vector of i4 built
    element by element makes LLVM spill it to scratch), then bitcast to vector<n x i4>."""
    i32 = ir.IntegerType.get_signless(32)
    shift_in = arith.index_cast(i32, irb.mul(irb.rem(outer, 2), 4))  # low nibble = even index
    words = []
    for w in range(n // 8):
        word = None
        for i in range(8):
            byte = memref.load(op.ref, [b, irb.add(k0, 8 * w + i), irb.div(outer, 2)])
            nib = arith.andi(arith.shrui(arith.extui(i32, byte), shift_in), irb.ci(0xF, 32))
            nib = arith.shli(nib, irb.ci(4 * i, 32)) if i else nib
            word = nib if word is None else arith.ori(word, nib)
        words.append(word)
    packed = vector.from_elements(irb.vec(n // 8, i32), words)
    return vector.bitcast(irb.vec(n, irb.value_type("i4")), packed)


def load_fragment(op: Operand, family: str, b, base_outer, k0, lane, load_bits: int) -> ir.Value:
    """A fragment (rows of A) or B fragment (columns of B) of the 16x16 tile starting at
    (base_outer, k0): lane owns outer index base_outer + lane%16 and the K run starting at
    k0 + layouts.a_k_start(lane) (gfx12 splits K between the half-waves)."""
    n = layouts.ab_elements(family)
    outer = irb.add(base_outer, irb.rem(lane, 16))
    if family == "gfx12":
        k0 = irb.add(k0, irb.mul(irb.div(lane, 16), 8))
    if op.k_contiguous:
        return _load_contiguous(op, b, outer, k0, n, load_bits)
    return _load_strided(op, b, outer, k0, n)


def wmma(a: ir.Value, b: ir.Value, acc: ir.Value, k: int, unsigned: bool) -> ir.Value:
    """D = A @ B + C on one 16x16 tile: `acc += A @ B`."""
    uns = ir.UnitAttr.get() if unsigned else None
    return amdgpu.WMMAOp(16, 16, k, a, b, acc, unsignedA=uns, unsignedB=uns).result


def acc_coords(family: str, lane, v: int):
    """(row, col) inside the 16x16 tile of accumulator value v of this lane."""
    if family == "gfx11":  # row 2v + lane/16
        return irb.add(irb.div(lane, 16), 2 * v), irb.rem(lane, 16)
    return irb.add(irb.mul(irb.div(lane, 16), 8), v), irb.rem(lane, 16)  # row 8*(lane/16) + v


def acc_values(family: str, acc_bits: int, acc: ir.Value):
    """The 8 accumulator values of this lane, in layouts.c_coord order."""
    return [vector.extract(acc, [], [layouts.c_vector_index(family, acc_bits, v)]) for v in range(8)]
