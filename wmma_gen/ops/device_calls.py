"""The device-resident call path every op's `*_into` entry point runs on (the ops on operands that
already live where the caller keeps them: torch tensors on a ROCm GPU, DLPack arrays, CPU memory
for the emulator). The entry points live in their op folders, each a thin reading of its operands
over this module: ops/gemm/device.py (gemm_into), ops/attention/device.py (attention_into,
attention_backward_into), ops/paged_attention/device.py, ops/mla/device.py.

    named operands -> call_key -> fast_call (a remembered call shape: enqueue, done)
    else place_operands -> plans.cached_plan(op, arch, **call) (OpSpec.plan) -> run_plan

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
from ..errors import DeviceError
from .plans import Plan


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


def placement(first=None) -> tuple:
    """What besides the operands decides where a call runs: the routing of device/select.routed
    (its device and arch) and, for CPU operands, WMMA_GEN_ARCH (part of every call key).
    first: the call's first operand when it is a torch tensor: one not on the CPU (a GPU
    tensor: its own device and arch decide) skips the environment read, which costs about
    as much as a launch (os.environ.get of a missing name raises and catches a KeyError)."""
    route = current_route()
    if route is not None:
        # the block's arch picks the kernels: `routed(dev, "gfx1201")` and `routed(dev)` on one
        # device must not share entries; without one, a device with no arch of its own compiles
        # for WMMA_GEN_ARCH (select.arch_of), read only then
        dev, arch = route
        if arch is None and getattr(dev, "arch", None) is None:
            arch = os.environ.get("WMMA_GEN_ARCH")
        return (id(dev), arch)
    return (None, None) if first is not None and not first.is_cpu else (None, os.environ.get("WMMA_GEN_ARCH"))


def fast_call(key: tuple, device, ptrs: dict, stream, alloc=None):
    """A repeat of a remembered call shape: the Prepacked it ran (enqueued again), or None."""
    hit = _fast.get(key)
    if hit is None or (device is not None and not isinstance(device, str) and hit.device is not device):
        return None
    return hit if hit.run(ptrs, stream, alloc) else None


def call_key(op: str, device, arch, named: dict, *flags) -> tuple:
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


def np_view(op: Operand) -> np.ndarray:
    """A read-only numpy view of a CPU int32 operand (no copy)."""
    import ctypes
    n = op.size
    raw = np.frombuffer((ctypes.c_int32 * max(n, 1)).from_address(op.ptr), np.int32)[:n] if n else np.zeros(0, np.int32)
    if op.ndim == 1 and op.shape[0] > 1 and op.strides[0] != 1:
        raw = np.lib.stride_tricks.as_strided(raw, op.shape, (op.strides[0] * 4,))
    return raw
