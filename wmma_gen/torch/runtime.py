"""Where a wmma_gen.torch call runs, on which stream, and where its scratch memory comes from.

    check_tensors(name=tensor, ...)   one device for all, an AMD GPU (ROCm torch) or the CPU
    stream_of(t)                      the caller's stream: torch.cuda.current_stream(dev) on ROCm;
                                      for CPU tensors the handle set by launch_stream (else None)
    torch_alloc(device, keep)         the core's alloc(shape, dtype, zero) over torch.empty
    kernel_view(t)                    t, or one device-side .contiguous() when its last dim is
                                      strided (the kernels take any outer strides, inner must be 1)

Nothing here copies a GPU tensor to the host.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import torch

from ..device import native
from ..device.operand import as_operand
from ..errors import DeviceError

TORCH_DTYPE = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32,
               "i8": torch.int8, "u8": torch.uint8}
DTYPE_NAME = {v: k for k, v in TORCH_DTYPE.items()}


class _Local(threading.local):
    stream = None       # class defaults: reading an unset one raises nothing (stream_of runs per call)
    pool = None


_local = _Local()


def is_rocm() -> bool:
    return getattr(torch.version, "hip", None) is not None


def check_tensors(**tensors) -> torch.device:
    """The one device of these tensors (None entries skipped); NVIDIA CUDA, other device types
    and mixed devices are refused, naming the tensors. (get_device() and is_cpu are C calls:
    this runs on every call, so it avoids building torch.device objects per tensor.)"""
    where, first = {}, None
    for name, t in tensors.items():
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} is a {type(t).__name__}: a torch.Tensor is required")
        idx = t.get_device()
        if idx < 0 and not t.is_cpu or idx >= 0 and not t.is_cuda:
            raise DeviceError(f"{name}.device={t.device} is not allowed: cpu (emulator) or an AMD GPU "
                              "('cuda' in ROCm torch)")
        if idx >= 0 and not is_rocm():
            raise DeviceError(f"{name} is on {t.device}, an NVIDIA CUDA device: wmma_gen runs on AMD GPUs "
                              "(a ROCm build of torch, where 'cuda' means HIP) or on CPU tensors (emulator)")
        where[name] = idx
        first = t if first is None else first
    if len(set(where.values())) > 1:
        raise DeviceError("tensors on different devices are not allowed: "
                          + ", ".join(f"{n} on {tensors[n].device}" for n in where))
    return first.device if first is not None else torch.device("cpu")


_stack_len = getattr(torch._C, "_len_torch_dispatch_stack", None)
_functorch_active = getattr(getattr(torch._C, "_functorch", None), "peek_interpreter_stack", None)
_is_compiling = torch.compiler.is_compiling
_mode_on = torch._C._is_torch_function_mode_enabled
_grad_on = torch.is_grad_enabled
_profiling = torch._C._autograd._profiler_enabled     # a profile names the `wmma_gen::` ops
Tensor = torch.Tensor
DISPATCH, STRAIGHT, AUTOGRAD = 0, 1, 2     # what eager_mode returns


# eager_mode(*tensors) -> how an op call may run without torch's custom-op dispatcher (tens of
# microseconds per call: bench/launch_overhead.py):
#     STRAIGHT  eager, plain tensors, no autograd graph to record: the op's body straight
#     AUTOGRAD  the same but some input requires grad: the op's autograd.Function (an eager twin
#               of the custom op's registered autograd formula)
#     DISPATCH  anything else -- torch.compile tracing, a torch function / dispatch mode, a
#               functorch transform, a tensor subclass (nn.Parameter aside), torch.profiler: the custom op, which
#               they all see.
# device/native.py's eager_mode (C in device/_fastlaunch.c, or its Python twin) bound to the checks
# below, after torch.compiler.is_compiling().
_CHECKS = tuple(c for c in (_mode_on, _profiling, _stack_len, _functorch_active) if c is not None)
# nn.Parameter counts as a plain tensor: it disables __torch_function__ (torch/nn/parameter.py
# `__torch_function__ = _disabled_torch_function_impl`), so the dispatcher sees a Tensor; its
# subclasses (UninitializedParameter, user ones) take the custom op.
PLAIN = (Tensor, torch.nn.Parameter)
_native_mode = native.bind_mode(_CHECKS, _grad_on, PLAIN)


def eager_mode(*tensors) -> int:
    """DISPATCH while torch.compile traces (checked here, in Python: dynamo folds it to a
    constant and never reaches the C function, which it cannot trace), else native.eager_mode."""
    if _is_compiling():
        return DISPATCH
    return _native_mode(*tensors)


def direct(*tensors) -> bool:
    """True when running an op's Python body straight gives what torch's dispatcher would
    (eager_mode is STRAIGHT): the custom-op machinery is skipped; otherwise it is used. Under
    torch.profiler the dispatcher is used too, so the profile names the `wmma_gen::` ops."""
    return eager_mode(*tensors) == STRAIGHT


def check_dtype(name: str, t: torch.Tensor, allowed: tuple) -> str:
    dt = DTYPE_NAME.get(t.dtype)
    if dt not in allowed:
        raise ValueError(f"{name}.dtype={t.dtype} is not allowed: one of "
                         + ", ".join(str(TORCH_DTYPE[a]) for a in allowed))
    return dt


@contextmanager
def launch_stream(handle):
    """Within the block, calls on CPU tensors that `wmma_gen.device.select.routed` sends to a
    HIP device launch on `handle` (a hipStream_t or its int). GPU tensors always use
    torch.cuda.current_stream(device), which is how a ROCm user picks the stream."""
    prev = _local.stream
    _local.stream = handle
    try:
        yield handle
    finally:
        _local.stream = prev


# The current stream of a GPU as its raw handle, without building a torch.cuda.Stream (a
# per-call Python object: microseconds): torch/csrc/cuda/Module.cpp's _cuda_getCurrentRawStream,
# what torch.compile's generated code calls per launch (`get_raw_stream`). CUDA/ROCm builds only.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def stream_of(t: torch.Tensor):
    if t.is_cuda:
        if _raw_stream is not None:
            return _raw_stream(t.get_device())
        return torch.cuda.current_stream(t.device).cuda_stream
    return _local.stream


class ScratchPool:
    """Scratch buffers (split-K / split-KV partials, the attention backward's delta) that outlive
    the calls using them: what a captured graph needs, since its replays write the buffers the
    capture saw. Inside `scratch_pool(pool)` the n-th scratch request of the block gets the
    pool's n-th buffer when shape, dtype and device match (allocated on first use, so a warm-up
    run in the same block reserves them: `warmup(..., scratch=pool)`); keep the pool as long as
    the graph. Zeroed buffers are zeroed at the request (a device op on a GPU, which the capture
    records; for CPU tensors routed to the HIP stand-in, at capture time only)."""

    def __init__(self):
        self.buffers: list[torch.Tensor] = []
        self.next = 0
        self.reserved = 0      # buffers allocated by the pool (not reused): 0 new ones in a capture

    def take(self, shape, dtype, zero: bool, device) -> torch.Tensor:
        i, self.next = self.next, self.next + 1
        if i < len(self.buffers):
            t = self.buffers[i]
            if tuple(t.shape) == tuple(shape) and t.dtype == dtype and t.device == device:
                return t.zero_() if zero else t
        t = (torch.zeros if zero else torch.empty)(tuple(shape), dtype=dtype, device=device)
        self.buffers[i:i + 1] = [t]
        self.reserved += 1
        return t


@contextmanager
def scratch_pool(pool: ScratchPool):
    """Within the block, wmma_gen's scratch buffers come from `pool` (see ScratchPool)."""
    prev = _local.pool
    _local.pool, pool.next = pool, 0
    try:
        yield pool
    finally:
        _local.pool = prev


def torch_alloc(device: torch.device, keep: list):
    """Scratch buffers for the core (split-K/split-KV partials, the backward's delta) as torch
    tensors on `device`, kept in `keep` until the op returns (or, inside scratch_pool, by the
    pool). On ROCm the caching allocator reuses them only for work queued after ours on the
    same stream, so freeing early is safe (and under torch.cuda.graph capture they come from
    the graph's private pool)."""
    def alloc(shape, dtype, zero=False):
        pool = _local.pool
        if pool is not None:
            t = pool.take(shape, TORCH_DTYPE[dtype], zero, device)
        else:
            t = (torch.zeros if zero else torch.empty)(tuple(shape), dtype=TORCH_DTYPE[dtype], device=device)
        keep.append(t)
        return as_operand(t, "scratch")
    return alloc


def kernel_view(t: torch.Tensor | None) -> torch.Tensor | None:
    """t itself when the kernels can address it (unit inner stride), else one device-side
    contiguous copy. An expanded last dim (stride 0) is copied too: kernels read it densely."""
    if t is None or t.dim() == 0 or t.shape[-1] <= 1 or t.stride(-1) == 1:
        return t
    return t.contiguous()
