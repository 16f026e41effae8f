"""The forward kernel's build context (kernel.py makes it, bounds.py and operands.py read it):
the directive and schedule, kernel arguments, LDS buffers, lane ids, the workgroup's place in
the sequence and the per-thread staging state the key loop fills in."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...kernels import attention_blocks as ab
from ...kernels import irb
from ...kernels.attention_blocks import iadd, imul
from . import staging
from .schedule import AttentionSchedule


@dataclass
class Ctx:
    d: object
    s: AttentionSchedule
    fam: str
    ptr: dict
    sc: dict
    lds_k: object
    lds_v: object
    lds_q: object
    tid: object
    lane: object
    wave: object
    split: object
    q0: object        # first query of the workgroup (in the sequence)
    seq_q: object
    seq_k: object
    q_base: object    # flat index of Q[b, q_start, h, 0]
    k_base: object
    v_base: object
    o_base: object
    lse_base: object  # flat index of LSE[b, h, q_start]
    c: object         # exp2 factor of the scores: scale * log2(e) (softcap * log2(e) with softcap)
    b: object
    h: object
    q_start: object
    copy_k: staging.TileCopy = None
    copy_v: staging.TileCopy = None
    k_offs: list = None   # per-thread byte offsets of its K / V rows (staging.lane_offsets)
    v_offs: list = None
    bands: list = None    # per 16-query block: (lo, count) of the lane's visible keys (lane_values="keep")
    full: tuple = None    # (full_lo, full_hi): keys every query of the workgroup sees
    cap_in: object = None  # scale / softcap (softcap only)

    def relaned(self) -> "Ctx":
        """This context with tid, lane and wave recomputed here from an opaque copy of the
        thread id (attention_blocks.recomputed), for code after or off the key loop's path."""
        tid = ab.recomputed(self.tid)
        return replace(self, tid=tid, lane=irb.rem(tid, 32), wave=irb.div(tid, 32))

    def query(self, f: int):
        """The lane's query (in the sequence) in its wave's 16-query block f."""
        return iadd(self.q0, iadd(imul(self.wave, 16 * self.s.frags_q), iadd(irb.rem(self.lane, 16), 16 * f)))
