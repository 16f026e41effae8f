"""Build contexts of the attention kernels that share the forward's blocks (bounds.py,
operands.py, softmax.py): `AttentionCtx` holds what every such kernel has -- the directive and
schedule, kernel arguments, LDS tiles, lane ids, the workgroup's split and place in the
sequence, the exp2 factor and the per-thread staging state its key loop fills in -- and each
kernel extends it: `Ctx` (dense forward, kernel.py) here, `PagedCtx` (paged decode,
ops/paged_attention/kernel.py). The shared helpers take `AttentionCtx` and read only its
fields and `query(f)`.

Fields are keyword-only (dataclass kw_only): a subclass adds required fields after the base's
defaulted ones, and the builders name what they pass.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...kernels import attention_blocks as ab
from ...kernels import attention_dsplit as dsplit
from ...kernels import irb
from ...kernels.attention_blocks import iadd, imul
from ..staging import kv_tiles


@dataclass(kw_only=True)
class AttentionCtx:
    d: object
    s: object         # the op's schedule (AttentionSchedule, PagedSchedule): block_m/n, frags_q, split_kv
    fam: str
    ptr: dict         # argument name -> GlobalTensor (saddr tensors) or flat memref view
    sc: dict          # scalar argument name -> index value (f32 scalars as given)
    lds_k: object
    lds_v: object
    lds_q: object     # None unless q_in="lds"
    tid: object
    lane: object
    wave: object
    split: object     # this workgroup's split of the keys (0 without split_kv)
    q0: object        # first query (token) of the workgroup, in the sequence
    seq_q: object
    seq_k: object
    q_start: object   # row of the sequence's first query in Q (varlen; 0 otherwise)
    b: object
    c: object         # exp2 factor of the scores (the kernel's docstring says what it folds in)
    cap_in: object = None  # the factor inside softcap's tanh (softcap only)
    copy_k: kv_tiles.TileCopy = None
    copy_v: kv_tiles.TileCopy = None
    bands: list = None    # per 16-query block: (lo, count) of the lane's visible keys
    full: tuple = None    # (full_lo, full_hi): keys every query of the workgroup sees
    dwave: object = None  # d_split > 1: the wave's head-dim slice (kernels/attention_dsplit.py); None: all of D
    xchg: object = None   # d_split > 1: the LDS buffer of the S^T partial exchange

    def d_slice(self):
        """(nk, dcol): the wave's 16-column head-dim tiles and its first column (None: all of D,
        from 0). With d_split > 1 slices are ceil(D/16/d_split) tiles; the last wave's may run
        past D (`d_tile_inside`)."""
        dts = self.d.head_dim // 16
        if self.dwave is None:
            return dts, None
        nk = -(-dts // self.s.d_split)
        return nk, imul(self.dwave, 16 * nk)

    def d_split_guard_free(self, kd: int) -> bool:
        """Tile kd of every wave's head-dim slice lies inside D (no guard needed)."""
        if self.dwave is None:
            return True
        dts = self.d.head_dim // 16
        nk = -(-dts // self.s.d_split)
        return kd < dts - (self.s.d_split - 1) * nk

    def d_tile_inside(self, kd: int):
        """None when tile kd of every wave's slice lies inside D, else the wave-uniform i1 'it does'."""
        dts = self.d.head_dim // 16
        if self.d_split_guard_free(kd):
            return None
        nk = -(-dts // self.s.d_split)
        return irb.lt(iadd(imul(self.dwave, nk), kd), dts)

    def query(self, f: int):
        """The lane's query (in the sequence) in its wave's 16-query block f."""
        raise NotImplementedError(f"{type(self).__name__}.query")


@dataclass(kw_only=True)
class Ctx(AttentionCtx):
    """The dense forward's context (kernel.py)."""
    q_base: object    # element offset of Q[b, q_start, h, 0] (GlobalTensor.row_base)
    k_base: object
    v_base: object
    o_base: object    # O's element offset of the sequence's row 0 (None with split_kv: no O)
    lse_base: object  # flat index of LSE[b, h, q_start] (a flat memref view: kernel.epilogue)
    h: object
    k_offs: list = None   # per-thread byte offsets of its K / V rows (kv_tiles.lane_offsets)
    v_offs: list = None

    def relaned(self) -> "Ctx":
        """This context with tid, lane and wave recomputed here from an opaque copy of the
        thread id (attention_blocks.recomputed), for code after or off the key loop's path."""
        tid = ab.recomputed(self.tid)
        wave = irb.div(tid, 32)
        dwave = None if self.dwave is None else dsplit.slice_index(wave, self.s.q_waves)[1]
        return replace(self, tid=tid, lane=irb.rem(tid, 32), wave=wave, dwave=dwave)

    def query(self, f: int):
        if self.dwave is None:
            return iadd(self.q0, iadd(imul(self.wave, 16 * self.s.frags_q), iadd(irb.rem(self.lane, 16), 16 * f)))
        qw = dsplit.slice_index(self.wave, self.s.q_waves)[0]
        return iadd(self.q0, iadd(imul(qw, 16 * self.s.frags_q), iadd(irb.rem(self.lane, 16), 16 * f)))
