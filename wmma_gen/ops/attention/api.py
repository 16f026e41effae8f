"""wmma_gen.attention(): numpy in, numpy out, through the generated FA-2 forward kernel.

    o = attention(q, k, v, causal=False, window=None, scale=None)          # softmax(q k^T * scale) v
    o, lse = attention(q, k, v, return_lse=True)
    o = attention(q, k, v, softcap=30.0)         # Gemma-2 logit capping: 30 * tanh(q k^T * scale / 30)
    o = attention(q, k, v, s_aux=sinks)          # GPT-OSS attention sinks: one logit per query head

Layouts: "bshd" q (B, Sq, H, D), k/v (B, Sk, Hkv, D); "bhsd" q (B, H, Sq, D), k/v (B, Hkv, Sk, D);
varlen (cu_seqlens_q / cu_seqlens_k given, int32, length batch+1): q (total_q, H, D),
k/v (total_k, Hkv, D). GQA/MQA when Hkv divides H. Causal is aligned bottom-right when
Sq != Sk (query i sees key j iff j <= i + Sk - Sq); window=(left, right), -1 = unbounded.
float16 arrays give f16; dtype="bf16" rounds float arrays to bf16 on the host. Returns o in
the input dtype (bf16 values come back as float32) and lse (float32; natural log; -inf for
rows that see no key, whose o is 0). Every size is a kernel argument: one code object per
(directive flags, head_dim, dtype, schedule, arch) serves every batch, head count and length.
"""
from __future__ import annotations

from ... import hostdata
from ...device.launcher import launch
from ...device.select import arch_of, get_device
from ...targets import get_target
from .defaults import default_schedule
from ...attention_common.inputs import forward_inputs, public_scale
from ...attention_common.sinks import sink_alias
from ...errors import ScheduleError
from ...knobs import as_schedule
from .schedule import AttentionSchedule

DECODE_MAX_SQ = 16   # queries per sequence at or below which the default splits the keys
DECODE_MIN_SK = 1024


def compiled_forward(d, s: AttentionSchedule, arch: str):
    """The forward's CompiledSet ({"attention"[, "combine"]}) through ops/compile_op.py."""
    from .. import registry
    from ..compile_op import compile_op
    return compile_op(registry.get("attention"), d, s, None, arch)


def compile_attention(d, s: AttentionSchedule, arch: str):
    """(KernelSource, CompiledKernel) of the forward kernel (compile_op: LRU, disk index, cache)."""
    return compiled_forward(d, s, arch).pairs()["attention"]


def _compile_combine(d, s: AttentionSchedule, arch: str):
    return compiled_forward(d, s, arch).pairs()["combine"]


def choose_schedule(d, problem, arch: str) -> AttentionSchedule:
    """Decode shapes (few queries, long keys) split the key range so more workgroups share
    the work (combined deterministically afterwards); otherwise the exported tuned schedule
    for (arch, dtype, head_dim, mask) nearest in sequence length (lookup.py), else the default."""
    if problem.seq_q <= DECODE_MAX_SQ and problem.seq_k >= DECODE_MIN_SK:
        split = min(8, max(2, problem.seq_k // 512))
        return default_schedule(get_target(arch), d, split_kv=split)
    from .lookup import lookup
    found = lookup(arch, d, problem.seq_k, seq_q=problem.seq_q)
    return found if found is not None else default_schedule(get_target(arch), d)


def run_attention(inp, arch: str, device, schedule: AttentionSchedule | None = None):
    """Launch on validated inputs (inputs.forward_inputs); returns ({name: array}, timings)."""
    d, p = inp.directive, inp.problem
    s = schedule if schedule is not None else choose_schedule(d, p, arch)
    s.validate(d, get_target(arch))
    problem = {**p.sizes(), **p.kernel_values()}
    src, ck = compile_attention(d, s, arch)
    named = {"Q": "q", "K": "k", "V": "v"}       # kernel argument -> inputs.py array name
    feed = {n: inp.arrays[named.get(n, n)] for n in src.signature.inputs}
    outs, t1 = launch(ck, src.signature, problem, device, feed)
    if s.split_kv == 1:
        return outs, [t1]
    csrc, cck = _compile_combine(d, s, arch)
    final, t2 = launch(cck, csrc.signature, problem, device,
                       {n: outs[n] if n in outs else inp.arrays[n] for n in csrc.signature.inputs})
    return final, [t1, t2]


def attention(q, k, v, *, causal: bool = False, window=None, scale=None, return_lse: bool = False,
              cu_seqlens_q=None, cu_seqlens_k=None, layout: str = "bshd", dtype: str | None = None,
              arch: str | None = None, device=None, schedule: AttentionSchedule | None = None, softcap=None,
              descale_q=None, descale_k=None, descale_v=None, s_aux=None, learnable_sink=None):
    """Flash-attention forward on a WMMA kernel (see the module doc). softcap=c > 0 caps the
    scaled logits at c * tanh(. / c) (None or 0: off). s_aux (alias learnable_sink): (heads,)
    sink logits (GPT-OSS) joining every row's softmax denominator; lse then includes them. dtype="fp8e4m3" / "fp8e5m2" (gfx12):
    q, k, v are uint8 fp8 bytes with FA3's descale_q/k/v, run by paged_attention/dense_fp8.py.
    Bad input raises ValueError naming the argument before anything is compiled or launched."""
    s_aux = sink_alias(s_aux, learnable_sink)
    if dtype in ("fp8e4m3", "fp8e5m2"):
        if s_aux is not None:
            raise ScheduleError("s_aux", "an array", f"None for dtype={dtype!r} (sinks run with f16 / bf16 q, k, v)")
        from .. import registry     # the paged kernel runs dense fp8: its folder's dense_fp8 module, looked up
        from_attention = registry.sibling("paged_attention", "dense_fp8").from_attention
        return from_attention(q, k, v, dtype=dtype, causal=causal, window=window, scale=scale, return_lse=return_lse,
                              cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, layout=layout, arch=arch,
                              device=device, schedule=schedule, softcap=softcap, descale_q=descale_q,
                              descale_k=descale_k, descale_v=descale_v)
    schedule = as_schedule(AttentionSchedule, schedule)
    q, scale, _flipped = public_scale(q, scale)
    inp = forward_inputs(q, k, v, causal=causal, window=window, scale=scale, return_lse=return_lse,
                         cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, layout=layout, dtype=dtype,
                         softcap=softcap, s_aux=s_aux)
    dev = get_device(device)
    outs, _ = run_attention(inp, arch_of(dev, arch), dev, schedule)
    o = hostdata.user_array(outs["O"], inp.problem.dtype)
    return (o, outs["LSE"]) if return_lse else o
