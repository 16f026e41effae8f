"""What a user passes to wmma_gen.mla_decode, checked and normalised (nothing compiled).

Every mistake raises ScheduleError (a ValueError) naming the argument, the value and what is
allowed; block ids each sequence reads are checked against [0, num_blocks)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import hostdata
from ...errors import ScheduleError
from .directive import BLOCK_SIZES, HEAD_DIMS, MLADirective

MAX_SQ = 16   # query tokens per sequence (speculative decode)
FP8_STORAGE = {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}


@dataclass(frozen=True, eq=False)
class MLAInputs:
    directive: MLADirective
    problem: dict
    arrays: dict


def _int_array(x, name: str, ndim: int) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != ndim or a.dtype.kind not in "iu":
        raise ScheduleError(name, f"{a.dtype} {a.shape}", f"a {ndim}-D integer array")
    return a.astype(np.int32)


def mla_inputs(q, kv_cache, block_table, cache_seqlens, *, head_dim_v=512, softmax_scale=None, causal=False,
               kv_dtype=None, kv_scale=None, dtype=None) -> MLAInputs:
    q, cache = np.asarray(q), np.asarray(kv_cache)
    if dtype is None:
        if q.dtype != np.float16:
            raise ScheduleError("dtype", None, f"'f16' or 'bf16' for q of numpy dtype {q.dtype} (None infers f16 "
                                "from float16 arrays only)")
        dtype = "f16"
    if dtype not in ("f16", "bf16"):
        raise ScheduleError("dtype", dtype, "None, 'f16' or 'bf16'")
    if q.ndim != 4 or not 1 <= q.shape[1] <= MAX_SQ:
        raise ScheduleError("q", q.shape, f"(batch, seq_q, heads, head_dim) with 1 <= seq_q <= {MAX_SQ}")
    B, Sq, H, D = q.shape
    if D not in HEAD_DIMS:
        raise ScheduleError("q.shape[3]", D, f"one of {', '.join(map(str, HEAD_DIMS))} (576 in DeepSeek-V2/V3)")
    if cache.ndim != 4 or cache.shape[2] != 1 or cache.shape[3] != D or cache.shape[1] not in BLOCK_SIZES:
        raise ScheduleError("kv_cache", cache.shape, f"(num_blocks, block_size in {BLOCK_SIZES}, 1, {D}) "
                            "(one latent head; its width is q's)")
    table = _int_array(block_table, "block_table", 2)
    lens = _int_array(cache_seqlens, "cache_seqlens", 1)
    if table.shape[0] != B or lens.shape[0] != B:
        raise ScheduleError("block_table / cache_seqlens", (table.shape, lens.shape), f"batch={B} rows (q's)")
    nb, bs = cache.shape[0], cache.shape[1]
    cap = table.shape[1] * bs
    if (lens < 0).any() or (lens > cap).any():
        raise ScheduleError("cache_seqlens", lens.tolist(), f"each in [0, max_blocks * block_size = {cap}]")
    used = np.arange(table.shape[1])[None, :] < -(-lens.astype(np.int64)[:, None] // bs)
    bad = used & ((table < 0) | (table >= nb))
    if bad.any():
        b, j = (int(i) for i in np.argwhere(bad)[0])
        raise ScheduleError(f"block_table[{b}, {j}]", int(table[b, j]), f"a block id in [0, num_blocks={nb})")
    kvd = dtype if kv_dtype is None else kv_dtype
    if kvd in FP8_STORAGE:
        if cache.dtype != np.uint8:
            raise ScheduleError("kv_cache", cache.dtype, f"uint8 fp8 bytes for kv_dtype={kvd!r}")
        scale_v = 1.0 if kv_scale is None else hostdata.f32_scalar("kv_scale", kv_scale, nonzero=True)
        if not scale_v > 0:
            raise ScheduleError("kv_scale", kv_scale, "a positive finite float")
        stored = cache
    else:
        if kv_scale is not None:
            raise ScheduleError("kv_scale", kv_scale, "None unless kv_dtype is fp8e4m3 / fp8e5m2")
        stored = cache if dtype == "bf16" and cache.dtype == np.uint16 else hostdata.as_stored(cache, dtype,
                                                                                                field="kv_cache")
    d = MLADirective(dtype, D, head_dim_v, bs, kvd, bool(causal) if isinstance(causal, bool) else causal)
    scale = None
    if softmax_scale is not None:
        scale = hostdata.f32_scalar("softmax_scale", softmax_scale, nonzero=True)
        if scale < 0:
            raise ScheduleError("softmax_scale", softmax_scale, "None (1/sqrt(head_dim)) or a positive float")
    qs = q if dtype == "bf16" and q.dtype == np.uint16 else hostdata.as_stored(q, dtype, field="q")
    problem = dict(batch=B, heads=H, seq_q=Sq, num_blocks=nb, max_blocks=table.shape[1], scale=scale,
                   seq_lens=lens.tolist())
    arrays = {"Q": np.ascontiguousarray(qs), "KV_cache": np.ascontiguousarray(stored),
              "block_table": np.ascontiguousarray(table), "seq_lens": lens}
    if d.fp8:
        arrays["kv_scale"] = np.array([scale_v], np.float32)
    return MLAInputs(d, problem, arrays)
