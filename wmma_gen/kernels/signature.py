"""A kernel's arguments, declared once by the kernel source (STYLE rule 15).

Every builder returns its MLIR together with a `Signature`: per argument its name, role,
storage dtype and a shape function of the *problem* (a plain mapping of runtime sizes such
as {"m": .., "n": .., "k": .., "batch": ..}). The launcher (device/launcher.py), the
correctness gate, the timer and the ops API read buffer sizes from here and nowhere else.

Roles:
  in         host array -> device before the launch
  out        allocated by the launcher (poisoned), read back after the launch
  inout      host array -> device, read back after
  workspace  allocated by the launcher, filled with `init`, never read back
  scalar     a by-value kernel argument: `value(problem)`, or the element stride of a
             buffer dimension when a buffer names it in `strides`

Argument order is the kernel function's argument order (the order of `.args` in the code
object metadata); the launcher checks each one against the metadata's value kind and size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

from ..errors import ScheduleError

ROLES = ("in", "out", "inout", "workspace", "scalar")
Problem = Mapping[str, int]

# names of the numpy dtypes a host array of each storage dtype may have (same bytes, any
# signedness); names, so that builders declare signatures without importing numpy (the
# launcher, device/launcher.py, makes them dtypes)
STORAGE: dict[str, tuple[str, ...]] = {
    "f16": ("float16",), "bf16": ("uint16", "int16"), "f32": ("float32",), "i32": ("int32", "uint32"),
    "i8": ("int8", "uint8"), "i4": ("uint8", "int8"), "fp8": ("uint8",), "bf8": ("uint8",),
}
STORAGE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i8": 1, "i4": 1, "fp8": 1, "bf8": 1}   # i4: packed bytes
SCALAR_BYTES = {"i32": 4, "f32": 4}


@dataclass(frozen=True)
class KArg:
    """One kernel argument. Buffers have `shape`; scalars have `value` or are named by a
    buffer's `strides` (then the launcher fills them from the host array's strides)."""
    name: str
    role: str
    dtype: str
    shape: Callable[[Problem], tuple[int, ...]] | None = None
    value: Callable[[Problem], "int | float"] | None = None
    strides: tuple[str, ...] = ()   # scalar arg names receiving the element strides of dims 0..n-2
    init: str = "poison"            # out / workspace fill: "poison" (0x7f bytes) or "zero"
    offset_bits: int | None = None  # the kernel addresses the buffer with unsigned byte offsets of
    #   this many bits (32: the saddr form, kernels/global_tensor.py): `Signature.shapes` refuses a
    #   problem whose buffer has more than 2**offset_bits bytes

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"KArg {self.name}: role={self.role!r} is not allowed: one of {', '.join(ROLES)}")
        if self.role == "scalar":
            if self.dtype not in SCALAR_BYTES:
                raise ValueError(f"KArg {self.name}: scalar dtype={self.dtype!r}: one of {', '.join(SCALAR_BYTES)}")
        elif self.dtype not in STORAGE or self.shape is None:
            raise ValueError(f"KArg {self.name}: a buffer needs a storage dtype in {', '.join(STORAGE)} "
                             f"and a shape function (got dtype={self.dtype!r})")
        if self.init not in ("poison", "zero"):
            raise ValueError(f"KArg {self.name}: init={self.init!r}: 'poison' or 'zero'")
        if self.offset_bits is not None and (self.role == "scalar" or self.offset_bits not in (32, 64)):
            raise ValueError(f"KArg {self.name}: offset_bits={self.offset_bits!r}: None, or 32 / 64 on a buffer")

    @property
    def is_buffer(self) -> bool:
        return self.role != "scalar"

    def nbytes(self, problem: Problem) -> int:
        return math.prod(int(x) for x in self.shape(problem)) * STORAGE_BYTES[self.dtype]


@dataclass(frozen=True)
class Signature:
    """The kernel's arguments in order, its grid as a function of the problem, its block."""
    kernel: str
    args: tuple[KArg, ...]
    grid: Callable[[Problem], tuple[int, int, int]]
    block: tuple[int, int, int]

    def __post_init__(self):
        names = [a.name for a in self.args]
        if len(set(names)) != len(names):
            raise ValueError(f"Signature {self.kernel}: duplicate argument names {names}")
        scalars = {a.name for a in self.args if a.role == "scalar"}
        for a in self.args:
            for s in a.strides:
                if s not in scalars:
                    raise ValueError(f"Signature {self.kernel}: {a.name}.strides names {s!r}, not a scalar arg")

    def arg(self, name: str) -> KArg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)

    @property
    def buffers(self) -> tuple[KArg, ...]:
        return tuple(a for a in self.args if a.is_buffer)

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if a.role in ("in", "inout"))

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if a.role in ("out", "inout"))

    def shapes(self, problem: Problem) -> dict[str, tuple[int, ...]]:
        """Stored shape of every buffer for `problem` -- the one place sizes come from. A buffer
        whose bytes exceed what its byte offsets reach (KArg.offset_bits) is refused here."""
        out = {a.name: tuple(int(x) for x in a.shape(problem)) for a in self.buffers}
        for a in self.buffers:
            nbytes = a.nbytes(problem)
            if a.offset_bits is not None and nbytes > 2 ** a.offset_bits:
                raise ScheduleError(f"{self.kernel} argument {a.name}", f"{out[a.name]} {a.dtype} = {nbytes} bytes",
                                    f"at most 2**{a.offset_bits} = {2 ** a.offset_bits} bytes: the kernel reaches "
                                    f"it with unsigned {a.offset_bits}-bit byte offsets (kernels/global_tensor.py)")
        return out

    def stride_owner(self) -> dict[str, tuple[str, int]]:
        """scalar name -> (buffer name, dim) for scalars that receive a buffer stride."""
        return {s: (a.name, i) for a in self.buffers for i, s in enumerate(a.strides)}


@dataclass(frozen=True)
class KernelSource:
    """What every builder returns: the MLIR module text and how to call the kernel."""
    name: str
    mlir: str
    arch: str
    signature: Signature
