"""Flash-attention backward (FA-2 with recomputation from the forward LSE): pre-pass
Di = rowsum(dO * O), a dK/dV kernel per key tile and a dQ kernel per query tile, on WMMA.

    run_backward(q, k, v, o, do, lse, *, scale, causal, window, cu_seqlens_q, cu_seqlens_k,
                 layout, dtype, out_dtype, arch, device, schedule) -> (dq, dk, dv)
"""
from .args import BwdSpec
from .defaults import default_schedule
from .run import build_backward, make_spec, run_backward
from .schedule import AttentionBwdSchedule

__all__ = ["AttentionBwdSchedule", "BwdSpec", "build_backward", "default_schedule", "make_spec", "run_backward"]
