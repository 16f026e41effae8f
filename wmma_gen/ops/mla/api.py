"""wmma_gen.mla_decode(): numpy in, numpy out, through the MLA decode kernel and its split-KV
combine (FlashMLA's `flash_mla_with_kvcache` convention).

    out, lse = mla_decode(q, kv_cache, block_table, cache_seqlens, head_dim_v=512,
                          softmax_scale=None, causal=False)

q (batch, Sq, heads, 576) with Sq = 1..16; kv_cache (num_blocks, block_size, 1, 576): one latent
row per token (kv_lora_rank 512 + rope 64), V its first head_dim_v values; block_table (batch,
max_blocks) int32; cache_seqlens (batch,) int32 (query i at position L - Sq + i; causal is
bottom-right). Arrays: float16 (bf16 as uint16 bits or float arrays with dtype="bf16"); fp8
latent caches as uint8 bytes with kv_dtype="fp8e4m3" / "fp8e5m2" and kv_scale (one float).
Returns out (batch, Sq, heads, head_dim_v) in q's dtype and lse (batch, heads, Sq) float32
(natural log; -inf and out = 0 for rows that see no key).
"""
from __future__ import annotations

from ... import hostdata
from ...device.launcher import launch
from ...device.select import arch_of, get_device
from ...knobs import as_schedule
from ...targets import get_target
from .. import registry
from ..compile_op import compile_op
from .inputs import mla_inputs
from .lookup import choose_schedule
from .schedule import MLASchedule


def compile_mla(d, s: MLASchedule, arch: str) -> dict:
    """{"mla": (src, ck), "combine": (src, ck)} through the one compile path (ops/compile_op.py)."""
    return compile_op(registry.get("mla"), d, s, None, arch).pairs()


def run_mla(inp, arch: str, device, schedule: MLASchedule | None = None, kernels: dict | None = None):
    """Launch on validated inputs; returns ({"O", "LSE"}, timings)."""
    d, p = inp.directive, inp.problem
    s = schedule if schedule is not None else choose_schedule(d, p, arch)   # exported file, else the default
    s.validate(d, get_target(arch))
    k = compile_mla(d, s, arch) if kernels is None else kernels
    (src, ck), (csrc, cck) = k["mla"], k["combine"]
    outs, t1 = launch(ck, src.signature, p, device, {n: inp.arrays[n] for n in src.signature.inputs})
    final, t2 = launch(cck, csrc.signature, p, device, {n: outs[n] for n in csrc.signature.inputs})
    return final, [t1, t2]


def mla_decode(q, kv_cache, block_table, cache_seqlens, head_dim_v: int = 512, softmax_scale=None,
               causal: bool = False, *, kv_dtype: str | None = None, kv_scale=None, dtype: str | None = None,
               arch: str | None = None, device=None, schedule=None, _kernels=None):
    """MLA decode on a paged latent cache (see the module doc) -> (out, lse). Bad input raises
    ValueError naming the argument before anything is compiled or launched."""
    schedule = as_schedule(MLASchedule, schedule)
    inp = mla_inputs(q, kv_cache, block_table, cache_seqlens, head_dim_v=head_dim_v, softmax_scale=softmax_scale,
                     causal=causal, kv_dtype=kv_dtype, kv_scale=kv_scale, dtype=dtype)
    dev = get_device(device)
    outs, _ = run_mla(inp, arch_of(dev, arch), dev, schedule, _kernels)
    o = outs["O"]
    if inp.directive.dtype == "bf16":
        o = hostdata.output_array(o.tobytes(), "bf16", o.shape)
    return o, outs["LSE"]


__all__ = ["mla_decode", "compile_mla", "run_mla"]
