"""The default MLA schedule: 4 waves (Q^T and O^T split four ways: 72 + 64 VGPRs on gfx11 at
D = 576, Dv = 512), 128-bit loads, and split_kv chosen so the grid fills the GPU: a
(sequence, 16-row tile) pair alone is B * ceil(H Sq / 16) workgroups; long contexts with few
of them split their keys until about 2 workgroups per CU or 8 tiles per split remain.
fp8 latent caches on targets with 8-bit float WMMA (gfx12) multiply natively (fp8_wmma): the
model puts it at 1.3-1.5x the widening path at 16 heads / short contexts, 1.9-2.6x at 128 heads
(WMMA-issue bound either way; the widening's VALU work leaves the loop) and equal where DRAM
bounds the step (bench/mla_table.py, results/mla_table.md; source `model`)."""
from __future__ import annotations

from ...targets import get_target
from .schedule import BLOCK_N, MLASchedule

SPLITS = (1, 2, 4, 8, 16)


def default_schedule(d, arch: str, p=None) -> MLASchedule:
    t = get_target(arch)
    native = d.fp8 and ("fp8", "f32") in t.wmma and ("bf8", "f32") in t.wmma
    base = MLASchedule(waves=4, load_bits=128, split_kv=1, fp8_wmma=native)   # 0 spills (test_mla.py)
    if p is None:
        return base
    p = dict(p) if not hasattr(p, "__dataclass_fields__") else p.__dict__
    lens = p.get("seq_lens") or [p.get("seq_len", 0)] * p["batch"]
    tiles = -(-max(lens, default=0) // BLOCK_N)
    wgs = len(lens) * -(-p["heads"] * p["seq_q"] // 16)
    target = 2 * t.cus
    split = 1
    while 2 * split in SPLITS and wgs * split < target and tiles >= 16 * split:
        split *= 2
    return base.replace(split_kv=split)
