"""A dense attention device call's shapes, dtypes and flags -> the problem sizes the kernels read
(both attention ops' plans: ops/attention/plans.forward_plan, ops/attention_bwd/plan.backward_plan).
Bad values raise ScheduleError naming the argument before anything is compiled."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..errors import ScheduleError


class _Shape(SimpleNamespace):
    @property
    def ndim(self):
        return len(self.shape)


def attention_problem(*, q, k, v, o, dtype, dtypes, lse, causal, window, scale, layout, seqlens, cu,
                       softcap=None, sinks=False):
    from .directive import DTYPES, HEAD_DIMS
    from .inputs import _cu_seqlens, _dense_shapes, _scale, _window, check_softcap
    if dtype not in DTYPES:
        raise ScheduleError("q.dtype", dtype, f"one of {', '.join(DTYPES)}")
    for name, dt in dtypes:
        if name in ("k", "v", "o", "do") and dt != dtype:
            raise ScheduleError(f"{name}.dtype", dt, f"{dtype}, the dtype of q")
        if name in ("lse", "delta", "sinks") and dt != "f32":
            raise ScheduleError(f"{name}.dtype", dt, "f32 (float32)")
    if v != k:
        raise ScheduleError("v.shape", v, f"{k}, the shape of k")
    if o != q:
        raise ScheduleError("o.shape", o, f"{q}, the shape of q")
    left, right = _window(window)
    if seqlens is None:
        B, Sq, Sk, H, Hkv, D = _dense_shapes(_Shape(shape=q), _Shape(shape=k), layout)
        total_q, total_k = B * Sq, B * Sk
    else:
        if layout != "bshd":
            raise ScheduleError("layout", layout, "'bshd' with cu_seqlens (packed (total, heads, head_dim))")
        if len(q) != 3 or len(k) != 3 or k[2] != q[2] or q[1] < 1 or k[1] < 1:
            raise ScheduleError("q.shape/k.shape", (q, k), "(total_q, heads, D) and (total_k, kv_heads, D) with cu_seqlens")
        (H, D), Hkv, total_q, total_k = q[1:], k[1], q[0], k[0]
        if seqlens[0] == "host":
            cq = _cu_seqlens(np.array(seqlens[1]), "cu_seqlens_q", total_q, "q.shape[0]")
            ck = _cu_seqlens(np.array(seqlens[2]), "cu_seqlens_k", total_k, "k.shape[0]")
            if len(cq) != len(ck):
                raise ScheduleError("cu_seqlens_k.shape", ck.shape, f"({len(cq)},) like cu_seqlens_q")
            B, Sq, Sk = len(cq) - 1, int(np.diff(cq).max()), int(np.diff(ck).max())
        else:
            if cu[0] < 2:
                raise ScheduleError("cu_seqlens_q.shape", cu, "(batch + 1,) with batch >= 1")
            B, Sq, Sk = cu[0] - 1, seqlens[1], seqlens[2]
    if D not in HEAD_DIMS:
        raise ScheduleError("head_dim", D, f"one of {', '.join(map(str, HEAD_DIMS))} (the last axis of q, k, v)")
    if H % Hkv:
        raise ScheduleError("num_kv_heads", Hkv, f"a divisor of num_heads={H}")
    if sinks and tuple(sinks) != (H,):      # sinks: the shape of the sink vector, or None / False
        raise ScheduleError("s_aux.shape", tuple(sinks), f"({H},): one sink logit per query head")
    lse_shape = (H, total_q) if seqlens is not None else (B, H, Sq)
    if lse is not None and lse != lse_shape:
        raise ScheduleError("lse.shape", lse, f"{lse_shape}")
    sizes = dict(batch=B, heads=H, kv_heads=Hkv, seq_q=Sq, seq_k=Sk, head_dim=D, total_q=total_q, total_k=total_k,
                 window_left=left, window_right=right, scale=_scale(scale, D))
    cap = check_softcap(softcap)
    if cap:           # the kernels' softcap argument exists only when it is on (attention/signature.py)
        sizes["softcap"] = cap
    return sizes, seqlens is not None
