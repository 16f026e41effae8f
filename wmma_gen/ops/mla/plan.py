"""MLA's device-call plan (OpSpec.plan, read by ops/plans.cached_plan): the call's operand
shapes and dtypes and options -> the problem sizes, the directive, the default schedule and the
two kernels (mla, combine). `operands` is ((name, shape, dtype), ...) of q, kv_cache,
block_table, cache_seqlens, o, lse and kv_scale (fp8 caches)."""
from __future__ import annotations

from ...errors import ScheduleError
from ..plans import Plan, Step
from .directive import BLOCK_SIZES, HEAD_DIMS, MLADirective
from .inputs import MAX_SQ

KV_FROM_STORAGE = {"fp8": "fp8e4m3", "bf8": "fp8e5m2"}


def mla_plan(arch: str, *, operands, head_dim_v, causal, scale, kv_dtype) -> Plan:
    shapes = {n: shape for n, shape, _ in operands}
    dtypes = {n: dt for n, _, dt in operands}
    dt = dtypes["q"]
    if dt not in ("f16", "bf16"):
        raise ScheduleError("q.dtype", dt, "f16 or bf16")
    if len(shapes["q"]) != 4 or not 1 <= shapes["q"][1] <= MAX_SQ or shapes["q"][3] not in HEAD_DIMS:
        raise ScheduleError("q.shape", shapes["q"], f"(batch, seq_q <= {MAX_SQ}, heads, head_dim in {HEAD_DIMS})")
    B, Sq, H, D = shapes["q"]
    c = shapes["kv_cache"]
    if len(c) != 4 or c[1] not in BLOCK_SIZES or c[2] != 1 or c[3] != D:
        raise ScheduleError("kv_cache.shape", c, f"(num_blocks, block_size in {BLOCK_SIZES}, 1, {D})")
    kvd = kv_dtype or KV_FROM_STORAGE.get(dtypes["kv_cache"], dt)
    want = {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}.get(kvd, dt)
    if dtypes["kv_cache"] not in (want, "u8"):
        raise ScheduleError("kv_cache.dtype", dtypes["kv_cache"], f"{want} for kv_dtype={kvd}")
    bt, sl = shapes["block_table"], shapes["cache_seqlens"]
    if dtypes["block_table"] != "i32" or len(bt) != 2 or bt[0] != B:
        raise ScheduleError("block_table", f"{bt} {dtypes['block_table']}", f"int32 ({B}, max_blocks)")
    if dtypes["cache_seqlens"] != "i32" or sl != (B,):
        raise ScheduleError("cache_seqlens", f"{sl} {dtypes['cache_seqlens']}", f"int32 ({B},)")
    if shapes["o"] != (B, Sq, H, head_dim_v) or dtypes["o"] != dt:
        raise ScheduleError("out", f"{shapes['o']} {dtypes['o']}", f"{(B, Sq, H, head_dim_v)} {dt}")
    if scale is not None and not scale > 0:
        raise ScheduleError("softmax_scale", scale, "None (1/sqrt(head_dim)) or a positive float")
    d = MLADirective(dt, D, head_dim_v, c[1], kvd, causal)
    if d.fp8 and "kv_scale" not in dtypes:
        raise ScheduleError("kv_scale", None, "a float32 (1,) tensor for fp8 latent caches")
    p = dict(batch=B, heads=H, seq_q=Sq, num_blocks=c[0], max_blocks=bt[1], scale=scale)
    from .api import compile_mla             # the MLIR bindings load on the first plan, not at import
    from .lookup import choose_schedule
    s = choose_schedule(d, p, arch)           # the exported schedule of the nearest bucket, else the default
    k = compile_mla(d, s, arch)
    return Plan((Step(k["mla"][1], k["mla"][0].signature), Step(k["combine"][1], k["combine"][0].signature)), p)
