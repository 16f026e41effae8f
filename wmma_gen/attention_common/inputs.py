"""What a user passes to wmma_gen.attention / attention_backward, checked and normalised.

    forward_inputs(q, k, v, *, causal, window, scale, return_lse, cu_seqlens_q, cu_seqlens_k, layout, dtype,
                   softcap)
    backward_inputs(q, k, v, o, do, lse, *, causal, window, scale, cu_seqlens_q, cu_seqlens_k, layout, dtype,
                    softcap)
        -> AttentionInputs(problem: AttentionCall, directive: AttentionDirective, arrays)
    forward_inputs_for(problem, head_dim, q, k, v, ...) / backward_inputs_for(problem, head_dim, ...)
        the same for arrays built from a Problem (the correctness check, run_set.py): the sizes
        come from the Problem and the arrays are only checked against it.

Pure functions: nothing is compiled or launched. Every mistake raises ScheduleError (a
ValueError) naming the argument, the value given and what is allowed.

Shapes (reference.py has the same table):
  bshd    q (B, Sq, H, D), k/v (B, Sk, Hkv, D)         lse (B, H, Sq)
  bhsd    q (B, H, Sq, D), k/v (B, Hkv, Sk, D)         lse (B, H, Sq)
  varlen  q (total_q, H, D), k/v (total_k, Hkv, D)     lse (H, total_q)
          with int cu_seqlens_q / cu_seqlens_k of length B + 1 (both or neither), layout "bshd".
o and do are shaped like q; lse is float32, as the forward returns it.

dtype: None infers f16 from float16 arrays (every one of q, k, v, o, do must then be float16).
dtype="bf16" (or "f16") takes any real floating arrays and rounds them RNE on the host
(hostdata.encode); float16 arrays with dtype f16 are passed through without a copy.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping

import numpy as np

from .. import hostdata
from ..errors import ScheduleError
from .directive import DTYPES, HEAD_DIMS, LAYOUTS, AttentionDirective
from .problem import AttentionProblem
from .sinks import check_sinks

DENSE_DIMS = {"bshd": ("batch", "seq", "heads", "head_dim"), "bhsd": ("batch", "heads", "seq", "head_dim")}
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, eq=False)
class AttentionCall:
    """One attention call: its sizes as the op's one Problem (spec.AttentionProblem: batch,
    heads, kv_heads, seq_q, seq_k, window sides) plus what else the kernels take at run time.
    seq_q / seq_k are the longest sequence for varlen; window sides are -1 when unbounded."""
    problem: AttentionProblem
    head_dim: int
    dtype: str
    layout: str
    causal: bool
    scale: float
    total_q: int                           # rows of packed q (B * Sq when dense)
    total_k: int
    cu_seqlens_q: np.ndarray | None = None   # int32, read-only; None when dense
    cu_seqlens_k: np.ndarray | None = None
    softcap: float = 0.0                     # logit cap; 0 = off
    sinks: np.ndarray | None = None          # float32 (heads,) sink logits (directive.sinks); None = off

    # the Problem's sizes, read through (every size lives on self.problem only)
    batch = property(lambda self: self.problem.batch)
    heads = property(lambda self: self.problem.heads)
    kv_heads = property(lambda self: self.problem.kv_heads)
    seq_q = property(lambda self: self.problem.seq_q)
    seq_k = property(lambda self: self.problem.seq_k)
    window_left = property(lambda self: self.problem.window_left)
    window_right = property(lambda self: self.problem.window_right)

    @property
    def varlen(self) -> bool:
        return self.cu_seqlens_q is not None

    @property
    def window(self) -> tuple[int, int] | None:
        """(left, right) or None when both sides are unbounded."""
        lr = (self.window_left, self.window_right)
        return None if lr == (-1, -1) else lr

    @property
    def lse_shape(self) -> tuple[int, ...]:
        return (self.heads, self.total_q) if self.varlen else (self.batch, self.heads, self.seq_q)

    def sizes(self) -> dict[str, int]:
        """Integer runtime sizes for the kernel signature (a signature.Problem)."""
        return dict(batch=self.batch, heads=self.heads, kv_heads=self.kv_heads, seq_q=self.seq_q,
                    seq_k=self.seq_k, head_dim=self.head_dim, total_q=self.total_q, total_k=self.total_k,
                    window_left=self.window_left, window_right=self.window_right)

    def reference_kwargs(self) -> dict:
        """Keywords for reference.attention_forward / attention_backward."""
        return dict(scale=self.scale, causal=self.causal, window=self.window, layout=self.layout,
                    cu_seqlens_q=self.cu_seqlens_q, cu_seqlens_k=self.cu_seqlens_k, softcap=self.softcap or None,
                    s_aux=self.sinks)

    def kernel_values(self) -> dict:
        """The runtime scalars beside the sizes: scale, and softcap when it is on (signature.py)."""
        return {"scale": self.scale, **({"softcap": self.softcap} if self.softcap else {})}


@dataclass(frozen=True, eq=False)
class AttentionInputs:
    """A checked call: the problem, the directive to compile, and the arrays as the kernel
    stores them (f16: float16, bf16: uint16 bits, lse: float32, cu_seqlens: int32)."""
    problem: AttentionCall
    directive: AttentionDirective
    arrays: Mapping[str, np.ndarray]

    def values(self, name: str) -> np.ndarray:
        """float64 values the device sees for `name` (what the reference computes with)."""
        a = self.arrays[name]
        if name in ("q", "k", "v", "o", "do"):
            return hostdata.decode(a, self.problem.dtype)
        return a.astype(np.float64) if name == "lse" else a


# --- scalar options --------------------------------------------------------------------------
def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_options(layout, dtype, causal, return_lse) -> None:
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ScheduleError("layout", layout, f"one of {', '.join(LAYOUTS)}")
    if dtype is not None and dtype not in DTYPES:
        raise ScheduleError("dtype", dtype, f"None (f16 inferred from float16 arrays) or one of {', '.join(DTYPES)}")
    for name, value in (("causal", causal), ("return_lse", return_lse)):
        if not isinstance(value, (bool, np.bool_)):
            raise ScheduleError(name, value, "True or False")


def _window(window) -> tuple[int, int]:
    if window is None:
        return -1, -1
    if (not isinstance(window, (tuple, list)) or len(window) != 2
            or not all(_is_int(x) and x >= -1 for x in window)):
        raise ScheduleError("window", window, "None or a pair (left, right) of ints >= -1 (-1: unbounded side)")
    return int(window[0]), int(window[1])


def _scale(scale, head_dim: int) -> float:
    """The kernels' scale: finite, f32-representable and positive -- their online softmax takes
    its running max of S before scaling (kernels/attention/softmax.py) and masks with -inf, both
    right only for scale > 0. wmma_gen.attention / attention_backward take a negative scale by
    negating q (exact) and the kernels get |scale| (public_scale)."""
    if scale is None:
        return 1.0 / math.sqrt(head_dim)
    v = hostdata.f32_scalar("scale", scale, nonzero=True)
    if v < 0:
        raise ScheduleError("scale", scale, "> 0 for the kernels (wmma_gen.attention and attention_backward accept a "
                            "negative scale by negating q; on the device path negate q and pass -scale)")
    return v


def check_softcap(softcap) -> float:
    """The logit cap as the kernels take it: None or 0 = off (0.0), else a finite positive
    f32-representable float (flash-attn's softcap; Gemma-2 uses 50.0 and 30.0)."""
    off = softcap is None or (isinstance(softcap, numbers.Real) and not isinstance(softcap, (bool, np.bool_))
                              and softcap == 0)
    if off:
        return 0.0
    v = hostdata.f32_scalar("softcap", softcap, nonzero=True)
    if not v > 0:
        raise ScheduleError("softcap", softcap, "None, 0 (off) or a finite positive float")
    return v


def public_scale(q, scale):
    """(q, scale) for the kernels: a negative scale becomes |scale| with q negated (a copy;
    softmax(s * q k^T) = softmax(|s| * (-q) k^T), exact in every float format), plus whether
    that happened (the backward then negates dq)."""
    if scale is None:
        return q, None, False
    v = hostdata.f32_scalar("scale", scale, nonzero=True)
    if v > 0:
        return q, v, False
    return -np.asarray(q), -v, True


# --- arrays ----------------------------------------------------------------------------------
def _check_dtypes(named: dict[str, np.ndarray], dtype: str | None) -> str:
    """The directive dtype for these float arrays (see the module docstring)."""
    for name, a in named.items():
        if dtype is None and a.dtype != np.float16:
            raise ScheduleError(f"{name}.dtype", str(a.dtype),
                                "float16 for every one of " + ", ".join(named) + " (f16 is inferred); "
                                "pass dtype='bf16' or 'f16' to round other float arrays on the host")
        if not np.issubdtype(a.dtype, np.floating):
            raise ScheduleError(f"{name}.dtype", str(a.dtype), "a real floating numpy dtype "
                                f"(float16, float32, float64), rounded RNE to {dtype} on the host")
    return dtype or "f16"


def _store(a: np.ndarray, dtype: str, name: str) -> np.ndarray:
    """The kernel's stored array: float16 passed through (a copy only if the head_dim axis is
    not contiguous or a stride is negative), anything else rounded by hostdata.encode."""
    if dtype == "f16" and a.dtype == np.float16:
        return _kernel_view(a)
    return hostdata.encode(a, dtype, field=name)


def _kernel_view(a: np.ndarray) -> np.ndarray:
    n = a.itemsize
    if a.ndim and (a.strides[-1] != n or any(s < 0 or s % n for s in a.strides)):
        return np.ascontiguousarray(a)
    return a


def _cu_seqlens(x, name: str, total: int, total_name: str) -> np.ndarray:
    a = np.asarray(x)
    if not np.issubdtype(a.dtype, np.integer):
        raise ScheduleError(f"{name}.dtype", str(a.dtype), "an integer (int32) array of sequence offsets")
    if a.ndim != 1 or a.size < 2:
        raise ScheduleError(f"{name}.shape", a.shape, "1-D of length batch + 1 >= 2")
    if a[0] != 0:
        raise ScheduleError(f"{name}[0]", int(a[0]), "0 (the first sequence starts at row 0)")
    steps = np.diff(a.astype(np.int64))
    if (steps < 0).any():
        b = int(np.argmax(steps < 0))
        raise ScheduleError(name, a, f"non-decreasing offsets ({name}[{b + 1}]={int(a[b + 1])} < "
                                     f"{name}[{b}]={int(a[b])})")
    if a[-1] != total:
        raise ScheduleError(f"{name}[-1]", int(a[-1]), f"{total} = {total_name} (the packed length)")
    if total > INT32_MAX:
        raise ScheduleError(total_name, total, f"at most {INT32_MAX} rows (int32 offsets)")
    out = a.astype(np.int32)
    out.setflags(write=False)
    return out


def _dense_shapes(q, k, layout):
    names = DENSE_DIMS[layout]
    q_dims = "(" + ", ".join(names).replace("seq", "seq_q") + ")"
    kv_dims = "(" + ", ".join(names).replace("seq", "seq_k").replace("heads", "kv_heads") + ")"
    if q.ndim != 4:
        raise ScheduleError("q.shape", q.shape, f"4-D {q_dims} for layout={layout!r} without cu_seqlens")
    if k.ndim != 4:
        raise ScheduleError("k.shape", k.shape, f"4-D {kv_dims} for layout={layout!r} without cu_seqlens")
    B, S_q, H, D = (q.shape[names.index(n)] for n in ("batch", "seq", "heads", "head_dim"))
    _, S_k, Hkv, Dk = (k.shape[names.index(n)] for n in ("batch", "seq", "heads", "head_dim"))
    if B < 1 or H < 1:
        raise ScheduleError("q.shape", q.shape, f"{q_dims} with batch >= 1 and heads >= 1")
    if k.shape[0] != B or Dk != D or Hkv < 1:
        raise ScheduleError("k.shape", k.shape, f"{kv_dims} with batch={B} and head_dim={D} like q, kv_heads >= 1")
    return B, S_q, S_k, H, Hkv, D


def _varlen_shapes(q, k, layout, cu_q, cu_k):
    if cu_q is None or cu_k is None:
        missing = "cu_seqlens_k" if cu_k is None else "cu_seqlens_q"
        raise ScheduleError(missing, None, "an int32 offsets array: varlen needs both cu_seqlens_q and cu_seqlens_k")
    if layout != "bshd":
        raise ScheduleError("layout", layout, "'bshd' with cu_seqlens (packed arrays are (total, heads, head_dim))")
    if q.ndim != 3:
        raise ScheduleError("q.shape", q.shape, "3-D (total_q, heads, head_dim) with cu_seqlens")
    if k.ndim != 3 or k.shape[2] != q.shape[2] or k.shape[1] < 1:
        raise ScheduleError("k.shape", k.shape, f"3-D (total_k, kv_heads >= 1, head_dim={q.shape[2]}) with cu_seqlens")
    if q.shape[1] < 1:
        raise ScheduleError("q.shape", q.shape, "(total_q, heads, head_dim) with heads >= 1")
    cq = _cu_seqlens(cu_q, "cu_seqlens_q", q.shape[0], "q.shape[0]")
    ck = _cu_seqlens(cu_k, "cu_seqlens_k", k.shape[0], "k.shape[0]")
    if len(ck) != len(cq):
        raise ScheduleError("cu_seqlens_k.shape", ck.shape,
                            f"({len(cq)},): the batch count of cu_seqlens_q ({len(cq) - 1} sequences)")
    return cq, ck


def _problem(q, k, v, *, causal, window, scale, cu_seqlens_q, cu_seqlens_k, layout, dtype,
             softcap=None, s_aux=None) -> AttentionCall:
    """The user's arrays -> the call: the one place sizes are read from arrays (the API boundary)."""
    if v.shape != k.shape:
        raise ScheduleError("v.shape", v.shape, f"{k.shape}, the shape of k")
    left, right = _window(window)
    if cu_seqlens_q is None and cu_seqlens_k is None:
        B, S_q, S_k, H, Hkv, D = _dense_shapes(q, k, layout)
        cq = ck = None
        total_q, total_k = B * S_q, B * S_k
    else:
        cq, ck = _varlen_shapes(q, k, layout, cu_seqlens_q, cu_seqlens_k)
        B, H, Hkv, D = len(cq) - 1, q.shape[1], k.shape[1], q.shape[2]
        S_q, S_k = int(np.diff(cq).max()), int(np.diff(ck).max())
        total_q, total_k = q.shape[0], k.shape[0]
    _check_head_dim_and_groups(D, H, Hkv, 1 if cq is not None or layout == "bhsd" else 2, layout)
    p = AttentionProblem(batch=B, heads=H, kv_heads=Hkv, seq_q=S_q, seq_k=S_k, window_left=left, window_right=right)
    return AttentionCall(p, head_dim=D, dtype=dtype, layout=layout, causal=bool(causal), scale=_scale(scale, D),
                         total_q=total_q, total_k=total_k, cu_seqlens_q=cq, cu_seqlens_k=ck,
                         softcap=check_softcap(softcap), sinks=check_sinks(s_aux, H))


def _check_head_dim_and_groups(D: int, H: int, Hkv: int, ax: int, layout: str) -> None:
    if D not in HEAD_DIMS:
        raise ScheduleError("head_dim", D, f"one of {', '.join(map(str, HEAD_DIMS))} (the last axis of q, k, v)")
    if H % Hkv:
        raise ScheduleError("num_kv_heads", Hkv, f"a divisor of num_heads={H} (k.shape[{ax}] and q.shape[{ax}] "
                            f"for layout={layout!r}; query head h reads kv head h // (num_heads // num_kv_heads))")


def _directive(p: AttentionCall, return_lse: bool, op: str) -> AttentionDirective:
    return AttentionDirective(dtype=p.dtype, head_dim=p.head_dim, causal=p.causal, window=p.window is not None,
                              varlen=p.varlen, return_lse=bool(return_lse), layout=p.layout, op=op,
                              softcap=p.softcap > 0, sinks=p.sinks is not None and op == "attention")


def _arrays(p: AttentionCall, named: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {name: _store(a, p.dtype, name) for name, a in named.items()}
    if p.varlen:
        out.update(cu_seqlens_q=p.cu_seqlens_q, cu_seqlens_k=p.cu_seqlens_k)
    if p.sinks is not None:
        out["sinks"] = p.sinks
    return out


# --- the two entry points ----------------------------------------------------------------------
def forward_inputs(q, k, v, *, causal=False, window=None, scale=None, return_lse=False, cu_seqlens_q=None,
                   cu_seqlens_k=None, layout="bshd", dtype=None, softcap=None, s_aux=None) -> AttentionInputs:
    """Check and normalise the arguments of wmma_gen.attention (see the module docstring)."""
    _check_options(layout, dtype, causal, return_lse)
    named = {"q": np.asarray(q), "k": np.asarray(k), "v": np.asarray(v)}
    dt = _check_dtypes(named, dtype)
    p = _problem(*named.values(), causal=causal, window=window, scale=scale, cu_seqlens_q=cu_seqlens_q,
                 cu_seqlens_k=cu_seqlens_k, layout=layout, dtype=dt, softcap=softcap, s_aux=s_aux)
    d = _directive(p, return_lse, "attention")
    return AttentionInputs(p, d, MappingProxyType(_arrays(p, named)))


def backward_inputs(q, k, v, o, do, lse, *, causal=False, window=None, scale=None, cu_seqlens_q=None,
                    cu_seqlens_k=None, layout="bshd", dtype=None, softcap=None, s_aux=None) -> AttentionInputs:
    """Check and normalise the arguments of wmma_gen.attention_backward: as the forward, plus
    o and do shaped like q and lse float32 shaped as the forward returns it."""
    _check_options(layout, dtype, causal, False)
    named = {"q": np.asarray(q), "k": np.asarray(k), "v": np.asarray(v), "o": np.asarray(o), "do": np.asarray(do)}
    dt = _check_dtypes(named, dtype)
    p = _problem(named["q"], named["k"], named["v"], causal=causal, window=window, scale=scale,
                 cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, layout=layout, dtype=dt, softcap=softcap,
                 s_aux=s_aux)
    for name in ("o", "do"):
        if named[name].shape != named["q"].shape:
            raise ScheduleError(f"{name}.shape", named[name].shape, f"{named['q'].shape}, the shape of q")
    lse = np.asarray(lse)
    if lse.dtype != np.float32:
        raise ScheduleError("lse.dtype", str(lse.dtype), "float32, as the forward returns it")
    if lse.shape != p.lse_shape:
        where = "(heads, total_q) with cu_seqlens" if p.varlen else "(batch, heads, seq_q)"
        raise ScheduleError("lse.shape", lse.shape, f"{p.lse_shape} = {where}, as the forward returns it")
    arrays = _arrays(p, named)
    arrays["lse"] = _kernel_view(lse)
    return AttentionInputs(p, _directive(p, False, "attention_bwd"), MappingProxyType(arrays))


# --- arrays built from a Problem (the correctness check): sizes from the Problem, never the arrays ---
def dense_shapes_of(p: AttentionProblem, head_dim: int, layout: str) -> tuple[tuple, tuple]:
    """(q shape, k/v shape) of a dense call of Problem p in `layout` (the module docstring's table)."""
    q = {"batch": p.batch, "seq": p.seq_q, "heads": p.heads, "head_dim": head_dim}
    kv = {"batch": p.batch, "seq": p.seq_k, "heads": p.kv_heads, "head_dim": head_dim}
    return tuple(q[n] for n in DENSE_DIMS[layout]), tuple(kv[n] for n in DENSE_DIMS[layout])


def _call_of(p, head_dim, named, *, causal, window, scale, layout, dtype, softcap, s_aux=None) -> AttentionCall:
    """The call for Problem p: every array is checked against the shape p gives, none is measured."""
    if not isinstance(p, AttentionProblem):
        raise ScheduleError("problem", p, "an AttentionProblem (ops/attention/spec.py)")
    q_shape, kv_shape = dense_shapes_of(p, head_dim, layout)
    for name, a in named.items():
        want = kv_shape if name in ("k", "v") else q_shape
        if a.shape != want:
            raise ScheduleError(f"{name}.shape", a.shape, f"{want}: the {layout} shape of {p} with head_dim={head_dim}")
    _check_head_dim_and_groups(head_dim, p.heads, p.kv_heads, 1 if layout == "bhsd" else 2, layout)
    left, right = _window(window)     # the window the kernel applies: the Problem's under a windowed directive
    p = replace(p, window_left=left, window_right=right)
    return AttentionCall(p, head_dim=head_dim, dtype=dtype, layout=layout, causal=bool(causal),
                         scale=_scale(scale, head_dim), total_q=p.batch * p.seq_q, total_k=p.batch * p.seq_k,
                         softcap=check_softcap(softcap), sinks=check_sinks(s_aux, p.heads))


def forward_inputs_for(problem: AttentionProblem, head_dim: int, q, k, v, *, causal=False, window=None, scale=None,
                       return_lse=False, layout="bshd", dtype=None, softcap=None, s_aux=None) -> AttentionInputs:
    """forward_inputs for dense arrays built from `problem` (run_set.forward)."""
    _check_options(layout, dtype, causal, return_lse)
    named = {"q": np.asarray(q), "k": np.asarray(k), "v": np.asarray(v)}
    p = _call_of(problem, head_dim, named, causal=causal, window=window, scale=scale, layout=layout,
                 dtype=_check_dtypes(named, dtype), softcap=softcap, s_aux=s_aux)
    return AttentionInputs(p, _directive(p, return_lse, "attention"), MappingProxyType(_arrays(p, named)))


def backward_inputs_for(problem: AttentionProblem, head_dim: int, q, k, v, o, do, lse, *, causal=False, window=None,
                        scale=None, layout="bshd", dtype=None, softcap=None) -> AttentionInputs:
    """backward_inputs for dense arrays built from `problem` (run_set.backward)."""
    _check_options(layout, dtype, causal, False)
    named = {"q": np.asarray(q), "k": np.asarray(k), "v": np.asarray(v), "o": np.asarray(o), "do": np.asarray(do)}
    p = _call_of(problem, head_dim, named, causal=causal, window=window, scale=scale, layout=layout,
                 dtype=_check_dtypes(named, dtype), softcap=softcap)
    lse = np.asarray(lse)
    if lse.dtype != np.float32 or lse.shape != p.lse_shape:
        raise ScheduleError("lse", f"{lse.dtype} {lse.shape}", f"float32 {p.lse_shape} = (batch, heads, seq_q)")
    arrays = _arrays(p, named)
    arrays["lse"] = _kernel_view(lse)
    return AttentionInputs(p, _directive(p, False, "attention_bwd"), MappingProxyType(arrays))
