"""The one launch path: Signature + code object metadata + operands -> a launch.

Two ways in, one binding underneath (`bind`):

    launch_into(compiled, signature, problem, device, operands, stream=None)
        operands: {name: Operand} for EVERY buffer argument (in, out, inout, workspace), already
        on the device (device/operand.py: torch tensors, DLPack, numpy arrays). No alloc, no
        copy, no sync: one enqueue on `stream` (the caller's; None = the device's own).

    with Prepared(compiled, signature, problem, device, arrays) as run:   # numpy host arrays
        timing = run.launch()          # as often as needed (the timer launches repeatedly)
        outputs = run.read()           # {name: numpy array} for every out/inout argument
    launch(compiled, signature, problem, device, arrays) -> (outputs, timing)   # one shot

`bind` checks before anything is allocated or launched: every argument of the signature
matches the kernel's metadata `.args` (buffers are global_buffer, scalars by_value of their
size); every operand has the dtype and shape the signature requires, lives on one device,
has a unit inner stride and non-negative strides, and dims without a stride argument are
C-contiguous; an output does not overlap itself (stride 0). Element strides go to the stride
scalars (a batch broadcast with stride 0 costs nothing). Index math in the kernels is 32-bit
(compiler/pipeline.py), so every operand's span must stay below 2**31 elements.

The numpy path uploads each array's span as viewed (strides kept); a view the kernel cannot
address (non-unit inner stride, negative stride, a stride on a dim without a stride argument)
is copied once to C order first, and that copy lives as long as the Prepared (`copied` lists
them).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..errors import DeviceError
from ..kernels.signature import SCALAR_BYTES, STORAGE, KArg, Problem, Signature
from .base import Buffer, Device, Timing
from .kernargs import explicit_args
from .operand import Operand, as_operand

MAX_SPAN_ELEMS = 2 ** 31 - 1
# numpy dtypes a host array of each storage dtype may have (kernels/signature.STORAGE)
NUMPY_STORAGE = {name: tuple(np.dtype(t) for t in types) for name, types in STORAGE.items()}
# operand dtypes each storage dtype accepts (same bytes)
ACCEPTS = {"f16": ("f16",), "bf16": ("bf16",), "f32": ("f32",), "i32": ("i32",), "i8": ("i8", "u8"),
           "i4": ("u8", "i8"), "fp8": ("u8", "fp8"), "bf8": ("u8", "bf8")}


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


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.insert(0, acc if n > 1 else 0)
        acc *= n
    return tuple(out)


def layout_problem(a: KArg, shape: tuple[int, ...], strides: tuple[int, ...]) -> str:
    """Why the kernel cannot address an operand of `strides` for argument `a` ("" if it can)."""
    if 0 in shape:              # nothing is addressed (Sq = 0, Sk = 0, ...): any strides will do
        return ""
    st = tuple(s if n > 1 else 0 for n, s in zip(shape, strides))
    if any(s < 0 for s in st):
        return f"negative strides {strides}"
    if st and shape[-1] > 1 and st[-1] != 1:
        return f"inner stride {strides[-1]} (the last dim must be contiguous)"
    free = len(a.strides)               # dims 0..free-1 take any stride, the rest are C order
    want = _contiguous(shape)
    if any(s != w for s, w in zip(st[free:], want[free:])):
        return (f"strides {strides} (dims {free}.. must be C-contiguous {want[free:]}"
                + (": this argument takes no strides" if not free else "") + ")")
    if a.role in ("out", "inout", "workspace") and any(n > 1 and s == 0 for n, s in zip(shape, st)):
        return f"stride 0 on an output dim (strides {strides}): elements would overlap"
    return ""


@dataclass(frozen=True)
class Bound:
    """One launch, checked: explicit kernarg values in order, grid, and the operands' devices."""
    values: tuple
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    device: str                                  # "cpu" or "rocm:<id>" of every operand
    host_spans: tuple[tuple[int, int], ...]      # byte ranges of CPU operands (emulator mapping)
    span_offsets: tuple = ()                     # (name, lo - ptr, hi - ptr) of each CPU operand span


def _scalar(sig: Signature, a: KArg, owners, ops: Mapping[str, Operand], problem) -> "int | float":
    if a.name in owners:
        bname, dim = owners[a.name]
        op = ops[bname]
        v = op.strides[dim] if op.shape[dim] > 1 else 0
    elif a.value is not None:
        v = a.value(problem)
    else:
        raise DeviceError(f"scalar {a.name} of kernel {sig.kernel} has no value source")
    if a.dtype == "i32" and not -2 ** 31 <= int(v) < 2 ** 31:
        raise DeviceError(f"scalar {a.name}={v} is not allowed: it must fit a signed 32-bit kernel argument")
    if a.dtype == "f32" and not abs(float(v)) <= float(np.finfo(np.float32).max):
        raise DeviceError(f"scalar {a.name}={v} is not allowed: a finite value in the f32 range")
    return int(v) if a.dtype == "i32" else float(v)


def bind(compiled, sig: Signature, problem: Problem, operands: Mapping[str, object]) -> Bound:
    """Check `operands` against the signature and the code object; nothing is launched."""
    check_binding(sig, compiled.metadata)
    unknown = set(operands) - {a.name for a in sig.buffers}
    if unknown:
        raise DeviceError(f"operands {sorted(unknown)} are not allowed: kernel {sig.kernel} takes buffers "
                          f"{', '.join(a.name for a in sig.buffers)}")
    shapes = sig.shapes(problem)
    ops: dict[str, Operand] = {}
    for a in sig.buffers:
        if a.name not in operands:
            raise DeviceError(f"argument {a.name} is missing: kernel {sig.kernel} needs it "
                              f"({a.role}, shape {shapes[a.name]}, {a.dtype})")
        op = as_operand(operands[a.name], a.name)
        if op.dtype not in ACCEPTS[a.dtype]:
            raise DeviceError(f"argument {a.name}.dtype={op.dtype} is not allowed: {a.dtype} is stored as "
                              f"{' or '.join(ACCEPTS[a.dtype])}")
        if op.shape != shapes[a.name]:
            raise DeviceError(f"argument {a.name}.shape={op.shape} is not allowed: the signature requires "
                              f"{shapes[a.name]} for this problem")
        if a.role != "in" and isinstance(op.owner, np.ndarray) and not op.owner.flags.writeable:
            raise DeviceError(f"argument {a.name} is a read-only numpy array, not allowed for an "
                              f"{a.role} argument: the kernel writes it")
        why = layout_problem(a, op.shape, op.strides)
        if why:
            raise DeviceError(f"argument {a.name} is not allowed with {why}; pass a contiguous copy")
        lo, hi = op.span()
        if (hi - lo) // op.itemsize > MAX_SPAN_ELEMS:
            raise DeviceError(f"argument {a.name} spans {(hi - lo) // op.itemsize} elements, not allowed: "
                              "kernels index with 32 bits (< 2**31 elements per buffer)")
        ops[a.name] = op
    where = {op.where() for op in ops.values()}
    if len(where) > 1:
        raise DeviceError("operands on different devices are not allowed: "
                          + ", ".join(f"{n} on {op.where()}" for n, op in ops.items()))
    owners = sig.stride_owner()
    values = tuple(_scalar(sig, a, owners, ops, problem) if a.role == "scalar" else ops[a.name].ptr
                   for a in sig.args)
    cpu = [(n, op, op.span()) for n, op in ops.items() if op.device == "cpu" and op.size]
    return Bound(values, tuple(int(g) for g in sig.grid(problem)), sig.block,
                 where.pop() if where else "cpu", tuple(sp for _, _, sp in cpu),
                 tuple((n, lo - op.ptr, hi - op.ptr) for n, op, (lo, hi) in cpu))


def launch_into(compiled, sig: Signature, problem: Problem, device: Device, operands: Mapping[str, object],
                stream=None) -> Bound:
    """Bind and enqueue once on `stream`; outputs land in the caller's operands. Returns the
    Bound (relaunch it with device.enqueue(compiled, b.grid, b.block, b.values, ...))."""
    b = bind(compiled, sig, problem, operands)
    if 0 in b.grid:                 # an empty problem (Sq = 0, M = 0, ...): nothing to run
        return b
    device.enqueue(compiled, b.grid, b.block, b.values, stream=stream, host_spans=b.host_spans)
    return b


# ---- numpy host arrays: upload, bind, launch, read back --------------------------------------
def _host_operand(a: KArg, x, shape: tuple[int, ...]) -> tuple[np.ndarray, Operand]:
    """(the host array to upload -- x or one C-order copy of it, its Operand view)."""
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
    odd = any(n > 1 and st % item for n, st in zip(x.shape, x.strides))
    strides = tuple(st // item if n > 1 else 0 for n, st in zip(x.shape, x.strides))
    if x.size and (odd or layout_problem(a, x.shape, strides)):
        x = np.ascontiguousarray(x)
        strides = _contiguous(x.shape)
    op = Operand(int(x.__array_interface__["data"][0]), tuple(x.shape), strides, ACCEPTS[a.dtype][0], "cpu", 0,
                 x, a.name)
    return x, op


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
        hosts: dict[str, tuple[np.ndarray, Operand]] = {}
        for a in sig.buffers:                       # check every input before allocating
            if a.role in ("in", "inout"):
                if a.name not in self.arrays:
                    raise DeviceError(f"argument {a.name} is missing: kernel {sig.kernel} needs it "
                                      f"(shape {self.shapes[a.name]}, {a.dtype})")
                hosts[a.name] = _host_operand(a, self.arrays[a.name], self.shapes[a.name])
        self.copied = tuple(n for n, (x, _) in hosts.items() if x is not self.arrays[n])
        self.bufs: dict[str, Buffer] = {}
        operands: dict[str, Operand] = {}
        try:
            for a in sig.buffers:
                storage = ACCEPTS[a.dtype][0]
                if a.name in hosts:
                    x, hop = hosts[a.name]
                    lo, hi = hop.span()
                    buf = self._alloc(a.name, hi - lo)
                    if hi > lo:   # the bytes the view covers, from its lowest address (strides >= 0)
                        self.device.copy_in(buf, _host_bytes(lo, hi))
                    operands[a.name] = Operand(buf.addr, hop.shape, hop.strides, storage, "cpu", 0, buf, a.name)
                else:
                    nbytes = a.nbytes(problem)
                    buf = self._alloc(a.name, nbytes)
                    self.device.copy_in(buf, (b"\x7f" if a.init == "poison" else b"\0") * nbytes)
                    operands[a.name] = Operand(buf.addr, self.shapes[a.name], _contiguous(self.shapes[a.name]),
                                               storage, "cpu", 0, buf, a.name)
            self.bound = bind(self.compiled, sig, problem, operands)
        except BaseException:
            self.close()
            raise
        self._keep = hosts                           # copies live as long as the buffers

    def _alloc(self, name: str, nbytes: int) -> Buffer:
        buf = self.device.alloc(max(nbytes, 4))
        self.bufs[name] = buf
        return buf

    @property
    def values(self) -> list:
        """Kernel argument values: the Buffers (checked live by the device) and scalars."""
        return [self.bufs[a.name] if a.is_buffer else v for a, v in zip(self.sig.args, self.bound.values)]

    @property
    def grid(self) -> tuple[int, int, int]:
        return self.bound.grid

    def launch(self) -> Timing:
        if 0 in self.grid:          # an empty problem: no workgroup to run, outputs stay as allocated
            return Timing(0.0, getattr(self.device, "source", "emulator"), "empty grid: nothing launched")
        t = self.device.launch(self.compiled, self.grid, self.sig.block, self.values)
        self.device.sync()
        return t

    def read(self, names: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
        """Host copies of the out/inout buffers (storage dtype, signature shape)."""
        out = {}
        for name in (self.sig.outputs if names is None else names):
            a = self.sig.arg(name)
            raw = self.device.copy_out(self.bufs[name], a.nbytes(self.problem))
            out[name] = np.frombuffer(raw, NUMPY_STORAGE[a.dtype][0]).reshape(self.shapes[name]).copy()
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


def _host_bytes(lo: int, hi: int) -> np.ndarray:
    """The host bytes [lo, hi) as uint8, without a copy (the caller keeps their owner alive)."""
    return np.frombuffer((ctypes.c_uint8 * (hi - lo)).from_address(lo), np.uint8)


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
