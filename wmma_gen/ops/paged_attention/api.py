"""wmma_gen.paged_attention(): numpy in, numpy out, through the paged decode kernel and the
dense forward's split-KV combine kernel.

    o = paged_attention(q, k_cache, v_cache, block_table, seq_lens, causal=True)
    o, lse = paged_attention(..., return_lse=True)

q (batch, Sq, heads, D) with Sq = 1..16 query tokens per sequence; k_cache / v_cache
(num_blocks, block_size, kv_heads, D) in vLLM's layout (float16 arrays, bf16 as uint16 bits
or float arrays with dtype="bf16", or uint8 fp8 bits with kv_dtype="fp8e4m3" / "fp8e5m2" and
k_scale / v_scale: a float or one per kv head); block_table (batch, max_blocks) int32;
seq_lens (batch,) int32 = cached length per sequence including the Sq new tokens (query i is at
position seq_len - Sq + i; causal is bottom-right). Returns o like q and lse (batch, heads, Sq)
float32 (natural log; -inf and o = 0 for rows that see no key).

fp8_wmma=True (fp8 caches on gfx12 only): both products on fp8 WMMA instead of widening the
cache -- Q quantised per row to E4M3 in the kernel, P to E4M3 (fp8_tiles.py); a different
numerical contract (about 2**-4 relative in scores and weights), so it is the caller's choice.
q_dtype="fp8e4m3" / "fp8e5m2" (with fp8_wmma): q is uint8 fp8 bytes, used as they are (its
scale goes into `scale`); o is bf16 unless dtype says f16 (dense_fp8.py builds on it).

Chunked prefill: cu_seqlens_q (batch + 1,) int32 offsets and q packed (total_q, heads, D):
sequence b's chunk of Sq_b = cu[b+1] - cu[b] tokens (any length, 0 allowed) attends to its
seq_lens[b] cached keys (the chunk included), bottom-right; o (total_q, heads, D), lse
(heads, total_q).

Checked here: shapes, dtypes (k_cache and v_cache alike), 0 <= seq_lens[b] <= max_blocks * block_size,
the block ids each sequence reads in [0, num_blocks) (inputs.check_block_ids), scale non-zero,
fp8 scales positive and finite in f32. A negative scale is computed exactly by negating q (the
one rule of every attention entry point, numpy and torch). On the device path (ops/paged_attention/
device.py, the torch lane) the table is not read on the host; there the kernel's block offsets are
64-bit (cache_tiles.block_tensor), so an id outside the cache addresses memory outside it (the
emulator faults naming the address; a GPU faults) instead of wrapping into other blocks.
"""
from __future__ import annotations


from ... import hostdata
from ...device.launcher import launch
from ...device.select import arch_of, get_device
from ...knobs import as_schedule
from ...targets import get_target
from .. import registry
from ..compile_op import compile_op
from .directive import PagedAttentionDirective
from .inputs import paged_inputs
from .lookup import choose_schedule
from .schedule import PagedSchedule


def compile_paged(d, s: PagedSchedule, arch: str):
    """((KernelSource, CompiledKernel) of the paged kernel, same of its combine) through the one
    compile path of every op (ops/compile_op.py: memory LRU, disk index, content cache)."""
    pairs = compile_op(registry.get("paged_attention"), d, s, None, arch).pairs()
    return pairs["paged"], pairs["combine"]


def run_paged(inp, arch: str, device, schedule: PagedSchedule | None = None, kernels: dict | None = None):
    """Launch on validated inputs (inputs.paged_inputs); returns ({"O", ["LSE"]}, timings).
    `kernels`: {"paged": (src, ck), "combine": (src, ck)} to run instead of compiling (the gate)."""
    d, p = inp.directive, inp.problem
    s = schedule if schedule is not None else choose_schedule(d, p, arch)   # exported file, else the default
    s.validate(d, get_target(arch))
    (src, ck), (csrc, cck) = compile_paged(d, s, arch) if kernels is None else (kernels["paged"], kernels["combine"])
    outs, t1 = launch(ck, src.signature, p, device, {n: inp.arrays[n] for n in src.signature.inputs})
    final, t2 = launch(cck, csrc.signature, p, device,
                       {n: outs[n] if n in outs else inp.arrays[n] for n in csrc.signature.inputs})
    return final, [t1, t2]


def paged_attention(q, k_cache, v_cache, block_table, seq_lens, *, causal: bool = True, scale=None, window=None,
                    softcap=None, kv_dtype: str | None = None, k_scale=None, v_scale=None, return_lse: bool = False,
                    cu_seqlens_q=None, dtype: str | None = None, arch: str | None = None, device=None,
                    schedule=None, fp8_wmma: bool = False, q_dtype: str | None = None, _kernels=None,
                    _return_lse=None, s_aux=None, learnable_sink=None):
    """Paged-KV decode attention (see the module doc). Bad input raises ValueError naming the
    argument before anything is compiled or launched. s_aux (alias learnable_sink): (heads,)
    attention-sink logits (GPT-OSS), one more term in every row's softmax denominator (lse includes it)."""
    from ...attention_common.sinks import sink_alias
    schedule = as_schedule(PagedSchedule, schedule)
    inp = paged_inputs(q, k_cache, v_cache, block_table, seq_lens, causal=causal, scale=scale, window=window,
                       softcap=softcap, kv_dtype=kv_dtype, k_scale=k_scale, v_scale=v_scale,
                       return_lse=return_lse if _return_lse is None else _return_lse, dtype=dtype,
                       cu_seqlens_q=cu_seqlens_q, fp8_wmma=fp8_wmma, q_dtype=q_dtype,
                       s_aux=sink_alias(s_aux, learnable_sink))
    dev = get_device(device)
    outs, _ = run_paged(inp, arch_of(dev, arch), dev, schedule, _kernels)
    o = outs["O"]
    if inp.directive.dtype == "bf16":
        o = hostdata.output_array(o.tobytes(), "bf16", o.shape)
    return (o, outs.get("LSE")) if return_lse else o


__all__ = ["paged_attention", "PagedAttentionDirective", "compile_paged", "run_paged"]
