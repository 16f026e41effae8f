"""Device-resident paged decode: `paged_attention_into` writes into the caller's o (and lse) on
operands that already live on the device (torch tensors on a ROCm GPU, DLPack arrays, CPU memory
for the emulator), as ops/device_calls.attention_into does for the dense forward:

    paged_attention_into(q, k_cache, v_cache, block_table, seq_lens, o, lse=None, *, causal=True,
                         scale=None, window=None, softcap=None, kv_dtype=None, kv_scales=None,
                         cu_seqlens_q=None, max_seqlen_q=None, device=None, arch=None, stream=None,
                         alloc=None, fp8_wmma=False)

Chunked prefill: q / o packed (total_q, heads, D), lse (heads, total_q), cu_seqlens_q (batch + 1,)
int32 on the device; GPU offsets are never read on the host, so max_seqlen_q (the longest
chunk) must be given with them (as flash-attn's varlen calls).

Two enqueues on `stream` (the paged kernel, the dense forward's combine), no host copy, no sync.
The split-KV partials come from `alloc(shape, dtype, zero)` (device_calls' contract). kv_scales
(2, kv_heads) float32 on the device (row 0 K, row 1 V) is required for fp8 caches; fp8_wmma=True
(gfx12) multiplies them natively on fp8 WMMA (wmma_gen.paged_attention says how the numerics differ).
Sizes and kernels are chosen once per call shape (a bounded plan cache); seq_lens are read on
the host only when they are CPU memory (checked there: 0 <= L <= max_blocks * block_size); GPU
seq_lens and block ids are the caller's responsibility (never copied to the host).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...device.operand import as_operand
from ...errors import ScheduleError
from .. import device_calls
from ..plans import Plan, Step
from .lookup import choose_schedule
from .directive import KV_DTYPES
from .inputs import check_lens, check_options, check_shapes, directive_for

KV_FROM_STORAGE = {"fp8": "fp8e4m3", "bf8": "fp8e5m2"}
MAX_PLANS = 256
_plans: "OrderedDict[tuple, Plan]" = OrderedDict()


def _kv_dtype(named: dict, dt: str, kv_dtype) -> str:
    k = named["k_cache"].dtype
    if kv_dtype is not None and kv_dtype not in KV_DTYPES:
        raise ScheduleError("kv_dtype", kv_dtype, f"None or one of {', '.join(KV_DTYPES)}")
    want = kv_dtype or KV_FROM_STORAGE.get(k, dt)
    store = {"fp8e4m3": ("fp8", "u8"), "fp8e5m2": ("bf8", "u8")}.get(want, (dt,))
    for n in ("k_cache", "v_cache"):
        if named[n].dtype not in store:
            raise ScheduleError(f"{n}.dtype", named[n].dtype, f"{' or '.join(store)} for kv_dtype={want}")
    return want


def _offsets(named: dict, max_seqlen_q):
    """Host cu_seqlens_q for check_shapes: read from CPU memory, or for GPU offsets (never read
    on the host) a stand-in with the right ends; then max_seqlen_q (the caller's) is the grid's."""
    cu = named["cu_seqlens_q"]
    if cu.dtype != "i32" or cu.ndim != 1:
        raise ScheduleError("cu_seqlens_q", f"{cu.dtype} {cu.shape}", "a 1-D int32 tensor of batch + 1 offsets")
    if cu.device == "cpu":
        return np.array(device_calls._np_view(cu)), None
    if not isinstance(max_seqlen_q, (int, np.integer)) or isinstance(max_seqlen_q, bool) or max_seqlen_q < 1:
        raise ScheduleError("max_seqlen_q", max_seqlen_q, "an int >= 1 (the longest chunk): GPU cu_seqlens_q are "
                            "not read on the host")
    ends = np.zeros(cu.shape[0], np.int64)
    ends[-1] = named["q"].shape[0]
    return ends, int(max_seqlen_q)


def plan_for(named: dict, arch: str, **options) -> Plan:
    """(paged kernel, combine) and the problem for these operand shapes (kept per call shape);
    every request is shown to ops/plans.observers (wmma_gen.torch.record_problems)."""
    from .. import plans
    plan = _plan_for(named, arch, **options)
    for f in plans.observers:
        f("paged_attention", arch, {"named": named, **options}, plan)
    return plan


def _plan_for(named: dict, arch: str, *, causal, scale, window, softcap, kv_dtype, return_lse,
              max_seqlen_q=None, fp8_wmma=False) -> Plan:
    cu, longest = _offsets(named, max_seqlen_q) if "cu_seqlens_q" in named else (None, None)
    key = (arch, tuple((n, x.shape, x.dtype) for n, x in named.items()), causal, scale,
           None if window is None else tuple(window), softcap, kv_dtype, return_lse,
           None if cu is None else (tuple(cu), longest), fp8_wmma)
    plan = _plans.get(key)
    if plan is not None:
        _plans.move_to_end(key)
        return plan
    q = named["q"]
    q_dtype = KV_FROM_STORAGE.get(q.dtype, "")     # fp8 Q bytes (dense fp8 attention, fp8_wmma): O gives dtype
    dt = named["o"].dtype if q_dtype else q.dtype
    if dt not in ("f16", "bf16"):
        raise ScheduleError("q.dtype" if not q_dtype else "o.dtype", dt,
                            "f16 or bf16 (q may be fp8 / bf8 bytes with fp8_wmma=True, o then f16 or bf16)")
    p = check_shapes(q.shape, named["k_cache"].shape, named["v_cache"].shape, named["block_table"].shape,
                     named["seq_lens"].shape, cu)
    if longest is not None:
        p["seq_q"] = longest
    for n in ("block_table", "seq_lens"):
        if named[n].dtype != "i32":
            raise ScheduleError(f"{n}.dtype", named[n].dtype, "int32")
    if named["o"].shape != q.shape or named["o"].dtype != dt:
        raise ScheduleError("o", f"{named['o'].shape} {named['o'].dtype}", f"q's shape {q.shape} and dtype {dt}")
    p.update(check_options(causal=causal, scale=scale, window=window, softcap=softcap))
    if p["scale"] is not None and p["scale"] < 0:   # the numpy API flips q; device operands are not copied
        raise ScheduleError("scale", p["scale"], "a positive float for device operands (negate q and pass |scale|)")
    kvd = _kv_dtype(named, dt, kv_dtype)
    d = directive_for(dt, kvd, p, causal, return_lse, fp8_wmma, q_dtype)
    if d.fp8 and "kv_scales" not in named:
        raise ScheduleError("kv_scales", None, f"a float32 (2, {p['kv_heads']}) tensor (K row, V row) for fp8 caches")
    s = choose_schedule(d, p, arch)          # the exported schedule of the nearest bucket, else the default
    from .api import compile_paged          # the MLIR bindings load on the first plan, not at import
    (src, ck), (csrc, cck) = compile_paged(d, s, arch)
    plan = Plan((Step(ck, src.signature), Step(cck, csrc.signature)), p)
    _plans[key] = plan
    if len(_plans) > MAX_PLANS:
        _plans.popitem(last=False)
    return plan


def paged_attention_into(q, k_cache, v_cache, block_table, seq_lens, o, lse=None, *, causal: bool = True,
                         scale=None, window=None, softcap=None, kv_dtype=None, kv_scales=None, cu_seqlens_q=None,
                         max_seqlen_q=None, device=None, arch: str | None = None, stream=None, alloc=None,
                         fp8_wmma: bool = False) -> None:
    """Paged decode attention into o (batch, Sq, heads, D) and lse (batch, heads, Sq) f32 when
    given; see the module doc and wmma_gen.paged_attention for shapes and semantics."""
    named = {n: as_operand(x, n) for n, x in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache),
                                               ("block_table", block_table), ("seq_lens", seq_lens), ("o", o),
                                               ("lse", lse), ("kv_scales", kv_scales), ("cu_seqlens_q", cu_seqlens_q))
             if x is not None}
    device, arch, alloc, _keep = device_calls._place(named, device, arch, alloc)
    plan = plan_for(named, arch, causal=causal, scale=scale, window=window, softcap=softcap, kv_dtype=kv_dtype,
                    return_lse=lse is not None, max_seqlen_q=max_seqlen_q, fp8_wmma=fp8_wmma)
    if named["seq_lens"].device == "cpu":
        check_lens(device_calls._np_view(named["seq_lens"]), plan.problem["max_blocks"] * plan.problem["block_size"])
    ops = {"Q": named["q"], "K_cache": named["k_cache"], "V_cache": named["v_cache"],
           "block_table": named["block_table"], "seq_lens": named["seq_lens"], "O": named["o"]}
    for n, k in (("lse", "LSE"), ("kv_scales", "kv_scales"), ("cu_seqlens_q", "cu_seqlens_q")):
        if n in named:
            ops[k] = named[n]
    device_calls._run(plan, device, ops, alloc, stream)
