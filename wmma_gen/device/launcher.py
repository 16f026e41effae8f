"""The one launch path: Signature + code object metadata + host arrays -> a launch.

Used by the ops API, the correctness gate, the sweep objective and the GPU timer alike.

    with Prepared(compiled, signature, problem, device, arrays) as run:
        timing = run.launch()          # as often as needed (the timer launches repeatedly)
        outputs = run.read()           # {name: numpy array} for every out/inout argument

    launch(compiled, signature, problem, device, arrays) -> (outputs, timing)   # one shot

Checks before anything is allocated: every argument of the signature matches the kernel's
metadata `.args` (buffers are global_buffer, scalars by_value of their size), every host
array has the dtype and shape the signature requires, a unit inner stride and
non-negative outer strides. Arrays are passed *as viewed*: the byte span the view covers
is uploaded without a host copy and its element strides go to the stride scalars (a batch
broadcast with stride 0 costs nothing). A view with a non-unit inner stride or a negative
stride is copied once to C order (`copied` lists them). Index math in the kernels is 32-bit
(compiler/pipeline.py), so every buffer span must stay below 2**31 elements.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..errors import DeviceError
from ..kernels.signature import NUMPY_STORAGE, SCALAR_BYTES, KArg, Problem, Signature
from .base import Buffer, Device, Timing
from .kernargs import explicit_args

MAX_SPAN_ELEMS = 2 ** 31 - 1


def check_binding(sig: Signature, metadata) -> None:
    """The signature's argument list agrees with the code object's explicit kernargs."""
    meta = explicit_args(metadata)
    if len(meta) != len(sig.args):
        raise DeviceError(f"kernel {metadata.name}: signature declares {len(sig.args)} args "
                          f"({', '.join(a.name for a in sig.args)}) but the code object takes {len(meta)}")
    for a, m in zip(sig.args, meta):
        want = "by_value" if a.role == "scalar" else "global_buffer"
        if m.kind != want or (a.role == "scalar" and m.size != SCALAR_BYTES[a.dtype]):
            raise DeviceError(f"kernel {metadata.name}: arg {a.name} ({a.role} {a.dtype}) does not match "
                              f"metadata offset {m.offset}: {m.kind} of {m.size} bytes")


@dataclass
class _View:
    """A host array as the kernel will see it: the bytes of its span and element strides."""
    raw: np.ndarray            # uint8 bytes, no copy unless `copied`
    strides: tuple[int, ...]   # element strides of every dim
    copied: bool


def _view(a: KArg, x, shape: tuple[int, ...]) -> _View:
    if not isinstance(x, np.ndarray):
        raise DeviceError(f"argument {a.name}={type(x).__name__} is not allowed: a numpy array "
                          f"of shape {shape} and storage dtype {a.dtype}")
    allowed = NUMPY_STORAGE[a.dtype]
    if x.dtype not in allowed:
        raise DeviceError(f"argument {a.name}.dtype={x.dtype} is not allowed: {a.dtype} is stored as "
                          f"{' or '.join(str(d) for d in allowed)}")
    if tuple(x.shape) != shape:
        raise DeviceError(f"argument {a.name}.shape={tuple(x.shape)} is not allowed: the signature "
                          f"requires {shape} for this problem")
    item = x.itemsize
    live = [(n, st) for n, st in zip(x.shape, x.strides) if n > 1]
    needs_copy = any(st < 0 or st % item for _, st in live) or (
        x.ndim and x.shape[-1] > 1 and x.strides[-1] != item) or (a.role == "inout" and not x.flags.c_contiguous)
    copied = bool(x.size) and needs_copy
    if copied:
        x = np.ascontiguousarray(x)
    # size-1 dims are never stepped: stride 0 (numpy leaves arbitrary values there)
    strides = tuple(st // item if n > 1 else 0 for n, st in zip(x.shape, x.strides))
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if x.size else 0
    if span > MAX_SPAN_ELEMS:
        raise DeviceError(f"argument {a.name} spans {span} elements, not allowed: kernels index with "
                          f"32 bits (< 2**31 elements per buffer)")
    if not span:
        return _View(np.zeros(0, np.uint8), strides, copied)
    addr = x.__array_interface__["data"][0]
    raw = np.frombuffer((ctypes.c_uint8 * (span * item)).from_address(addr), np.uint8)
    return _View(raw, strides, copied)


@dataclass
class Prepared:
    """Device buffers bound to one (kernel, signature, problem); launch it any number of times."""
    compiled: object
    sig: Signature
    problem: Problem
    device: Device
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)
    copied: tuple[str, ...] = ()

    def __post_init__(self):
        sig, problem = self.sig, dict(self.problem)
        check_binding(sig, self.compiled.metadata)
        unknown = set(self.arrays) - set(sig.inputs)
        if unknown:
            raise DeviceError(f"arrays {sorted(unknown)} are not allowed: kernel {sig.kernel} takes inputs "
                              f"{', '.join(sig.inputs) or '(none)'}")
        self.shapes = sig.shapes(problem)
        views: dict[str, _View] = {}
        for a in sig.buffers:                       # check every input before allocating
            if a.role in ("in", "inout"):
                if a.name not in self.arrays:
                    raise DeviceError(f"argument {a.name} is missing: kernel {sig.kernel} needs it "
                                      f"(shape {self.shapes[a.name]}, {a.dtype})")
                views[a.name] = _view(a, self.arrays[a.name], self.shapes[a.name])
        self.copied = tuple(n for n, v in views.items() if v.copied)
        owners = sig.stride_owner()
        self.bufs: dict[str, Buffer] = {}
        self.values: list = []
        try:
            for a in sig.args:
                if a.role == "scalar":
                    self.values.append(self._scalar(a, owners, views, problem))
                    continue
                v = views.get(a.name)
                nbytes = v.raw.nbytes if v is not None else a.nbytes(problem)
                buf = self.device.alloc(max(nbytes, 4))
                self.bufs[a.name] = buf
                if v is not None:
                    self.device.copy_in(buf, v.raw)
                else:
                    self.device.copy_in(buf, (b"\x7f" if a.init == "poison" else b"\0") * nbytes)
                self.values.append(buf)
        except BaseException:
            self.close()
            raise
        self.views = views

    def _scalar(self, a: KArg, owners, views, problem):
        if a.name in owners:
            bname, dim = owners[a.name]
            if bname in views:
                v = views[bname].strides[dim]
            else:   # launcher-allocated buffers are C-contiguous
                shape = self.shapes[bname]
                v = int(np.prod(shape[dim + 1:], dtype=np.int64))
        elif a.value is not None:
            v = a.value(problem)
        else:
            raise DeviceError(f"scalar {a.name} of kernel {self.sig.kernel} has no value source")
        if a.dtype == "i32" and not -2 ** 31 <= int(v) < 2 ** 31:
            raise DeviceError(f"scalar {a.name}={v} is not allowed: it must fit a signed 32-bit kernel argument")
        return int(v) if a.dtype == "i32" else float(v)

    @property
    def grid(self) -> tuple[int, int, int]:
        return tuple(int(g) for g in self.sig.grid(self.problem))

    def launch(self) -> Timing:
        t = self.device.launch(self.compiled, self.grid, self.sig.block, self.values)
        self.device.sync()
        return t

    def read(self, names: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
        """Host copies of the out/inout buffers (storage dtype, signature shape)."""
        out = {}
        for name in (self.sig.outputs if names is None else names):
            a = self.sig.arg(name)
            shape = self.shapes[name]
            nbytes = a.nbytes(self.problem)
            raw = self.device.copy_out(self.bufs[name], nbytes)
            out[name] = np.frombuffer(raw, NUMPY_STORAGE[a.dtype][0]).reshape(shape).copy()
        return out

    def close(self) -> None:
        for buf in self.bufs.values():
            try:
                self.device.free(buf)
            except DeviceError:
                pass
        self.bufs = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def launch(compiled, sig: Signature, problem: Problem, device: Device,
           arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], Timing]:
    """Upload, launch once, read back every output, free. Nothing is launched when any
    argument is wrong (the error names the argument, what was given and what is required)."""
    with Prepared(compiled, sig, problem, device, arrays) as run:
        timing = run.launch()
        return run.read(), timing


def random_inputs(sig: Signature, problem: Problem, seed: int = 0) -> dict[str, np.ndarray]:
    """Random bytes (0..127 each: finite in every float format) for every input of `sig`,
    shaped by it -- what a timer feeds a kernel whose results it never reads."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in sig.inputs:
        dt = NUMPY_STORAGE[sig.arg(name).dtype][0]
        shape = sig.shapes(problem)[name]
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        out[name] = rng.integers(0, 128, n, dtype=np.uint8).view(dt).reshape(shape)
    return out


def contiguous_scalars(sig: Signature, problem: Problem) -> list:
    """The scalar kernel arguments, in order, for C-contiguous buffers of `problem` (for
    callers that drive Device.launch by hand, e.g. the Device contract tests)."""
    shapes, owners = sig.shapes(problem), sig.stride_owner()
    out = []
    for a in sig.args:
        if a.role != "scalar":
            continue
        if a.name in owners:
            bname, dim = owners[a.name]
            out.append(int(np.prod(shapes[bname][dim + 1:], dtype=np.int64)) if shapes[bname][dim] > 1 else 0)
        else:
            out.append(a.value(problem))
    return out
