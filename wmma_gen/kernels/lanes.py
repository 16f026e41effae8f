"""Lane helpers: where a lane's values sit in a 16x16 WMMA tile, and the cross-lane moves
(v_permlanex16_b32, v_perm_b32) the kernels use to rearrange them. GEMM, the attention forward
and the attention backward all read their lane layouts from here (layouts.py holds the
numpy definitions from the manuals that tests check these against).

Accumulator layout (layouts.c_coord): value v of lane l is row 2v + l//16 on gfx11 (RDNA3 ISA
guide 7.9) and row 8*(l//16) + v on gfx12 (GPUOpen "Using the Matrix Cores of AMD RDNA 4").

Slot permutation. Giving row r of every 16-row block the slot
    sigma(r) = 8*(r % 2) + r // 2   (gfx11),   r   (gfx12)
makes accumulator value v of lane l slot 8*(l//16) + v on both families. The attention forward
loads matrix row sigma(m) into A row m (`a_row`: S^T's accumulator then holds key 8h+v in value
v); the backward stages per-row operands in slot order (`slot`) so the accumulator, reused as a
B operand over its rows, meets its A operand in the same order. One definition: `sigma16`.
"""
from __future__ import annotations

from ..compiler.mlir_api import ir
from ..compiler.mlir_api import llvm_ops as llvm
from ..compiler.mlir_api import rocdl_ops as rocdl
from ..compiler.mlir_api import arith, vector

from . import irb
from .irb import iadd, imul


def _i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


# --- where a lane's values sit ----------------------------------------------------------------

def lane_run(family: str, lane, base_outer, k0):
    """(outer index, first k) of the calling lane's run in a 16x16 fragment.

    One contiguous run per lane (k = 8*(lane//16) + i on gfx12) is loaded for A and B alike.
    For 16-bit types gfx12 hardware orders K differently inside the fragment (layouts.py);
    the WMMA sums over every K slot, so a permutation shared by A and B leaves D unchanged
    and the single wide load is kept (verified on the emulator, which models the hardware
    order)."""
    outer = irb.add(base_outer, irb.rem(lane, 16))
    if family == "gfx12":  # half-waves hold different K halves
        k0 = irb.add(k0, irb.mul(irb.div(lane, 16), 8))
    return outer, k0


def run_len(family: str) -> int:
    """Elements of the contiguous K run a lane holds of an A or B fragment."""
    return 16 if family == "gfx11" else 8


def run_offset(family: str, lane):
    """First k of the lane's run: 0 on gfx11 (16 elements, halves replicate), 8*(l//16) on
    gfx12 (the builder's shared run order; layouts.py / lane_run)."""
    if family == "gfx11":
        return irb.c(0)
    return imul(irb.div(lane, 16), 8)


def sigma16(family: str, m, add=iadd, mul=imul):
    """Slot of row m (0 <= m < 16, an index value) of a 16-row block: 8*(m%2) + m//2 on gfx11,
    m on gfx12 (module docstring). add/mul: the index ops to build it with (the forward's
    no-signed-wrap ones by default)."""
    if family == "gfx11":
        return add(mul(irb.rem(m, 2), 8), irb.div(m, 2))
    return m


def sigma16_const(family: str, r: int) -> int:
    """sigma16 of a compile-time row r, for any r (blocks of 16 keep their place)."""
    if family == "gfx12":
        return r
    return 16 * (r // 16) + 8 * (r % 2) + (r % 16) // 2


def slot(family: str, r):
    """Slot of stream row r (index value, any r): blocks of 16 keep their place, rows inside
    a block are permuted by sigma16 (the backward's LDS column of row r)."""
    if family == "gfx12":
        return r
    within = irb.rem(r, 16)
    return irb.add(irb.mul(irb.div(r, 16), 16), sigma16(family, within, irb.add, irb.mul))


def a_row(family: str, lane):
    """Matrix row the lane loads into an A fragment so that accumulator value v of lane l is
    row 8*(l//16)+v on both families: sigma16 of the lane's row (module docstring)."""
    return sigma16(family, irb.rem(lane, 16))


def acc_row0(lane):
    """Row of accumulator value 0 of the lane (value v is row acc_row0 + v)."""
    return imul(irb.div(lane, 16), 8)


def half_index(lane):
    """0 for lanes 0-15, 1 for lanes 16-31."""
    return irb.div(lane, 16)


def acc_coords(family: str, lane, v: int):
    """(row, col) inside the 16x16 tile of this lane's accumulator value v (layouts.c_coord)."""
    if family == "gfx11":  # row 2v + lane/16
        return irb.add(irb.div(lane, 16), 2 * v), irb.rem(lane, 16)
    return irb.add(irb.mul(irb.div(lane, 16), 8), v), irb.rem(lane, 16)  # row 8*(lane/16) + v


def acc_coords_split(family: str, lane, v: int):
    """acc_coords as (row per lane, row constant, column per lane): the row is lane//16 + 2v on
    gfx11 (RDNA3 ISA guide 7.9) and 8*(lane//16) + v on gfx12 (layouts.c_coord)."""
    if family == "gfx11":
        return irb.div(lane, 16), 2 * v, irb.rem(lane, 16)
    return irb.mul(irb.div(lane, 16), 8), v, irb.rem(lane, 16)


# --- moving values between lanes -------------------------------------------------------------

def swap_halves(x: ir.Value, full_exec: bool = False) -> ir.Value:
    """The value of lane l ^ 16 (v_permlanex16_b32 with identity lane selects: lane i of each
    16-lane row reads lane i of the other row; RDNA3 ISA guide 6.x "V_PERMLANEX16_B32",
    same instruction on RDNA4). Works on f32 or i32 values.

    The instruction's destination is also its "old" operand (kept where the source lane is
    inactive). By default the old value is x itself, which costs a v_mov (x stays live);
    full_exec=True states that every lane is active at the call (no divergent branch around
    it), so the old value is never read and is passed as poison."""
    i32 = _i32()
    v = x if x.type == i32 else arith.bitcast(i32, x)
    lo = arith.ConstantOp(i32, 0x76543210).result
    hi = arith.ConstantOp(i32, -0x1234568).result  # 0xfedcba98
    old = llvm.PoisonOp(i32).result if full_exec else v
    r = rocdl.PermlaneX16Op(i32, old, v, lo, hi, False, False).result
    return r if x.type == i32 else arith.bitcast(x.type, r)


PERM_LO = 0x05040100  # perm_b32(b, a, PERM_LO) = a[15:0] | b[15:0] << 16
PERM_HI = 0x07060302  # perm_b32(b, a, PERM_HI) = a[31:16] | b[31:16] << 16


def perm_b32(s0: ir.Value, s1: ir.Value, sel: int) -> ir.Value:
    """v_perm_b32 (llvm.amdgcn.perm): byte i of the result is byte sel[i] of the 8-byte value
    {s0, s1} (s1 = bytes 0-3, s0 = bytes 4-7) for selector bytes 0-7 (RDNA3 ISA guide,
    "V_PERM_B32"; same on RDNA4). i32 operands."""
    i32 = _i32()
    c = arith.ConstantOp(i32, sel).result
    return llvm.CallIntrinsicOp(i32, "llvm.amdgcn.perm", [s0, s1, c], [], ir.DenseI32ArrayAttr.get([])).results[0]


def p_operand(family: str, p: ir.Value, lane, full_exec: bool = False) -> ir.Value:
    """The B operand (16 keys x 16 queries) of O^T += V^T P^T from the lane's 8 converted
    probabilities (keys 8h..8h+7 of a 16-key tile, vector<8 x f16|bf16>).

    gfx12: the lane's run is exactly these 8 keys -> returned as is.
    gfx11: both half-waves need keys 0..15 in order: swap the 4 packed registers with the
    other half (v_permlanex16_b32) and order [half 0's keys, half 1's keys]. full_exec: as
    in swap_halves."""
    if family == "gfx12":
        return p
    i32 = _i32()
    et = ir.VectorType(p.type).element_type
    own = vector.bitcast(irb.vec(4, i32), p)
    first = irb.lt(lane, 16)
    regs_lo, regs_hi = [], []
    for r in range(4):
        mine = vector.extract(own, [], [r])
        other = swap_halves(mine, full_exec)
        regs_lo.append(arith.select(first, mine, other))
        regs_hi.append(arith.select(first, other, mine))
    packed = vector.from_elements(irb.vec(8, i32), regs_lo + regs_hi)
    return vector.bitcast(irb.vec(16, et), packed)
