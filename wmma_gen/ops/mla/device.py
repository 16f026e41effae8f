"""Device-resident MLA decode: `mla_decode_into` writes into the caller's out and lse on
operands that already live on the device (torch tensors on a ROCm GPU, CPU memory for the
emulator), as paged decode's device call does:

    mla_decode_into(q, kv_cache, block_table, cache_seqlens, out, lse, *, head_dim_v=512,
                    softmax_scale=None, causal=False, kv_dtype=None, kv_scale=None, device=None,
                    arch=None, stream=None, alloc=None)

Two enqueues on `stream` (mla, combine), no host copy, no sync; the split-KV partials come from
`alloc(shape, dtype, zero)`. The split count is chosen from the table's capacity (max_blocks *
block_size), the longest context the call can have: lengths are not read on the host. Lengths
and block ids are the caller's responsibility on the device (a bad id faults: 64-bit block
offsets, kernel.py)."""
from __future__ import annotations

from ...device.operand import as_operand
from .. import device_calls, plans


def mla_decode_into(q, kv_cache, block_table, cache_seqlens, out, lse, *, head_dim_v: int = 512, softmax_scale=None,
                    causal: bool = False, kv_dtype=None, kv_scale=None, device=None, arch: str | None = None,
                    stream=None, alloc=None) -> None:
    named = {n: as_operand(x, n) for n, x in (("q", q), ("kv_cache", kv_cache), ("block_table", block_table),
                                               ("cache_seqlens", cache_seqlens), ("o", out), ("lse", lse),
                                               ("kv_scale", kv_scale)) if x is not None}
    device, arch, alloc, _keep = device_calls.place_operands(named, device, arch, alloc)
    operands = tuple((n, tuple(x.shape), x.dtype) for n, x in named.items())
    plan = plans.cached_plan("mla", arch, operands=operands, head_dim_v=head_dim_v, causal=bool(causal),
                             scale=None if softmax_scale is None else float(softmax_scale), kv_dtype=kv_dtype)
    ops = {"Q": named["q"], "KV_cache": named["kv_cache"], "block_table": named["block_table"],
           "seq_lens": named["cache_seqlens"], "O": named["o"], "LSE": named["lse"]}
    if "kv_scale" in named:
        ops["kv_scale"] = named["kv_scale"]
    device_calls.run_plan(plan, device, ops, alloc, stream)
