"""WMMA fragment helpers, one per hardware object, each owning its lane layout.

Lane layouts come from wmma_gen.layouts (RDNA3 ISA guide 7.9 "WMMA" VGPR layout tables;
GPUOpen "Using the Matrix Cores of AMD RDNA 4" for gfx12). A lane of an A fragment holds
one row of the 16x16 tile and a contiguous run of K; a lane of a B fragment one column
and the same K run. Both are read from global memory (direct) or from LDS, where tiles
are kept K-contiguous as [outer][k] so every fragment read is one contiguous vector.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import amdgpu_ops as amdgpu
from ..compiler.mlir_api import arith, vector

from .. import layouts
from . import irb
from .global_tensor import GlobalTensor, Pos
from .globalmem import read_row_run, read_scalar
from .lanes import acc_coords, acc_coords_split, lane_run  # noqa: F401  (re-exported; lanes.py owns them)


def as_wmma_operand(v: ir.Value, dtype: str, n: int) -> ir.Value:
    """Reinterpret storage elements as the WMMA element type (i4 nibbles, fp8/bf8 bits)."""
    if dtype in ("i4", "fp8", "bf8"):
        return vector.bitcast(irb.vec(n, irb.value_type(dtype)), v)
    return v


def load_fragment_global(x: GlobalTensor, k_contiguous: bool, family: str, b, outer: Pos, k: Pos, lane,
                         load_bits: int) -> ir.Value:
    """A fragment (rows of A) or B fragment (columns of B) straight from global memory.

    `outer` (first row of A / column of B of the fragment) and `k` (its first K) are split
    into uniform, per-lane and constant parts (global_tensor.Pos): the uniform parts go to the
    SGPR base of the reads, the lane's run (lane_run) to its loop-invariant VGPR offset."""
    n = layouts.ab_elements(family)
    outer = Pos(outer.uniform, irb.rem(lane, 16) if outer.lane is None else irb.add(outer.lane, irb.rem(lane, 16)),
                outer.const, outer.step)
    if family == "gfx12":  # half-waves hold different K halves (lane_run)
        half = irb.mul(irb.div(lane, 16), 8)
        k = Pos(k.uniform, half if k.lane is None else irb.add(k.lane, half), k.const, k.step)
    if k_contiguous:
        if x.dtype == "i4":  # two nibbles per byte along K
            run = read_row_run(x, b, outer, k.half(), n // 2, load_bits)
        else:
            run = read_row_run(x, b, outer, k, n, load_bits)
        return as_wmma_operand(run, x.dtype, n)
    if x.dtype == "i4":
        return _gather_i4(x, b, outer, k, lane, n)
    vals = [read_scalar(x, b, k.step_plus(i), outer) for i in range(n)]
    return as_wmma_operand(vector.from_elements(irb.vec(n, irb.storage_type(x.dtype)), vals), x.dtype, n)


def _gather_i4(x: GlobalTensor, b, outer: Pos, k: Pos, lane, n: int) -> ir.Value:
    """Gather n nibbles (K runs across stored rows) into 32-bit words with integer shifts:
    a vector of i4 built element by element makes LLVM spill it to scratch. The nibble is
    the low one for an even outer index: only the lane's own part can be odd."""
    i32 = ir.IntegerType.get_signless(32)
    shift_in = arith.index_cast(i32, irb.mul(irb.rem(lane, 2), 4))  # lane%16 parity = outer parity
    col = outer.half()
    words = []
    for w in range(n // 8):
        word = None
        for i in range(8):
            byte = read_scalar(x, b, k.step_plus(8 * w + i), col)
            nib = arith.andi(arith.shrui(arith.extui(i32, byte), shift_in), irb.ci(0xF, 32))
            nib = arith.shli(nib, irb.ci(4 * i, 32)) if i else nib
            word = nib if word is None else arith.ori(word, nib)
        words.append(word)
    packed = vector.from_elements(irb.vec(n // 8, i32), words)
    return vector.bitcast(irb.vec(n, irb.value_type("i4")), packed)


def load_fragment_lds(lds: ir.Value, dtype: str, family: str, buf, base_outer, k0, lane) -> ir.Value:
    """A or B fragment from an LDS tile stored [buffer][outer][k] (k contiguous)."""
    n = layouts.ab_elements(family)
    outer, k = lane_run(family, lane, base_outer, k0)
    if dtype == "i4":
        run = vector.load(irb.vec(n // 2, irb.storage_type(dtype)), lds, [buf, outer, irb.div(k, 2)])
    else:
        run = vector.load(irb.vec(n, irb.storage_type(dtype)), lds, [buf, outer, k])
    return as_wmma_operand(run, dtype, n)


def wmma(a: ir.Value, b: ir.Value, acc: ir.Value, k: int, unsigned: bool) -> ir.Value:
    """acc += A @ B on one 16x16 tile (amdgpu.wmma -> v_wmma_*)."""
    uns = ir.UnitAttr.get() if unsigned else None
    return amdgpu.WMMAOp(16, 16, k, a, b, acc, unsignedA=uns, unsignedB=uns).result


def acc_values(family: str, acc_bits: int, acc: ir.Value):
    """The 8 accumulator values of this lane, in layouts.c_coord order."""
    return [vector.extract(acc, [], [layouts.c_vector_index(family, acc_bits, v)]) for v in range(8)]


def storage_elems(dtype: str, n: int) -> int:
    """Storage elements holding n values (i4 packs two per byte)."""
    return n // 2 if dtype == "i4" else n


def flatten_rows(rows) -> list:
    """Per-fragment lists of values as one list (what a scheduling hint or a loop carry takes)."""
    return [v for row in rows for v in row]


def unflatten_rows(vals, nf: int) -> list:
    """flatten_rows undone for `nf` rows of equal length."""
    per = len(vals) // nf
    return [list(vals[i * per:(i + 1) * per]) for i in range(nf)]
