"""In-kernel building blocks of the backward kernels: the tensor arguments (saddr row tensors
or flat views of bare pointers), sequence bounds (dense or cu_seqlens), the visibility band
(the rule and the tile ranges it implies: kernels/attention_mask.py) and head-dim splits.
Cooperative staging of row tiles into LDS is kernels/staging/rows.py (re-exported here).

Query-slot order. A 16x16 f32 accumulator tile (rows = queries or keys, the "stream" axis
of a backward GEMM) holds, in lane l, the 8 rows `layouts.c_coord(family, l, v)`:
  gfx11 rows 2v + l//16,  gfx12 rows 8*(l//16) + v          (layouts.py, ISA guides).
Give every row r of a 16-row block the *slot* perm(r) = 8*(r%2) + r//2 (gfx11) or r (gfx12)
(kernels/lanes.sigma16, `slot`);
then accumulator value v of lane l is slot 8*(l//16) + v on both families. The backward
reuses such a tile (P, dS) as the B operand of the next WMMA, whose K runs over the same
rows, so the A operand of that WMMA (Q^T, dO^T or K^T) is staged in LDS with its K axis in
slot order (`stage_rows(..., transposed=...)`), and per-row vectors (LSE, Di) are staged in
slot order too: a lane then reads its 8 values as one contiguous run (operands.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compiler.mlir_api import ir
from ...compiler.mlir_api import gpu_ops as gpu
from ...compiler.mlir_api import arith, memref

from ...kernels import attention_mask as am
from ...kernels import irb, lanes
from ...kernels.attention_mask import BIG, Ranges, tile_ranges  # noqa: F401  (re-exported)
from ...kernels.global_tensor import GlobalTensor
from ...kernels.irb import if_then  # noqa: F401  (re-exported for operands.py, prepass.py)
from ...kernels.staging.rows import load_row_value, stage_row_vectors, stage_rows  # noqa: F401  (re-exported)
from .args import SADDR_TENSORS, BwdSpec
LOG2E = 1.4426950408889634
FLAT = 2 ** 31 - 1


def i32():
    return ir.IntegerType.get_signless(32)


def idx(v):
    """i32 -> index (free with 32-bit index math)."""
    return arith.index_cast(irb.index(), v)


def flat(ptr, dtype: str):
    """A bare-pointer argument as a flat memref<2^31-1 x T> (addresses computed here)."""
    t = ir.MemRefType.get([FLAT], irb.storage_type(dtype))
    return memref.ReinterpretCastOp(t, ptr, [], [], [], [0], [FLAT], [1]).result


def block_id(d: str):
    return gpu.BlockIdOp(ir.Attribute.parse(f"#gpu<dim {d}>")).result


def thread_id():
    return gpu.ThreadIdOp(ir.Attribute.parse("#gpu<dim x>")).result


@dataclass
class Seq:
    """Where sequence b lives: first row of its queries/keys in the packed arrays (0 unless
    varlen) and its lengths; off = Sk - Sq aligns queries bottom-right."""
    q0: object
    k0: object
    sq: object
    sk: object

    @property
    def off(self):
        return irb.sub(self.sk, self.sq)


def seq_bounds(spec: BwdSpec, vals, b) -> Seq:
    if not spec.varlen:
        return Seq(irb.c(0), irb.c(0), idx(vals["seq_q"]), idx(vals["seq_k"]))
    cq, ck = flat(vals["cu_seqlens_q"], "i32"), flat(vals["cu_seqlens_k"], "i32")
    q0, q1 = (idx(memref.load(cq, [x])) for x in (b, irb.add(b, 1)))
    k0, k1 = (idx(memref.load(ck, [x])) for x in (b, irb.add(b, 1)))
    return Seq(q0, k0, irb.sub(q1, q0), irb.sub(k1, k0))


Tensor = GlobalTensor   # (batch, seq, head, dim) tensor or (batch, head, seq) row vector argument


@dataclass
class Shifted:
    """A Tensor whose row base is moved by `extra` elements (a wave's head-dim part)."""
    t: Tensor
    extra: object

    @property
    def ptr(self):
        return self.t.ptr

    @property
    def dtype(self):
        return self.t.dtype

    def row_base(self, b, row0, h):
        return irb.add(self.t.row_base(b, row0, h), self.extra)


def tensor(vals, name: str, dtype: str) -> Tensor:
    """The argument `name`: its global pointer (SADDR_TENSORS: Tensor.read/write) or a flat view."""
    ss = idx(vals[f"{name}_ss"]) if f"{name}_ss" in vals else irb.c(1)
    ref = vals[name] if name in SADDR_TENSORS else flat(vals[name], dtype)
    # offsets_checked: args.kernel_args gives every SADDR_TENSORS argument offset_bits=32 (the
    # launch refuses buffers over 2**32 bytes), which bounds the f32 ones (lse, delta, f32 grads)
    return Tensor(ref, dtype, (idx(vals[f"{name}_sb"]), ss, idx(vals[f"{name}_sh"])),
                  offsets_checked=name in SADDR_TENSORS)


# --- visibility (the rule: kernels/attention_mask.py) -----------------------------------------

@dataclass(frozen=True)
class Vis:
    """The kernel's visibility band (attention_mask.Band) with the sequence bounds of `Seq`."""
    band: am.Band

    @property
    def lo(self):
        return self.band.lo

    @property
    def hi(self):
        return self.band.hi

    def visible(self, i, j, seq: Seq):
        """i1: (i, j) inside the sequence and visible."""
        return self.band.visible(i, j, seq.sq, seq.sk)


def visibility(spec: BwdSpec, vals) -> Vis:
    if spec.window:
        v = am.Visibility(spec.causal, True, idx(vals["window_left"]), idx(vals["window_right"]))
    else:
        v = am.Visibility(spec.causal, False)
    return Vis(am.relative_band(v))


def head_cols(dpart, per_wave: int, j: int, blocks: int):
    """(shift, d0) of a wave's j-th 16-column head-dim block: its first column is shift + d0.
    Part dpart owns blocks dpart*per_wave + j (schedule.blocks_per_wave); when the split is
    uneven the last part's surplus blocks repeat block blocks-1 (recomputed and stored again:
    the same values to the same place). Even splits keep d0 a constant (store immediates)."""
    if blocks % per_wave == 0:
        return irb.mul(dpart, 16 * per_wave), 16 * j
    return irb.mul(irb.minu(irb.add(irb.mul(dpart, per_wave), j), blocks - 1), 16), 0


slot = lanes.slot                      # LDS column (slot) of stream row r (module docstring)
