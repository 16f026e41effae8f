"""The call-site cache of the torch lane (issue 23, issue 36): one key per call, a hit holds
the prepacked launch.

A front end's *shape key* holds the op's own arguments, the call's placement
(device_calls.placement) and, per tensor, (shape, strides, dtype, device, address mod 16).
Every check the front end makes and everything the core decides (kernels, kernarg packing, the
16-byte alignment the GEMM key reads) is a function of that key, so the second call of a key
needs only its outputs allocated and the kernels enqueued with the new addresses: the entry
holds the core's Prepacked (device_calls.py), whose launches are the device's prepacked launches
(Device.prepack: device/_fastlaunch.c's C Launcher on a HipDevice when built), with each
launch's pointer slots resolved once, at record time, to indices into the call's tensors.

    key, entry = lookup(op, tensors, *args)                  the shape key and its entry
    key, entry, made = lookup_run(op, tensors, stream, *args) the same, a recorded entry run at once
    made = hit(k, tensors, device, stream)  outputs of a replayed call, or None (full call)
    record(k, token, names, *outputs[, kept=])   after a full call: what a hit of k re-runs

Entries are recorded by eager calls (runtime.eager_mode STRAIGHT) whose tensors went to the
kernels as they are (no reshape or kernel_view copy); an autograd call's key only marks its
checks done (`mark`: its eager autograd.Function keys the kernels' call itself). If the core
forgot its shapes (forget_call_shapes), `hit` drops the entry and reports None, and the caller
makes the full call, which records again. A token with scratch buffers (split-K / split-KV
partials, the backward's delta) gets them allocated per hit (or from the capture's ScratchPool).
An output the front end never hands out for its key (flash_attn_func's softmax_lse without
return_attn_probs, SDPA's) is `kept`: the recorded tensor itself is given to every hit, one
allocation fewer per call (issue 36: torch.empty_strided is ~1.5-2 us of host time, as much as
a launch). Its contents are never read; concurrent hits may write it at once. Only buffers of
at most KEEP_MAX_BYTES are kept (a small call's cost is its allocation; a large one's is its
kernel), so the cache holds at most MAX_ENTRIES * KEEP_MAX_BYTES of them.
"""
from __future__ import annotations

from collections import OrderedDict

import torch

from ..device import native
from ..device.operand import CAPTURES, capture_keep, hold
from ..ops import device_calls
from .runtime import TORCH_DTYPE, _local

_GEN = device_calls._GEN            # bumped by forget_call_shapes: a token made before is stale
_placement = device_calls.placement
_empty = torch.empty_strided

MAX_ENTRIES = 1024
KEEP_MAX_BYTES = 1 << 16
_entries: "OrderedDict[tuple, tuple]" = OrderedDict()
CHECKED = object()                  # `mark`'s entry: the key's checks passed, nothing to replay


def lookup(op: str, tensors: tuple, *args) -> tuple:
    """(the call's shape key -- native.shape_key of (op, placement, *args) and the tensors --,
    its entry or None)."""
    k, e, _ = native.lookup(_entries, (op, _placement(tensors[0]), *args), tensors)
    return k, e


def lookup_run(op: str, tensors: tuple, stream, *args) -> tuple:
    """(key, entry or None, outputs or None): a recorded entry is run at once on `stream`
    (allocation and launches; the outputs' device is tensors[0]'s). Outputs None with an entry:
    only checked (`mark`), stale or with scratch -- `hit` then says which."""
    return native.lookup(_entries, (op, _placement(tensors[0]), *args), tensors, stream, _ENV)


def mark(k: tuple) -> None:
    """The key's checks passed (an autograd call: replayed through its autograd.Function)."""
    _put(k, CHECKED)


def record(k: tuple, token, names: tuple, *outputs, extra=None, kept: tuple = ()) -> None:
    """Remember `k` -> the replay of `token` (device_calls.Prepacked; None: nothing to record).
    names: the kernel argument name of each of the call's tensors then of each output (what
    `hit` passes: None entries are address 0); outputs: the output tensors (their shape, strides
    and dtype are allocated per hit). The token's scratch buffers are allocated per hit too.
    extra: what the front end keeps with the entry (its 5th item). kept: indices of outputs no
    caller of this key ever sees: that tensor is reused by every hit (the module doc)."""
    if token is None:
        return
    outs = tuple(o if i in kept and o.nbytes <= KEEP_MAX_BYTES else _allocation(o) for i, o in enumerate(outputs))
    scratch = tuple((tuple(shape), TORCH_DTYPE[dtype], zero) for _, shape, dtype, zero in token.scratch)
    names = tuple(names) + tuple(name for name, *_ in token.scratch)
    where = {n: i for i, n in enumerate(names)}        # a slot no tensor fills: the trailing None (0)
    plan = tuple((launch, tuple([where.get(n, len(names)) for n in slots])) for launch, slots in token.launches)
    _put(k, (token, outs, plan, scratch) + (() if extra is None else (extra,)))


# torch's own low-overhead allocators (torch/csrc/dynamo/guards.cpp: at::detail::empty_strided_cpu /
# _cuda without torch.empty_strided's argument parsing and dispatch; what torch.compile's generated
# code allocates with), by device type. The CUDA one allocates on the current GPU: the C hit checks
# the new tensor's get_device() and falls back to torch.empty_strided (device/_fastlaunch.c).
_guards = getattr(getattr(torch._C, "_dynamo", None), "guards", None)
FAST_EMPTY = {kind: getattr(_guards, f"_empty_strided_{kind}", None) for kind in ("cpu", "cuda")}


def _allocation(o) -> tuple:
    """How a hit allocates an output like `o`: (shape, strides, dtype), plus (fast, get_device())
    when torch has a low-overhead allocator for its device type."""
    shape, strides = tuple(o.shape), tuple(o.stride())
    fast = FAST_EMPTY.get(o.device.type)
    return (shape, strides, o.dtype) if fast is None else (shape, strides, o.dtype, fast, o.get_device())


def _put(k: tuple, entry) -> None:
    _entries[k] = entry
    if len(_entries) > MAX_ENTRIES:
        _entries.popitem(last=False)


def hit(k: tuple, tensors: tuple, device, stream, entry=None):
    """The outputs of a replayed call of key `k` (a list), or None: not known, only checked
    (`mark`), or forgotten (then the entry is dropped and the caller makes the full call).
    `entry`: the caller's `get(k)` when it already looked. Tokens without scratch run in C
    (native.run); scratch buffers are allocated here (torch.empty / zeros, or the ScratchPool)."""
    entry = _entries.get(k) if entry is None else entry
    if entry is None or entry is CHECKED:
        return None
    made = native.run(entry, tensors, device, stream, _ENV)     # None: stale or scratch
    if made is not None:
        return made
    token, outs, plan, scratch = entry[:4]
    if token.gen != _GEN[0]:
        forget(k)
        return None
    made = [_made(o, device) for o in outs]
    pool, bufs = _local.pool, []            # scratch: per call, or the capture's ScratchPool (runtime.py)
    for shape, dtype, zero in scratch:
        if pool is not None:
            bufs.append(pool.take(shape, dtype, zero, device))
        else:
            bufs.append((torch.zeros if zero else torch.empty)(shape, dtype=dtype, device=device))
    values = (*tensors, *made, *bufs, None)
    if CAPTURES[0]:
        held(*values)               # a graph capture: its replays write these (device/operand.py)
    native.fire(plan, values, stream)
    return made


def _made(out, device):
    """An output of a hit: a kept tensor as it is, else a new (shape, strides, dtype) one."""
    return _empty(out[0], out[1], dtype=out[2], device=device) if type(out) is tuple else out


def held(*tensors) -> None:
    """During a graph capture, keep these tensors' memory with the graph (device/operand.py)."""
    keep = capture_keep()
    if keep is not None:
        hold(keep, *tensors)


def forget(k: tuple) -> None:
    _entries.pop(k, None)


def clear() -> None:
    _entries.clear()


_ENV = (_GEN, CAPTURES, _empty, held)      # what _fastlaunch.run reads
