"""Plans for the device-resident calls (device_calls.py): which compiled kernels run, in what
order, on what problem -- chosen once per distinct call shape and kept in a bounded LRU, so a
repeated call (every training step) only binds pointers and enqueues.

    cached_plan(op, arch, **call) -> Plan(steps=(Step(compiled, signature), ...), problem)

`call` holds everything the choice depends on (shapes, strides that change the GEMM's
specialization key, dtypes, flags); it must be hashable. Schedules come from the same lookup
the numpy API uses (exported tuned file for the arch, else the default).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ..errors import ScheduleError

MAX_PLANS = 512


@dataclass(frozen=True)
class Step:
    compiled: object
    sig: object
    templates: dict = field(default_factory=dict, compare=False)   # device/template.py, per layout


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    problem: dict


_plans: "OrderedDict[tuple, Plan]" = OrderedDict()
observers: list = []   # f(op, arch, call, plan) on every plan request (wmma_gen.torch.record_problems)


def plan_keys() -> frozenset:
    """The call shapes that have a plan (compiled kernels chosen); warm-up reports the new ones."""
    return frozenset(_plans)


def cached_plan(op: str, arch: str, **call) -> Plan:
    key = (op, arch, tuple(sorted(call.items())))
    plan = _plans.get(key)
    if plan is None:
        plan = BUILDERS[op](arch, **call)
        _plans[key] = plan
        if len(_plans) > MAX_PLANS:
            _plans.popitem(last=False)
    else:
        _plans.move_to_end(key)
    for f in observers:
        f(op, arch, call, plan)
    return plan


# ---- GEMM ------------------------------------------------------------------------------------
def _gemm(arch, *, dtype, layout, a, b, c, out, bias, beta, alpha, activation, unsigned, c0, offsets=()) -> Plan:
    from .gemm.api import default_schedule
    from .gemm.build import compile_gemm
    from .gemm.directive import LAYOUTS, GemmDirective
    from .gemm.signature import spec_key
    if layout not in LAYOUTS:
        raise ScheduleError("layout", layout, f"one of {', '.join(LAYOUTS)}: first letter a, second b; T = stored transposed")
    (sa, ta), (sb, tb) = a, b
    m, ka = sa[1:][::-1] if layout[0] == "T" else sa[1:]
    kb, n = sb[1:][::-1] if layout[1] == "T" else sb[1:]
    if ka != kb:
        raise ScheduleError("b.shape", sb, f"K={ka} to match a.shape={sa} with layout {layout}")
    batch = c[0]
    for name, shp in (("a", sa), ("b", sb)) + ((("c0", c0),) if c0 is not None else ()):
        if shp[0] not in (1, batch):
            raise ScheduleError(f"{name}.shape", shp, f"batch {batch} (c's) or 1 (broadcast)")
    if c[1:] != (m, n):
        raise ScheduleError("c.shape", c, f"({m}, {n}) or (batch, {m}, {n}) for this a and b")
    if c0 is not None and c0[1:] != (m, n):
        raise ScheduleError("c0.shape", c0, f"({m}, {n}) or (batch, {m}, {n})")
    if beta != 0.0 and c0 is None:
        raise ScheduleError("c0", None, f"an (M, N) operand when beta={beta} != 0")
    if bias is not None and bias != (n,):
        raise ScheduleError("bias.shape", bias, f"({n},): one f32 value per output column")
    f32 = lambda x: float(np.float32(x))   # the epilogue computes in f32
    d = GemmDirective(dtype, int(m), int(n), int(ka), layout=layout, batch=int(batch), out_dtype=out,
                      alpha=f32(alpha), beta=f32(beta), bias="n" if bias is not None else "",
                      activation=activation, unsigned=unsigned)
    s = default_schedule(d, arch)
    problem = {"m": d.m, "n": d.n, "k": d.k, "batch": d.batch}
    strides = {"A": (ta[0] if sa[0] > 1 else 0, ta[1]), "B": (tb[0] if sb[0] > 1 else 0, tb[1])}
    kern = compile_gemm(d, s, arch, key=spec_key(d, s, problem, strides, dict(offsets)))
    return Plan((Step(kern.compiled, kern.signature),), problem)


# ---- attention ---------------------------------------------------------------------------------
class _Shape(SimpleNamespace):
    @property
    def ndim(self):
        return len(self.shape)


def _attention_problem(*, q, k, v, o, dtype, dtypes, lse, causal, window, scale, layout, seqlens, cu,
                       softcap=None):
    from .attention.directive import DTYPES, HEAD_DIMS
    from .attention.inputs import _cu_seqlens, _dense_shapes, _scale, _window, check_softcap
    if dtype not in DTYPES:
        raise ScheduleError("q.dtype", dtype, f"one of {', '.join(DTYPES)}")
    for name, dt in dtypes:
        if name in ("k", "v", "o", "do") and dt != dtype:
            raise ScheduleError(f"{name}.dtype", dt, f"{dtype}, the dtype of q")
        if name in ("lse", "delta") and dt != "f32":
            raise ScheduleError(f"{name}.dtype", dt, "f32 (float32)")
    if v != k:
        raise ScheduleError("v.shape", v, f"{k}, the shape of k")
    if o != q:
        raise ScheduleError("o.shape", o, f"{q}, the shape of q")
    left, right = _window(window)
    if seqlens is None:
        B, Sq, Sk, H, Hkv, D = _dense_shapes(_Shape(shape=q), _Shape(shape=k), layout)
        total_q, total_k = B * Sq, B * Sk
    else:
        if layout != "bshd":
            raise ScheduleError("layout", layout, "'bshd' with cu_seqlens (packed (total, heads, head_dim))")
        if len(q) != 3 or len(k) != 3 or k[2] != q[2] or q[1] < 1 or k[1] < 1:
            raise ScheduleError("q.shape/k.shape", (q, k), "(total_q, heads, D) and (total_k, kv_heads, D) with cu_seqlens")
        (H, D), Hkv, total_q, total_k = q[1:], k[1], q[0], k[0]
        if seqlens[0] == "host":
            cq = _cu_seqlens(np.array(seqlens[1]), "cu_seqlens_q", total_q, "q.shape[0]")
            ck = _cu_seqlens(np.array(seqlens[2]), "cu_seqlens_k", total_k, "k.shape[0]")
            if len(cq) != len(ck):
                raise ScheduleError("cu_seqlens_k.shape", ck.shape, f"({len(cq)},) like cu_seqlens_q")
            B, Sq, Sk = len(cq) - 1, int(np.diff(cq).max()), int(np.diff(ck).max())
        else:
            if cu[0] < 2:
                raise ScheduleError("cu_seqlens_q.shape", cu, "(batch + 1,) with batch >= 1")
            B, Sq, Sk = cu[0] - 1, seqlens[1], seqlens[2]
    if D not in HEAD_DIMS:
        raise ScheduleError("head_dim", D, f"one of {', '.join(map(str, HEAD_DIMS))} (the last axis of q, k, v)")
    if H % Hkv:
        raise ScheduleError("num_kv_heads", Hkv, f"a divisor of num_heads={H}")
    lse_shape = (H, total_q) if seqlens is not None else (B, H, Sq)
    if lse is not None and lse != lse_shape:
        raise ScheduleError("lse.shape", lse, f"{lse_shape}")
    sizes = dict(batch=B, heads=H, kv_heads=Hkv, seq_q=Sq, seq_k=Sk, head_dim=D, total_q=total_q, total_k=total_k,
                 window_left=left, window_right=right, scale=_scale(scale, D))
    cap = check_softcap(softcap)
    if cap:           # the kernels' softcap argument exists only when it is on (attention/signature.py)
        sizes["softcap"] = cap
    return sizes, seqlens is not None


def _attention(arch, *, out_dtype=None, **call) -> Plan:
    from .attention.api import _compile_combine, choose_schedule, compile_attention
    from .attention.directive import AttentionDirective
    from ..targets import get_target
    p, varlen = _attention_problem(**call)
    d = AttentionDirective(dtype=call["dtype"], head_dim=p["head_dim"], causal=call["causal"],
                           window=(p["window_left"], p["window_right"]) != (-1, -1), varlen=varlen,
                           return_lse=call["lse"] is not None, layout=call["layout"], op="attention",
                           softcap="softcap" in p)
    s = choose_schedule(d, SimpleNamespace(seq_q=p["seq_q"], seq_k=p["seq_k"]), arch)
    s.validate(d, get_target(arch))
    src, ck = compile_attention(d, s, arch)
    steps = [Step(ck, src.signature)]
    if s.split_kv > 1:
        csrc, cck = _compile_combine(d, s, arch)
        steps.append(Step(cck, csrc.signature))
    return Plan(tuple(steps), p)


def _attention_bwd(arch, *, out_dtype, **call) -> Plan:
    from .attention_bwd.defaults import default_schedule
    from .attention_bwd.lookup import lookup
    from .attention_bwd.run import compiled_kernels, make_spec
    p, varlen = _attention_problem(**call)
    spec = make_spec(arch, call["dtype"], p["head_dim"], causal=call["causal"],
                     window=(p["window_left"], p["window_right"]) != (-1, -1), varlen=varlen,
                     layout=call["layout"], out=out_dtype, softcap="softcap" in p)
    s = lookup(arch, call["dtype"], p["head_dim"], call["causal"], p["seq_k"], seq_q=p["seq_q"],
               window=(p["window_left"], p["window_right"]) != (-1, -1), varlen=varlen) \
        or default_schedule(arch, p["head_dim"])
    steps = tuple(Step(ck, src.signature) for src, ck in compiled_kernels(spec, s).values())
    return Plan(steps, p)


BUILDERS = {"gemm": _gemm, "attention": _attention, "attention_bwd": _attention_bwd}
