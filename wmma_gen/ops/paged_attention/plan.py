"""The paged op's device-call plan (OpSpec.plan, read by ops/plans.cached_plan): the call's
operand shapes and dtypes, options and (CPU-read) query offsets -> the problem sizes, the
directive, the exported-or-default schedule and the two kernels (paged, combine).

`operands` is ((name, shape, dtype), ...) of the operands given (q, k_cache, v_cache,
block_table, seq_lens, o, and lse, kv_scales, cu_seqlens_q, sinks when present): the call is hashable,
so cached_plan keys its LRU by it. `offsets` is None (dense) or (host cu_seqlens_q, longest
chunk or None) as device.py read them."""
from __future__ import annotations

import numpy as np

from ...errors import ScheduleError
from ..plans import Plan, Step
from .directive import KV_DTYPES
from .inputs import check_options, check_shapes, directive_for
from .lookup import choose_schedule

KV_FROM_STORAGE = {"fp8": "fp8e4m3", "bf8": "fp8e5m2"}   # operand storage dtype of fp8 bytes -> the KV format


def kv_dtype_of(dtypes: dict, dt: str, kv_dtype) -> str:
    """The KV-cache format: kv_dtype when given (checked), else the one the cache's storage says."""
    if kv_dtype is not None and kv_dtype not in KV_DTYPES:
        raise ScheduleError("kv_dtype", kv_dtype, f"None or one of {', '.join(KV_DTYPES)}")
    want = kv_dtype or KV_FROM_STORAGE.get(dtypes["k_cache"], dt)
    store = {"fp8e4m3": ("fp8", "u8"), "fp8e5m2": ("bf8", "u8")}.get(want, (dt,))
    for n in ("k_cache", "v_cache"):
        if dtypes[n] not in store:
            raise ScheduleError(f"{n}.dtype", dtypes[n], f"{' or '.join(store)} for kv_dtype={want}")
    return want


def dtypes_of(operands) -> tuple[str, str]:
    """(dtype, q_dtype): the attention dtype (O's when Q holds fp8 bytes) and Q's fp8 format or ""."""
    dtypes = {n: dt for n, _, dt in operands}
    q_dtype = KV_FROM_STORAGE.get(dtypes["q"], "")     # fp8 Q bytes (dense fp8 attention, fp8_wmma): O gives dtype
    return (dtypes["o"] if q_dtype else dtypes["q"]), q_dtype


def paged_plan(arch: str, *, operands, causal, scale, window, softcap, kv_dtype, return_lse, offsets=None,
               fp8_wmma=False) -> Plan:
    """(paged kernel, combine) and the problem for this call shape; ScheduleError naming the
    operand or option that is not allowed."""
    shapes = {n: shape for n, shape, _ in operands}
    dtypes = {n: dt for n, _, dt in operands}
    dt, q_dtype = dtypes_of(operands)
    if dt not in ("f16", "bf16"):
        raise ScheduleError("q.dtype" if not q_dtype else "o.dtype", dt,
                            "f16 or bf16 (q may be fp8 / bf8 bytes with fp8_wmma=True, o then f16 or bf16)")
    cu, longest = (None, None) if offsets is None else (np.array(offsets[0]), offsets[1])
    p = check_shapes(shapes["q"], shapes["k_cache"], shapes["v_cache"], shapes["block_table"],
                     shapes["seq_lens"], cu)
    if longest is not None:
        p["seq_q"] = longest
    for n in ("block_table", "seq_lens"):
        if dtypes[n] != "i32":
            raise ScheduleError(f"{n}.dtype", dtypes[n], "int32")
    if shapes["o"] != shapes["q"] or dtypes["o"] != dt:
        raise ScheduleError("o", f"{shapes['o']} {dtypes['o']}", f"q's shape {shapes['q']} and dtype {dt}")
    p.update(check_options(causal=causal, scale=scale, window=window, softcap=softcap))
    if p["scale"] is not None and p["scale"] < 0:   # the numpy API flips q; device operands are not copied
        raise ScheduleError("scale", p["scale"], "a positive float for device operands (negate q and pass |scale|)")
    if "sinks" in dtypes and (dtypes["sinks"] != "f32" or shapes["sinks"] != (p["heads"],)):
        raise ScheduleError("s_aux", f"{shapes['sinks']} {dtypes['sinks']}", f"float32 ({p['heads']},): one sink "
                            "logit per query head")
    d = directive_for(dt, kv_dtype_of(dtypes, dt, kv_dtype), p, causal, return_lse, fp8_wmma, q_dtype,
                      "sinks" in dtypes)
    if d.fp8 and "kv_scales" not in dtypes:
        raise ScheduleError("kv_scales", None, f"a float32 (2, {p['kv_heads']}) tensor (K row, V row) for fp8 caches")
    from .api import compile_paged          # the MLIR bindings load on the first plan, not at import
    s = choose_schedule(d, p, arch)          # the exported schedule of the nearest bucket, else the default
    (src, ck), (csrc, cck) = compile_paged(d, s, arch)
    return Plan((Step(ck, src.signature), Step(cck, csrc.signature)), p)
