"""Device-resident entry points: the ops on operands that already live where the caller keeps
them (torch tensors on a ROCm GPU, DLPack arrays, CPU memory for the emulator).

    gemm_into(a, b, c, *, layout, bias, c0, alpha, beta, activation, unsigned, ...)
    attention_into(q, k, v, o, lse=None, *, causal, window, scale, cu_seqlens_q, cu_seqlens_k,
                   max_seqlen_q, max_seqlen_k, layout, softcap, ...)
    attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, *, same keywords)

Outputs are written into the caller's operands; every call is one or more enqueues on
`stream` (the caller's; None = the device's own) through launcher.launch_into: no host copy,
no sync. Scratch buffers a plan needs (split-K partials, split-KV partials, the backward's
delta) come from `alloc(shape, dtype, zero=False) -> Operand` (default: numpy memory for CPU
operands; GPU callers pass their own, e.g. torch.empty on the device).

Device and arch come from the operands (device/select.device_for): ROCm memory -> that GPU and
its arch, CPU memory -> the emulator (WMMA_GEN_ARCH or gfx1100). Sizes and kernels are chosen
once per distinct call shape and kept (`_plans`); later calls of that shape only bind pointers.
"""
from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from ..device.launcher import bind
from ..device.template import Template, layout_key
from ..device.operand import Operand, as_operand
from ..device.select import current_route, device_for
from ..errors import DeviceError, ScheduleError
from .plans import Plan, cached_plan

OUT_OF = {"f16": ("f16", "f32"), "bf16": ("bf16", "f32"), "i8": ("i32",), "u8": ("i32",),
          "fp8": ("f32", "f16", "bf16"), "bf8": ("f32", "f16", "bf16")}


def numpy_alloc(keep: list):
    """alloc(shape, dtype, zero) over numpy memory (CPU operands); `keep` holds the arrays."""
    np_dtype = {"f32": np.float32, "i32": np.int32, "f16": np.float16, "bf16": np.uint16}

    def alloc(shape, dtype, zero=False):
        a = np.zeros(shape, np_dtype[dtype])
        keep.append(a)
        return as_operand(a, "scratch", dtype)
    return alloc


class Prepacked:
    """A remembered call shape: its kernels as device launch closures (Device.prepack) in
    order, each with the argument names of its pointer slots, and the scratch buffers the call
    allocates per call (name, shape, dtype, zero). `run` is the whole repeat call."""
    __slots__ = ("device", "launches", "scratch", "gen")

    def __init__(self, device, launches: tuple, scratch: tuple):
        self.device, self.launches, self.scratch, self.gen = device, launches, scratch, _GEN[0]

    def run(self, ptrs: dict, stream, alloc=None) -> bool:
        """Enqueue with these addresses (argument name -> address); False (nothing enqueued)
        when forgotten (forget_call_shapes) or when scratch is needed and no alloc is given."""
        if self.gen != _GEN[0]:
            return False
        keep = None
        if self.scratch:
            if alloc is None:
                return False
            ptrs, keep = dict(ptrs), []
            for name, shape, dtype, zero in self.scratch:
                op = alloc(shape, dtype, zero=zero)
                keep.append(op)
                ptrs[name] = op.ptr
        for launch, names in self.launches:
            launch(tuple([ptrs[n] for n in names]), stream)
        return True


_fast: "OrderedDict[tuple, Prepacked]" = OrderedDict()   # device-level call key -> Prepacked
_GEN = [0]            # bumped by forget_call_shapes: every Prepacked made before is stale
MAX_FAST = 1024


def run_plan(plan: Plan, device, operands: dict, alloc, stream, fast_key: tuple | None = None):
    """Enqueue the plan's kernels in order; a buffer no operand provides is allocated once
    (contiguous) and shared by name with the later kernels (e.g. delta, O_part). Every launch
    goes through the device's prepacked launch of the step's Template (Device.prepack). Returns
    the call as a Prepacked (the replay token: `replay(token, ptrs, stream, alloc)`), also kept
    under `fast_key` when given; None for an empty problem (nothing enqueued)."""
    ops = dict(operands)
    scratch, host, ready = [], False, []
    for step in plan.steps:           # check every step before the first launch
        for a in step.sig.buffers:
            if a.name not in ops:
                shape = tuple(step.sig.shapes(plan.problem)[a.name])
                ops[a.name] = alloc(shape, a.dtype, zero=a.init == "zero")
                scratch.append((a.name, shape, a.dtype, a.init == "zero"))
        feed = {a.name: as_operand(ops[a.name], a.name) for a in step.sig.buffers}
        host = host or any(op.device == "cpu" for op in feed.values())
        key = layout_key(feed)
        t = step.templates.get(key)
        if t is None:      # first call of this layout: the full checks, then keep the packing
            b = bind(step.compiled, step.sig, plan.problem, feed)
            if 0 in b.grid:                        # an empty problem: nothing to enqueue
                return None                        # (not remembered: the checks run every time)
            t = step.templates[key] = Template.build(step.compiled, step.sig, b)
        ready.append((step, feed, t))
    launches = []
    for step, feed, t in ready:
        launch = t.native.get((device, host))
        if launch is None:
            launch = t.native[(device, host)] = device.prepack(step.compiled, t, host)
        launch(tuple(feed[n].ptr for n in t.pointers), stream)
        launches.append((launch, t.pointers))
    done = Prepacked(device, tuple(launches), tuple(scratch))
    if fast_key is not None:
        _fast[fast_key] = done
        if len(_fast) > MAX_FAST:
            _fast.popitem(last=False)
    return done


def forget_call_shapes() -> None:
    """Drop the remembered call shapes: the next call of each shape plans again (what
    wmma_gen.torch.record_problems needs to see every problem a block issues)."""
    _fast.clear()
    _GEN[0] += 1


def replay(token: "Prepacked", ptrs: dict, stream, alloc=None) -> bool:
    """Enqueue a remembered call shape again with new addresses (kernel argument name ->
    address, e.g. {"A": .., "B": .., "C": .., "bias": 0, "C0": 0}): what the repeat call of
    the op with operands of the same shapes, strides, dtypes, devices and 16-byte offsets does,
    minus building Operands and the key. False (nothing enqueued) if the shape was forgotten
    (forget_call_shapes) -- the caller then makes the full call."""
    return token.run(ptrs, stream, alloc)


def placement() -> tuple:
    """What besides the operands decides where an unrouted call runs: the routing of
    device/select.routed and, for CPU operands, WMMA_GEN_ARCH (part of every call key)."""
    route = current_route()
    return (None if route is None else id(route[0]), os.environ.get("WMMA_GEN_ARCH") if route is None else None)


def _fast_call(key: tuple, device, ptrs: dict, stream, alloc=None):
    """A repeat of a remembered call shape: the Prepacked it ran (enqueued again), or None."""
    hit = _fast.get(key)
    if hit is None or (device is not None and not isinstance(device, str) and hit.device is not device):
        return None
    return hit if hit.run(ptrs, stream, alloc) else None


def _call_key(op: str, device, arch, named: dict, *flags) -> tuple:
    """Everything a call's kernels and packing depend on besides addresses."""
    dev = device if device is None or isinstance(device, str) else id(device)
    route = current_route()
    layout = tuple((n, x.shape, x.strides, x.dtype, x.device, x.device_id,
                    isinstance(x.owner, np.ndarray) and x.owner.flags.writeable) for n, x in named.items())
    # WMMA_GEN_ARCH picks the emulator's arch: it matters only for CPU operands nobody routed
    env = os.environ.get("WMMA_GEN_ARCH") if route is None and device is None else None
    return (op, dev, arch, None if route is None else id(route[0]), env, layout, flags)


def place_operands(named: dict, device, arch, alloc):
    """(device, arch, alloc) for these operands."""
    if device is None:
        device, arch = device_for(named, arch)
    else:
        from ..device.select import arch_of, get_device
        device = get_device(device)
        arch = arch_of(device, arch)
    keep: list = []
    if alloc is None:
        alloc = numpy_alloc(keep)
        if any(op.device != "cpu" for op in named.values() if op is not None):
            alloc = _no_alloc
    return device, arch, alloc, keep


def _no_alloc(shape, dtype, zero=False):
    raise DeviceError(f"alloc=None is not allowed here: this call needs a scratch buffer {shape} {dtype} on the "
                      "GPU; pass alloc(shape, dtype, zero) returning one on the operands' device (e.g. torch.empty)")


# ---- GEMM ------------------------------------------------------------------------------------
def _as3(op: Operand, name: str, batch: int | None = None) -> Operand:
    if op.ndim == 2:
        return op.view((1,) + op.shape, (0,) + op.strides)
    if op.ndim != 3:
        raise ScheduleError(f"{name}.shape", op.shape, "2-D (rows, cols) or 3-D (batch, rows, cols)")
    return op


def gemm_into(a, b, c, *, layout: str = "NN", bias=None, c0=None, alpha: float = 1.0, beta: float = 0.0,
              activation: str | None = None, unsigned: bool = False, device=None, arch: str | None = None,
              stream=None, alloc=None) -> tuple | None:
    """c = act(alpha * op(a) @ op(b) + beta * c0 + bias), written into c (see the module doc).
    Returns a replay token (see `replay`) when this call shape is remembered, else None.
    a, b as stored ('T' = that operand stored transposed: a (K, M), b (N, K)), 2-D or with a
    leading batch axis (2-D broadcasts); c (M, N) or (batch, M, N), its dtype the output's;
    bias f32 (N,). Any outer strides are passed to the kernel; the inner stride must be 1."""
    A, B, C = as_operand(a, "a"), as_operand(b, "b"), as_operand(c, "c")
    named = {"a": A, "b": B, "c": C}
    if bias is not None:
        named["bias"] = as_operand(bias, "bias")
    if c0 is not None:
        named["c0"] = as_operand(c0, "c0")
    layout = layout.upper() if isinstance(layout, str) else layout
    # element offset of each base address from a 16-byte boundary: the kernel's vector width
    # depends on it (GemmKey alignment), so it is part of the call's key
    offsets = (("A", A.ptr % 16 // A.itemsize), ("B", B.ptr % 16 // B.itemsize))
    fast = _call_key("gemm", device, arch, named, layout, alpha, beta, activation, unsigned, offsets)
    ptrs = {"A": A.ptr, "B": B.ptr, "C": C.ptr, "bias": named["bias"].ptr if "bias" in named else 0,
            "C0": named["c0"].ptr if "c0" in named else 0}
    hit = _fast_call(fast, device, ptrs, stream, alloc)
    if hit is not None:
        return hit
    if A.dtype != B.dtype:
        raise ScheduleError("b.dtype", B.dtype, f"{A.dtype}, the dtype of a")
    if A.dtype not in OUT_OF:
        raise ScheduleError("a.dtype", A.dtype, f"one of {', '.join(OUT_OF)}")
    if C.dtype not in OUT_OF[A.dtype]:
        raise ScheduleError("c.dtype", C.dtype, f"one of {', '.join(OUT_OF[A.dtype])} for {A.dtype} inputs")
    device, arch, alloc, _keep = place_operands(named, device, arch, alloc)
    A3, B3, C3 = _as3(A, "a"), _as3(B, "b"), _as3(C, "c")
    C03 = _as3(named["c0"], "c0") if "c0" in named else None
    dtype = "i8" if A.dtype == "u8" else A.dtype
    plan = cached_plan("gemm", arch, dtype=dtype, layout=layout, a=(A3.shape, A3.strides), b=(B3.shape, B3.strides),
                       c=C3.shape, out=C.dtype, bias=None if bias is None else named["bias"].shape,
                       beta=float(beta), alpha=float(alpha), activation=activation or "",
                       unsigned=bool(unsigned or A.dtype == "u8"), c0=None if C03 is None else C03.shape,
                       offsets=offsets)
    batch = plan.problem["batch"]
    ops = {"A": _batch_view(A3, batch), "B": _batch_view(B3, batch), "C": C3}
    if C03 is not None:
        ops["C0"] = _batch_view(C03, batch)
    if bias is not None:
        ops["bias"] = named["bias"]
    return run_plan(plan, device, ops, alloc, stream, fast)


def _batch_view(op: Operand, batch: int) -> Operand:
    """A (1, r, c) operand broadcast over `batch` (stride 0: no copy)."""
    if op.shape[0] == batch:
        return op
    return op.view((batch,) + op.shape[1:], (0,) + op.strides[1:])


# ---- attention -------------------------------------------------------------------------------
def _attention_named(q, k, v, o, lse, extra: dict) -> dict:
    named = {"q": as_operand(q, "q"), "k": as_operand(k, "k"), "v": as_operand(v, "v"), "o": as_operand(o, "o")}
    if lse is not None:
        named["lse"] = as_operand(lse, "lse")
    for n, x in extra.items():
        if x is not None:
            named[n] = as_operand(x, n)
    return named


def _attention_plan(op: str, named: dict, arch: str, *, causal, window, scale, max_seqlen_q, max_seqlen_k,
                    layout, out_dtype=None, softcap=None) -> Plan:
    cu_q, cu_k = named.get("cu_seqlens_q"), named.get("cu_seqlens_k")
    if (cu_q is None) != (cu_k is None):
        raise ScheduleError("cu_seqlens_k" if cu_k is None else "cu_seqlens_q", None,
                            "an int32 offsets tensor: varlen needs both cu_seqlens_q and cu_seqlens_k")
    varlen = cu_q is not None
    seqlens = None
    if varlen:
        for n in ("cu_seqlens_q", "cu_seqlens_k"):
            if named[n].dtype != "i32" or named[n].ndim != 1:
                raise ScheduleError(f"{n}", f"{named[n].dtype} {named[n].shape}", "a 1-D int32 tensor of batch + 1 offsets")
        seqlens = _host_seqlens(cu_q, cu_k, max_seqlen_q, max_seqlen_k)
    q, k, v, o = (named[n] for n in ("q", "k", "v", "o"))
    return cached_plan(op, arch, q=q.shape, k=k.shape, v=v.shape, o=o.shape, dtype=q.dtype,
                       dtypes=tuple((n, x.dtype) for n, x in named.items()),
                       lse=named["lse"].shape if "lse" in named else None, causal=bool(causal),
                       window=None if window is None else tuple(window), scale=scale, layout=layout,
                       seqlens=seqlens, cu=(cu_q.shape if varlen else None), out_dtype=out_dtype,
                       softcap=softcap or None, **({"sinks": named["sinks"].shape} if "sinks" in named else {}))


def _host_seqlens(cu_q: Operand, cu_k: Operand, max_q, max_k) -> tuple:
    """(max_seqlen_q, max_seqlen_k) -- read from CPU offsets (checked there), or the caller's
    values for GPU offsets (never copied to the host: flash-attn's contract)."""
    if cu_q.device == "cpu" and cu_k.device == "cpu":
        qs = np_view(cu_q).astype(np.int64)
        ks = np_view(cu_k).astype(np.int64)
        return ("host", tuple(int(x) for x in qs), tuple(int(x) for x in ks))
    for n, x in (("max_seqlen_q", max_q), ("max_seqlen_k", max_k)):
        if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x < 0:
            raise ScheduleError(n, x, "an int >= 0 (the longest sequence): GPU cu_seqlens are not read on the host")
    return ("device", int(max_q), int(max_k))


def np_view(op: Operand) -> np.ndarray:
    """A read-only numpy view of a CPU int32 operand (no copy)."""
    import ctypes
    n = op.size
    raw = np.frombuffer((ctypes.c_int32 * max(n, 1)).from_address(op.ptr), np.int32)[:n] if n else np.zeros(0, np.int32)
    if op.ndim == 1 and op.shape[0] > 1 and op.strides[0] != 1:
        raw = np.lib.stride_tricks.as_strided(raw, op.shape, (op.strides[0] * 4,))
    return raw


def attention_into(q, k, v, o, lse=None, *, causal: bool = False, window=None, scale=None, cu_seqlens_q=None,
                   cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, layout: str = "bshd", device=None,
                   arch: str | None = None, stream=None, alloc=None, softcap=None, sinks=None) -> tuple | None:
    """Flash-attention forward into o (and lse when given): see the module doc and
    wmma_gen.attention for shapes, masks (bottom-right causal), GQA, varlen and softcap (None
    or 0: off); sinks: float32 (heads,) sink logits (GPT-OSS s_aux) or None. Returns a replay
    token (`replay`) when this call shape is remembered, else None."""
    named = _attention_named(q, k, v, o, lse, {"cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k,
                                               "sinks": sinks})
    varlen = "cu_seqlens_q" in named and named["cu_seqlens_q"].device == "cpu"   # host offsets: plan reads them
    fast = None if varlen else _call_key("attention", device, arch, named, layout, causal,
                                         None if window is None else tuple(window), scale, max_seqlen_q, max_seqlen_k,
                                         softcap)
    names = {"q": "Q", "k": "K", "v": "V", "o": "O", "lse": "LSE"}
    hit = None if fast is None else _fast_call(fast, device, {names.get(n, n): x.ptr for n, x in named.items()},
                                               stream, alloc)
    if hit is not None:
        return hit
    device, arch, alloc, _keep = place_operands(named, device, arch, alloc)
    plan = _attention_plan("attention", named, arch, causal=causal, window=window, scale=scale,
                           max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, layout=layout, softcap=softcap)
    ops = {"Q": named["q"], "K": named["k"], "V": named["v"], "O": named["o"]}
    if "lse" in named:
        ops["LSE"] = named["lse"]
    for n in ("cu_seqlens_q", "cu_seqlens_k", "sinks"):
        if n in named:
            ops[n] = named[n]
    return run_plan(plan, device, ops, alloc, stream, fast)


def attention_backward_into(q, k, v, o, do, lse, dq, dk, dv, *, causal: bool = False, window=None, scale=None,
                            cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                            layout: str = "bshd", device=None, arch: str | None = None, stream=None,
                            alloc=None, softcap=None):
    """dq, dk, dv of flash attention from the forward's o and lse, written into dq/dk/dv
    (their dtype: the inputs' or f32); softcap as the forward's. Deterministic: no atomics.
    Returns the replay token (a Prepacked; its scratch, delta, comes from `alloc` per call)."""
    named = _attention_named(q, k, v, o, lse, {"do": do, "dq": dq, "dk": dk, "dv": dv,
                                               "cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k})
    varlen = "cu_seqlens_q" in named and named["cu_seqlens_q"].device == "cpu"   # host offsets: plan reads them
    fast = None if varlen else _call_key("attention_bwd", device, arch, named, layout, causal,
                                         None if window is None else tuple(window), scale, max_seqlen_q, max_seqlen_k,
                                         softcap)
    hit = None if fast is None else _fast_call(fast, device, {n: x.ptr for n, x in named.items()}, stream, alloc)
    if hit is not None:
        return hit
    device, arch, alloc, _keep = place_operands(named, device, arch, alloc)
    out = named["dq"].dtype
    for n in ("dk", "dv"):
        if named[n].dtype != out:
            raise ScheduleError(f"{n}.dtype", named[n].dtype, f"{out}, the dtype of dq")
    plan = _attention_plan("attention_bwd", named, arch, causal=causal, window=window, scale=scale,
                           max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, layout=layout,
                           out_dtype="f32" if out == "f32" else "same", softcap=softcap)
    ops = {n: x for n, x in named.items() if n not in ("lse",)}
    ops["lse"] = named["lse"]
    return run_plan(plan, device, ops, alloc, stream, fast)
