"""The attention forward's OpSpec (ops/contract.py); the Problem both attention ops share is problem.py's.

The forward's KernelSet is {"attention"} plus {"combine"} when the schedule splits the keys
(split_kv > 1); every size is a kernel argument, so the specialization key is None: one code
object per (directive, schedule, arch) serves every problem."""
from __future__ import annotations

from dataclasses import asdict

from ...errors import ScheduleError
from ..contract import Axis, ModelEstimate, OpSpec
from .problem import AttentionProblem, as_problem  # noqa: F401  (the Problem both attention ops share)
from .schedule import SPACE  # noqa: F401  (light: registry.space_of)

GATE_SOFTCAP = 2.0   # the gate's cap for softcap directives: standard normal q, k give |scale q.k| up to
#                      ~4, so tanh is well into its curved range (a cap of 10 would be nearly linear)

def gate_sinks(heads: int):
    """The gate's sink logits for sinks directives: spread around a typical row's LSE (standard
    normal q, k: ~log Sk), so the sink takes a large share of some rows and little of others."""
    import numpy as np
    return np.linspace(-1.0, 4.0, heads).astype(np.float32)


AXES = (Axis("batch", int, "--batch", 1, (1,), "batch"),
        Axis("heads", int, "--heads", 2, (16,), "query heads"),
        Axis("kv_heads", int, "--kv-heads", 1, (16,), "key/value heads (divides heads)"),
        Axis("seq_q", int, "--seq-q", 40, (1024, 4096), "query length"),
        Axis("seq_k", int, "--seq-k", 72, (1024, 4096), "key length"))


def sizes(d, p) -> dict:
    """The plain mapping kernels, models and the check read (head_dim from the directive; the
    gate's cap for a softcap directive, so timing and models can fill its kernel argument)."""
    out = asdict(as_problem(p))
    if not d.window:
        out.pop("window_left"), out.pop("window_right")
    if d.softcap:
        out["softcap"] = GATE_SOFTCAP
    return {**out, "head_dim": d.head_dim}


def build(d, s, target, key=None):
    from .combine import build_attention_combine
    from .kernel import build_attention
    out = {"attention": build_attention(d, s, target)}
    if s.split_kv > 1:
        out["combine"] = build_attention_combine(d, s, target)
    return out


def signatures(d, s, target, key, symbols) -> dict:
    """What build declares per kernel, without MLIR (OpSpec.signatures: a cached launch)."""
    from .signature import attention_signature
    out = {"attention": attention_signature(d, s, symbols["attention"])}
    if "combine" in symbols:
        from .combine_signature import combine_signature
        out["combine"] = combine_signature(d, s, symbols["combine"])
    return out


def key_of(d, s, p):
    return None


def window_of(d, p):
    p = as_problem(p)
    return p.window if d.window else None


def check(cs, d, p, device=None, seed: int = 0, *, backward: bool = False):
    """The set's kernels on p's random inputs vs the float64 reference (check.check_attention)."""
    from .check import check_attention
    return check_attention(sizes(d, p), dtype=d.dtype, layout=d.layout, causal=d.causal, window=window_of(d, p),
                           backward=backward, arch=cs.arch, device=device, seed=seed, schedule=cs.schedule,
                           kernels=cs, softcap=GATE_SOFTCAP if d.softcap else None,
                           s_aux=gate_sinks(as_problem(p).heads) if getattr(d, "sinks", False) else None)


def estimate(cs, d, s, p, arch: str) -> ModelEstimate:
    from .model import estimate_attention
    e = estimate_attention(cs.kernel("attention"), d, s, sizes(d, p), arch)
    return ModelEstimate(e.seconds, e.tflops, e.limiter)


def flops_of(d, p, backward: bool) -> int:
    from .reference import attention_flops
    p = as_problem(p)
    return attention_flops(p.batch, p.heads, p.seq_q, p.seq_k, d.head_dim, d.causal, window_of(d, p),
                           backward=backward)


def flops(d, p) -> int:
    return flops_of(d, p, False)


def bucket(p) -> dict:
    """What lookup.py matches: seq = Sk; seq_q when Sq != Sk."""
    p = as_problem(p)
    return {"seq": p.seq_k} if p.seq_q == p.seq_k else {"seq": p.seq_k, "seq_q": p.seq_q}


def gate_problems(d, s, key=None) -> list[AttentionProblem]:
    """Edges inside tiles on both axes, Sq != Sk both ways, GQA: one code object serves all."""
    bm, bn = s.block_m, getattr(s, "block_n", 16)
    return [AttentionProblem(batch=2, heads=4, kv_heads=2, seq_q=bm + 7, seq_k=2 * bn + 5),
            AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=2 * bn + 3, seq_k=bm - 9 if bm > 9 else 5)]


INT32_MAX = 2**31 - 1     # window sides are i32 kernel arguments


def cli_values(op: str, given: dict) -> tuple[dict, dict]:
    """OpSpec.cli_values: --window LEFT,RIGHT -> the directive's window and the problem's sides,
    --attn-layout -> layout, and the op (attention or attention_bwd) the directive is of."""
    d = {"op": op, **({"layout": given["attn_layout"]} if "attn_layout" in given else {})}
    text = given.get("window") or ""
    if not text:
        return {**d, "window": False}, {}
    try:
        left, right = (int(x) for x in text.split(","))
    except ValueError:
        raise ScheduleError("--window", text, "LEFT,RIGHT integers >= -1 (e.g. 128,0)") from None
    if min(left, right) < -1 or max(left, right) > INT32_MAX:
        raise ScheduleError("--window", text, f"LEFT,RIGHT integers in [-1, {INT32_MAX}] (-1 = unbounded)")
    return {**d, "window": True}, {"window_left": left, "window_right": right}


def host_bytes(d, p, *, backward: bool = False) -> int:
    """Host memory of `wmma-gen check`: float64 scores, mask and exponentials per (query, key) pair
    (+ dP, dS backward) and the float64 operands (OpSpec.host_bytes)."""
    p = as_problem(p)
    per_pair = 80 if backward else 32
    return (per_pair * p.seq_q * p.seq_k
            + 48 * p.batch * d.head_dim * (p.seq_q * p.heads + 2 * p.seq_k * p.kv_heads) * (2 if backward else 1))


def report(cs, d, s, p, arch: str):
    from .report import report as analyze_report
    return analyze_report(cs, d, s, as_problem(p), arch)


def gate_window(d, p):
    """The window the tuner's gate runs a windowed kernel with: the study problem's sides capped at
    24 keys, so the small gate problems see both edges; None without a window."""
    if not d.window:
        return None
    p = as_problem(p)
    return tuple(-1 if x < 0 else min(x, 24) for x in (p.window_left, p.window_right))


def gate_check(cs, d, s, gp, p, device, seed: int = 0, *, backward: bool = False):
    """The tuner's gate (OpSpec.gate_check): the set on gate problem gp with the study's window
    (gate_window); a varlen directive packs gp's batch as sequences of unequal lengths
    (varlen_gate.py, through the API: the same compiled objects from compile_op's LRU)."""
    from dataclasses import replace
    window = gate_window(d, p)
    if d.varlen:
        from .varlen_gate import check_varlen
        return check_varlen(asdict(gp) | {"head_dim": d.head_dim}, d, window=window, arch=cs.arch, device=device,
                            seed=seed, schedule=s)
    if window:
        gp = replace(gp, window_left=window[0], window_right=window[1])
    return check(cs, d, gp, device, seed, backward=backward)


def gate_attrs(gp, r) -> dict:
    """What the tuner's gate records beyond the shared fields: the worst output and the gate
    problem's lengths."""
    return {"worst": r.worst, "seq_q": gp.seq_q, "seq_k": gp.seq_k}


def gpu_time_of(timing_sizes):
    """OpSpec.gpu_time over `timing_sizes(d, p) -> {argument: value}`: the set's kernels timed one
    after the other (varlen: valid offsets of batch sequences of Sq and Sk, varlen_gate.time_varlen)."""
    def gpu_time(device, cs, d, p) -> float:
        from ...tuner.timing import time_signature
        from .varlen_gate import time_varlen
        sizes, timer = timing_sizes(d, p), time_varlen if d.varlen else time_signature
        return sum(timer(device, ck, src.signature, sizes) for src, ck in cs.pairs().values())
    return gpu_time


def timing_sizes(d, p) -> dict:
    return {**asdict(as_problem(p)), "scale": 1.0 / d.head_dim ** 0.5}


def default_schedule(d, arch: str, p=None):
    from ...targets import get_target
    from .defaults import default_schedule as default
    return default(get_target(arch), d)


SELFTEST_DTYPES = ("f16", "bf16")
SELFTEST_PROBLEM = AttentionProblem(batch=1, heads=2, kv_heads=1, seq_q=20, seq_k=36)   # GQA, Sq != Sk
SELFTEST_HEAD_DIM = 32


def selftest_of(op: str):
    """`wmma-gen selftest`'s rows for `op` (attention or attention_bwd): bshd, not causal, on a
    tiny GQA problem whose Sq and Sk end inside tiles."""
    def rows(arch: str) -> list:
        from .directive import AttentionDirective
        return [(AttentionDirective(dt, SELFTEST_HEAD_DIM, op=op), SELFTEST_PROBLEM) for dt in SELFTEST_DTYPES]
    return rows


def torch_sdpa(torch, r):
    """`wmma-gen bench --vs torch`'s baseline: torch's scaled_dot_product_attention on ladder row
    `r` (bhsd, K = V), as (callable, FLOPs by this op's convention, label); None for other dtypes."""
    from .directive import AttentionDirective
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}.get(str(r["dtype"]))
    if dt is None:
        return None
    p = AttentionProblem(**{c: int(r[c]) for c in ("batch", "heads", "kv_heads", "seq_q", "seq_k")})
    d = AttentionDirective(str(r["dtype"]), int(r["head_dim"]), causal=bool(r["causal"]))
    q = torch.randn(p.batch, p.heads, p.seq_q, d.head_dim, dtype=dt, device="cuda")
    kv = torch.randn(p.batch, p.heads, p.seq_k, d.head_dim, dtype=dt, device="cuda")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return (lambda: sdpa(q, kv, kv, is_causal=d.causal)), flops(d, p), "torch SDPA"


def spec() -> OpSpec:
    from .api import attention
    from .directive import AttentionDirective
    from .plans import forward_plan
    from .reference import attention_forward
    from .schedule import SPACE, AttentionSchedule
    return OpSpec(
        "attention", "flash-attention forward (FA-2): O = softmax(Q K^T * scale) V, LSE", "loop",
        AttentionDirective, AttentionSchedule, SPACE, AttentionProblem, AXES, build, key_of, check, estimate,
        flops, bucket, default_schedule, gate_problems,
        tolerance="O within 3u*max|V|, LSE within 1e-5*(1+|LSE|+softcap) (u = unit roundoff of f16/bf16)",
        api=attention, reference=attention_forward, cli_values=cli_values, host_bytes=host_bytes, report=report,
        tuning_from="wmma_gen.ops.attention.tuning", selftest=selftest_of("attention"), plan=forward_plan,
        signatures=signatures,
        torch_baseline=torch_sdpa, gate_check=gate_check, gate_attrs=gate_attrs, gpu_time=gpu_time_of(timing_sizes))
