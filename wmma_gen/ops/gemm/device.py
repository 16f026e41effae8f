"""The GEMM's device-resident call (the shared path: ops/device_calls.py, OpSpec.plan = plan.py):

    gemm_into(a, b, c, *, layout, bias, c0, alpha, beta, activation, unsigned, device, arch, stream, alloc)

c = act(alpha * op(a) @ op(b) + beta * c0 + bias) written into c, one enqueue (two with split-K)
on the caller's stream: no host copy, no sync."""
from __future__ import annotations

from ...device.operand import Operand, as_operand
from ...errors import ScheduleError
from ..device_calls import call_key, fast_call, place_operands, run_plan
from ..plans import cached_plan

OUT_OF = {"f16": ("f16", "f32"), "bf16": ("bf16", "f32"), "i8": ("i32",), "u8": ("i32",),
          "fp8": ("f32", "f16", "bf16"), "bf8": ("f32", "f16", "bf16")}


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
    fast = call_key("gemm", device, arch, named, layout, alpha, beta, activation, unsigned, offsets)
    ptrs = {"A": A.ptr, "B": B.ptr, "C": C.ptr, "bias": named["bias"].ptr if "bias" in named else 0,
            "C0": named["c0"].ptr if "c0" in named else 0}
    hit = fast_call(fast, device, ptrs, stream, alloc)
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
