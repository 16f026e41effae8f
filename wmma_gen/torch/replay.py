"""The call-site cache of the torch lane (issue 23, issue 36): one key per call, a hit holds
the prepacked launch.

A front end's *shape key* holds, per tensor, (shape, strides, dtype, device, address mod 16),
plus the op's own arguments and the call's placement (device_calls.placement). Every check the
front end makes and everything the core decides (kernels, kernarg packing, the 16-byte
alignment the GEMM key reads) is a function of that key, so the second call of a key needs only
its outputs allocated and the kernels enqueued with the new addresses: the entry holds the
core's Prepacked (device_calls.py), whose launches are the device's prepacked closures
(Device.prepack) and whose scratch buffers are allocated per call by the caller's allocator.

Entries are recorded by eager calls (runtime.eager_mode STRAIGHT) whose tensors went to the
kernels as they are (no reshape or kernel_view copy); an autograd call's key only marks its
checks done (a None token: its eager autograd.Function keys the kernels' calls). If the core
forgot its shapes (forget_call_shapes), `run` reports None and the caller makes the full call,
which records again.
"""
from __future__ import annotations

from collections import OrderedDict

import torch

from ..device.operand import capture_keep, hold
from ..ops import device_calls
from .runtime import torch_alloc

_GEN = device_calls._GEN            # bumped by forget_call_shapes: a token made before is stale

MAX_ENTRIES = 1024
_entries: "OrderedDict[tuple, tuple]" = OrderedDict()


def key(op: str, tensors: tuple, *args) -> tuple:
    return (op, tuple([None if t is None else (t.shape, t.stride(), t.dtype, t.device, t.data_ptr() & 15)
                       for t in tensors]), args, device_calls.placement())


def get(k: tuple):
    return _entries.get(k)


def record(k: tuple, token, *outputs) -> None:
    """Remember `k` -> (token, outputs) where outputs are (shape, dtype) to allocate per call.
    A None token only marks the key's checks as done (an autograd call: replayed through its
    autograd.Function, which keys the kernels' call itself)."""
    if token is None and outputs:
        return
    _entries[k] = (token, outputs, {})      # {}: per call site's argument names, the launches' slot order
    if len(_entries) > MAX_ENTRIES:
        _entries.popitem(last=False)


def run(k: tuple, names: tuple, tensors: tuple, device, stream):
    """The outputs of a replayed call of key `k`, or None (not known, or forgotten: then the
    entry is dropped and the caller makes the full call). names: kernel argument name of each
    of `tensors` (None entries are address 0), then of each output in recorded order."""
    hit = _entries.get(k)
    if hit is None or hit[0] is None:
        return None
    token, outs, orders = hit
    made = [torch.empty(shape, dtype=dtype, device=device) for shape, dtype in outs]
    held(*tensors, *made)           # a graph capture: its replays write these (device/operand.py)
    values = [0 if t is None else t.data_ptr() for t in tensors] + [t.data_ptr() for t in made]
    if fire(token, orders, names, values, stream):
        return made
    keep: list = []
    if token.scratch and token.run(dict(zip(names, values)), stream, torch_alloc(device, keep)):
        return made
    forget(k)
    return None


def held(*tensors) -> None:
    """During a graph capture, keep these tensors' memory with the graph (device/operand.py)."""
    keep = capture_keep()
    if keep is not None:
        hold(keep, *tensors)


def fire(token, orders: dict, names: tuple, values, stream) -> bool:
    """Enqueue a Prepacked without scratch with the addresses `values` (one per name of `names`):
    each launch's pointer slots are picked by index, worked out once per call site (`orders`,
    kept in the entry), so a hit builds no dict. False when the token is stale (forget_call_shapes)
    or needs scratch (then Prepacked.run, which allocates it)."""
    if token.scratch or token.gen != _GEN[0]:
        return False
    plan = orders.get(names)
    if plan is None:
        plan = orders[names] = tuple((launch, tuple([names.index(n) for n in slots])) for launch, slots in token.launches)
    for launch, idx in plan:
        launch(tuple([values[i] for i in idx]), stream)
    return True


def forget(k: tuple) -> None:
    _entries.pop(k, None)


def clear() -> None:
    _entries.clear()
