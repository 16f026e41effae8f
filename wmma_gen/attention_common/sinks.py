"""Attention sinks (GPT-OSS's per-head `sinks`, flash-attn's `s_aux`): the argument checks
every entry point shares. The kernels take the vector as float32 (heads,)."""
from __future__ import annotations

import numpy as np

from ..errors import ScheduleError


def sink_alias(s_aux, learnable_sink):
    """flash-attn's two names for the sink vector (s_aux; learnable_sink in newer builds): one of them."""
    if s_aux is not None and learnable_sink is not None:
        raise ScheduleError("learnable_sink", "a tensor", "None when s_aux is given (they name the same sinks)")
    return s_aux if s_aux is not None else learnable_sink


def check_sinks(s_aux, heads: int) -> np.ndarray | None:
    """The sink logits as the kernels take them: None (off) or float32 (heads,), finite
    (GPT-OSS's per-head `sinks`; any real dtype is converted, as flash-attn's s_aux)."""
    if s_aux is None:
        return None
    a = np.asarray(s_aux)
    if a.dtype.kind not in "fiu" or a.dtype == np.bool_:
        raise ScheduleError("s_aux.dtype", str(a.dtype), "a real float array (one sink logit per query head)")
    if a.shape != (heads,):
        raise ScheduleError("s_aux.shape", a.shape, f"({heads},): one sink logit per query head")
    out = np.ascontiguousarray(a, dtype=np.float32)
    if not np.isfinite(out).all():
        raise ScheduleError("s_aux", a, "finite float32 values")
    out.setflags(write=False)
    return out
