"""What a user passes to wmma_gen.paged_attention, checked and normalised (nothing compiled).

    paged_inputs(q, k_cache, v_cache, block_table, seq_lens, *, causal, scale, window, softcap,
                 kv_dtype, k_scale, v_scale, return_lse, dtype) -> PagedInputs(directive, problem, arrays)

Every mistake raises ScheduleError (a ValueError) naming the argument, the value and what is
allowed. Block ids are checked against [0, num_blocks) for the blocks each sequence reads
(the table is host-visible here; the device path cannot read it without a sync).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import hostdata
from ...errors import ScheduleError
from ...attention_common.sinks import check_sinks
from .directive import BLOCK_SIZES, HEAD_DIMS, KV_DTYPES, PagedAttentionDirective

MAX_SQ = 16   # query tokens per sequence in the dense (decode) form; chunks go packed (varlen)
FP8_STORAGE = {"fp8e4m3": "fp8", "fp8e5m2": "bf8"}


@dataclass(frozen=True, eq=False)
class PagedInputs:
    directive: PagedAttentionDirective
    problem: dict
    arrays: dict


def _dtype(q: np.ndarray, dtype) -> str:
    if dtype is None:
        if q.dtype == np.float16:
            return "f16"
        raise ScheduleError("dtype", None, f"'f16' or 'bf16' for q of numpy dtype {q.dtype} (None infers f16 "
                            "from float16 arrays only)")
    if dtype not in ("f16", "bf16"):
        raise ScheduleError("dtype", dtype, "None, 'f16' or 'bf16'")
    return dtype


def _stored(a: np.ndarray, dtype: str, name: str) -> np.ndarray:
    if dtype == "bf16" and a.dtype == np.uint16:
        return a                                   # bf16 bits as given
    return hostdata.as_stored(a, dtype, field=name)


def _kv_scales(k_scale, v_scale, kv_heads: int, fp8: bool) -> np.ndarray | None:
    if not fp8:
        for n, x in (("k_scale", k_scale), ("v_scale", v_scale)):
            if x is not None:
                raise ScheduleError(n, x, "None unless kv_dtype is fp8e4m3 / fp8e5m2 (16-bit caches are unscaled)")
        return None
    out = np.ones((2, kv_heads), np.float32)
    for row, (n, x) in enumerate((("k_scale", k_scale), ("v_scale", v_scale))):
        if x is None:
            continue
        try:
            a = np.asarray(x, np.float64)
        except (TypeError, ValueError):
            a = np.full((), np.nan)
        with np.errstate(over="ignore", under="ignore"):
            a32 = a.astype(np.float32)       # the kernel multiplies in f32: 1e39 -> inf, 1e-50 -> 0
        if a.shape not in ((), (kv_heads,)) or not (np.isfinite(a32) & (a32 > 0)).all():
            raise ScheduleError(n, x, f"a positive finite float within the f32 range (0 < x <= "
                                f"{hostdata.F32_MAX:.8g}, not rounding to 0) or one per kv head (shape ({kv_heads},))")
        out[row] = a32
    return out


def _window(window) -> tuple[int, int]:
    if window is None:
        return -1, -1
    ok = isinstance(window, (tuple, list)) and len(window) == 2 and all(
        isinstance(w, (int, np.integer)) and not isinstance(w, bool) and w >= -1 for w in window)
    if not ok:
        raise ScheduleError("window", window, "None or (left, right) ints >= -1 (-1: unbounded)")
    return int(window[0]), int(window[1])


def check_shapes(q, k, v, table, lens, cu=None) -> dict:
    """The problem's sizes from the shapes of q, k_cache, v_cache, block_table, seq_lens; with
    cu (the host cu_seqlens_q of a chunked prefill) q is packed (total_q, heads, D)."""
    for n, sh, nd in (("q", q, 3 if cu is not None else 4), ("k_cache", k, 4), ("v_cache", v, 4),
                      ("block_table", table, 2), ("seq_lens", lens, 1)):
        if len(sh) != nd:
            raise ScheduleError(f"{n}.shape", tuple(sh), f"{nd} dimensions")
    if cu is not None:
        cu = np.asarray(cu, np.int64)
        B, total = table[0], q[0]
        if cu.shape != (B + 1,) or cu[0] != 0 or cu[-1] != total or (np.diff(cu) < 0).any():
            raise ScheduleError("cu_seqlens_q", cu.tolist(), f"{B + 1} non-decreasing int32 offsets from 0 to "
                                f"total_q={total} (q.shape[0])")
        q = (B, max(int(np.diff(cu).max(initial=1)), 1)) + tuple(q[1:])
    B, Sq, H, D = q
    nb, bs, Hkv, Dk = k
    if tuple(v) != tuple(k):
        raise ScheduleError("v_cache.shape", tuple(v), f"k_cache's shape {tuple(k)}")
    if cu is None and not 1 <= Sq <= MAX_SQ:
        raise ScheduleError("q.shape[1]", Sq, f"1..{MAX_SQ} query tokens per sequence (decode; longer chunks "
                            "go packed with cu_seqlens_q)")
    if D not in HEAD_DIMS or Dk != D:
        raise ScheduleError("q.shape[3] (head_dim)", D, f"a multiple of 16 from 16 to {HEAD_DIMS[-1]} (paged decode; "
                            f"dense attention takes up to 512) and equal to k_cache.shape[3]={Dk}")
    if bs not in BLOCK_SIZES:
        raise ScheduleError("k_cache.shape[1]", bs, f"a block size in {BLOCK_SIZES}")
    if Hkv < 1 or H % Hkv:
        raise ScheduleError("k_cache.shape[2]", Hkv, f"a divisor of the query heads {H}")
    for n, sh in (("block_table", table), ("seq_lens", lens)):
        if sh[0] != B:
            raise ScheduleError(f"{n}.shape[0]", sh[0], f"the batch {B} (q.shape[0])")
    p = dict(batch=int(B), heads=int(H), kv_heads=int(Hkv), seq_q=int(Sq), num_blocks=int(nb),
             max_blocks=int(table[1]), head_dim=int(D), block_size=int(bs))
    if cu is not None:
        p["total_q"] = int(cu[-1])
    return p


def check_lens(lens: np.ndarray, capacity: int) -> None:
    """0 <= seq_lens[b] <= max_blocks * block_size (host values)."""
    if lens.size and (lens.min() < 0 or lens.max() > capacity):
        bad = int(lens.min()) if lens.min() < 0 else int(lens.max())
        raise ScheduleError("seq_lens", bad, f"0 <= seq_len <= max_blocks * block_size = {capacity}")


def check_block_ids(table: np.ndarray, lens: np.ndarray, block_size: int, num_blocks: int) -> None:
    """Every block id a sequence reads (its first ceil(seq_len / block_size) table entries) in
    [0, num_blocks): an id outside reads outside the cache (on a GPU: other memory). Entries
    past a sequence's length are never read, so they may hold anything (vLLM pads with 0 or -1)."""
    if not table.size:
        return
    used = np.arange(table.shape[1])[None, :] < -(-lens.astype(np.int64)[:, None] // block_size)
    bad = used & ((table < 0) | (table >= num_blocks))
    if bad.any():
        b, j = (int(i) for i in np.argwhere(bad)[0])
        raise ScheduleError(f"block_table[{b}, {j}]", int(table[b, j]),
                            f"a block id in [0, num_blocks={num_blocks}) (sequence {b} reads block {j} "
                            f"of its seq_len={int(lens[b])})")


def check_options(*, causal, scale, window, softcap) -> dict:
    """Runtime values of the options (the problem's scale, softcap, window sides)."""
    if not isinstance(causal, bool):
        raise ScheduleError("causal", causal, "True or False")
    if softcap is not None and softcap != 0:
        softcap = hostdata.f32_scalar("softcap", softcap)
        if softcap <= 0:
            raise ScheduleError("softcap", softcap, "None, 0 (off) or a positive float")
    left, right = _window(window)
    scale = None if scale is None else hostdata.f32_scalar("scale", scale, nonzero=True)
    return dict(scale=scale, softcap=softcap or 0.0, window_left=left, window_right=right)


def negated(q: np.ndarray) -> np.ndarray:
    """-q, exact in every format (softmax(s q.k) = softmax(|s| (-q).k)): float arrays negated,
    stored bits (bf16 uint16, fp8 uint8) with the sign bit flipped."""
    if q.dtype == np.uint16:
        return q ^ np.uint16(0x8000)
    if q.dtype == np.uint8:
        return q ^ np.uint8(0x80)
    return -q


def directive_for(dt: str, kvd: str, p: dict, causal: bool, return_lse: bool,
                  fp8_wmma: bool = False, q_dtype: str = "", sinks: bool = False) -> PagedAttentionDirective:
    return PagedAttentionDirective(dt, p["head_dim"], p["block_size"], kvd, causal,
                                   (p["window_left"], p["window_right"]) != (-1, -1), p["softcap"] > 0, return_lse,
                                   "total_q" in p, fp8_wmma, q_dtype, sinks)


def paged_inputs(q, k_cache, v_cache, block_table, seq_lens, *, causal=True, scale=None, window=None, softcap=None,
                 kv_dtype=None, k_scale=None, v_scale=None, return_lse=False, dtype=None,
                 cu_seqlens_q=None, fp8_wmma=False, q_dtype=None, s_aux=None) -> PagedInputs:
    """q_dtype "fp8e4m3" / "fp8e5m2": q is uint8 fp8 bytes used as they are (fp8_wmma only;
    dtype names O's type then)."""
    q, k_cache, v_cache = np.asarray(q), np.asarray(k_cache), np.asarray(v_cache)
    block_table, seq_lens = np.asarray(block_table), np.asarray(seq_lens)
    cu = None if cu_seqlens_q is None else np.asarray(cu_seqlens_q)
    if cu is not None and cu.dtype != np.int32:
        raise ScheduleError("cu_seqlens_q.dtype", str(cu.dtype), "int32")
    p = check_shapes(q.shape, k_cache.shape, v_cache.shape, block_table.shape, seq_lens.shape, cu)
    for n, a in (("block_table", block_table), ("seq_lens", seq_lens)):
        if a.dtype != np.int32:
            raise ScheduleError(f"{n}.dtype", str(a.dtype), "int32")
    check_lens(seq_lens, p["max_blocks"] * p["block_size"])
    check_block_ids(block_table, seq_lens, p["block_size"], p["num_blocks"])
    if kv_dtype is not None and kv_dtype not in KV_DTYPES:
        raise ScheduleError("kv_dtype", kv_dtype, f"None or one of {', '.join(KV_DTYPES)}")
    if q_dtype is not None and q_dtype not in FP8_STORAGE:
        raise ScheduleError("q_dtype", q_dtype, "None (q in dtype) or fp8e4m3 / fp8e5m2 (uint8 bytes)")
    if q_dtype is not None and q.dtype != np.uint8:
        raise ScheduleError("q.dtype", str(q.dtype), f"uint8 bytes for q_dtype={q_dtype}")
    dt = _dtype(q, dtype) if q_dtype is None or dtype is not None else "bf16"   # fp8 q: O bf16 unless named
    kvd = kv_dtype or dt
    fp8 = kvd in FP8_STORAGE
    if k_cache.dtype != v_cache.dtype:
        raise ScheduleError("v_cache.dtype", str(v_cache.dtype), f"k_cache's dtype {k_cache.dtype} (the two "
                            "caches hold one format)")
    if fp8:
        for n, a in (("k_cache", k_cache), ("v_cache", v_cache)):
            if a.dtype != np.uint8:
                raise ScheduleError(f"{n}.dtype", str(a.dtype), f"uint8 bytes for kv_dtype={kvd}")
    scales = _kv_scales(k_scale, v_scale, p["kv_heads"], fp8)
    p.update(check_options(causal=causal, scale=scale, window=window, softcap=softcap))
    if p["scale"] is not None and p["scale"] < 0:   # the kernel's running max needs scale > 0: flip q instead
        q, p["scale"] = negated(q), -p["scale"]
    sinks = check_sinks(s_aux, p["heads"])
    d = directive_for(dt, kvd, p, causal, bool(return_lse), fp8_wmma, q_dtype or "", sinks is not None)
    arrays = {"Q": q if q_dtype else _stored(q, dt, "q"),
              "K_cache": k_cache if fp8 else _stored(k_cache, dt, "k_cache"),
              "V_cache": v_cache if fp8 else _stored(v_cache, dt, "v_cache"),
              "block_table": block_table, "seq_lens": seq_lens}
    if cu is not None:
        arrays["cu_seqlens_q"] = cu
    if fp8:
        arrays["kv_scales"] = scales
    if sinks is not None:
        arrays["sinks"] = sinks
    return PagedInputs(d, p, arrays)
